#include "io/units.hpp"

#include <gtest/gtest.h>

namespace capsim::io::units {
namespace {

TEST(UnitsTest, BandwidthBitsAndBytesWithSiPrefixes) {
  EXPECT_DOUBLE_EQ(*parse_bandwidth_bytes_per_s("200Gbps"), 25e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_bytes_per_s("25GBps"), 25e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_bytes_per_s("1.6Tb/s"), 200e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_bytes_per_s("12.5GiB/s"), 12.5 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_bytes_per_s("100 Mbps"), 12.5e6);
  EXPECT_DOUBLE_EQ(*parse_bandwidth_bytes_per_s("8bps"), 1.0);
}

TEST(UnitsTest, BandwidthRejectsBareNumbersAndUnknownUnits) {
  EXPECT_FALSE(parse_bandwidth_bytes_per_s("200"));
  EXPECT_FALSE(parse_bandwidth_bytes_per_s("200GHz"));
  EXPECT_FALSE(parse_bandwidth_bytes_per_s("fast"));
  EXPECT_FALSE(parse_bandwidth_bytes_per_s("-5Gbps"));
  EXPECT_FALSE(parse_bandwidth_bytes_per_s("0Gbps"));
  EXPECT_FALSE(parse_bandwidth_bytes_per_s(""));
}

TEST(UnitsTest, ComputeRatesWithDecimalPrefixes) {
  EXPECT_DOUBLE_EQ(*parse_flop_per_s("989TFLOPS"), 989e12);
  EXPECT_DOUBLE_EQ(*parse_flop_per_s("2.25PFLOPS"), 2.25e15);
  EXPECT_DOUBLE_EQ(*parse_flop_per_s("312 TFLOP/s"), 312e12);
  EXPECT_DOUBLE_EQ(*parse_flop_per_s("19.5GFLOPS"), 19.5e9);
  EXPECT_DOUBLE_EQ(*parse_flop_per_s("1e15FLOPS"), 1e15);
}

TEST(UnitsTest, ComputeRatesRejectOtherUnits) {
  EXPECT_FALSE(parse_flop_per_s("989"));
  EXPECT_FALSE(parse_flop_per_s("989TB"));
  EXPECT_FALSE(parse_flop_per_s("989TiFLOPS"));  // FLOP rates have no binary prefixes
  EXPECT_FALSE(parse_flop_per_s("989tflops"));
  EXPECT_FALSE(parse_flop_per_s("0TFLOPS"));
  EXPECT_FALSE(parse_flop_per_s("-1TFLOPS"));
}

TEST(UnitsTest, Durations) {
  EXPECT_DOUBLE_EQ(*parse_duration_s("1.5us"), 1.5e-6);
  EXPECT_DOUBLE_EQ(*parse_duration_s("20ms"), 0.02);
  EXPECT_DOUBLE_EQ(*parse_duration_s("90s"), 90.0);
  EXPECT_DOUBLE_EQ(*parse_duration_s("90min"), 5400.0);
  EXPECT_DOUBLE_EQ(*parse_duration_s("2h"), 7200.0);
  EXPECT_DOUBLE_EQ(*parse_duration_s("30d"), 30 * 86400.0);
  EXPECT_DOUBLE_EQ(*parse_duration_s("1w"), 7 * 86400.0);
  EXPECT_FALSE(parse_duration_s("30"));
  EXPECT_FALSE(parse_duration_s("30 fortnights"));
}

TEST(UnitsTest, SizesDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(*parse_size_bytes("25MB"), 25e6);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("64MiB"), 64.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*parse_size_bytes("512B"), 512.0);
  EXPECT_FALSE(parse_size_bytes("512"));
  EXPECT_FALSE(parse_size_bytes("5Mb"));
}

TEST(UnitsTest, TokenCounts) {
  EXPECT_DOUBLE_EQ(*parse_count("1T"), 1e12);
  EXPECT_DOUBLE_EQ(*parse_count("300B"), 300e9);
  EXPECT_DOUBLE_EQ(*parse_count("50M"), 50e6);
  EXPECT_DOUBLE_EQ(*parse_count("2k"), 2000.0);
  EXPECT_DOUBLE_EQ(*parse_count("1e12"), 1e12);
  EXPECT_DOUBLE_EQ(*parse_count("42"), 42.0);
  EXPECT_FALSE(parse_count("1X"));
}

TEST(UnitsTest, HourlyPrices) {
  EXPECT_DOUBLE_EQ(*parse_price_usd_per_hour("$32.77/h"), 32.77);
  EXPECT_DOUBLE_EQ(*parse_price_usd_per_hour("$0.5/hr"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_price_usd_per_hour("32.77 USD/h"), 32.77);
  EXPECT_FALSE(parse_price_usd_per_hour("32.77"));
  EXPECT_FALSE(parse_price_usd_per_hour("$32.77"));
  EXPECT_FALSE(parse_price_usd_per_hour("$32.77/day"));
}

TEST(UnitsTest, FormatsDurations) {
  EXPECT_EQ(format_duration(0.5), "500.0 ms");
  EXPECT_EQ(format_duration(3.21), "3.210 s");
  EXPECT_EQ(format_duration(2 * 86400.0), "2.00 d");
}

}  // namespace
}  // namespace capsim::io::units
