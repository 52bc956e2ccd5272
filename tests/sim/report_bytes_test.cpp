// ReportWriter / ReportReader: what a forked child hands back arrives bit for bit, and a report
// that ends early or runs long is an error, not a silent zero.
#include "sim/report_bytes.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace capsim::sim {
namespace {

// Doubles whose decimal text at 6 or even 15 significant digits would not read back the same.
std::vector<double> awkward_doubles() {
  std::vector<double> out = {0.1 + 0.2,
                             -0.0,
                             1.0 / 3.0,
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::max(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             std::nextafter(1.0, 2.0)};
  std::mt19937_64 rnd(301);
  for (int i = 0; i < 1000; ++i)
    out.push_back(std::bit_cast<double>(rnd()));  // any bit pattern, NaN payloads included
  return out;
}

TEST(ReportBytesTest, DoublesRoundTripBitForBit) {
  const std::vector<double> values = awkward_doubles();
  ReportWriter out;
  for (const double v : values)
    out.put_double(v);
  EXPECT_EQ(out.bytes().size(), values.size() * sizeof(double));
  ReportReader in(out.bytes());
  for (const double v : values)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(in.get_double()), std::bit_cast<std::uint64_t>(v));
  EXPECT_NO_THROW(in.finish());
}

TEST(ReportBytesTest, IntsAndStringsRoundTripInOrder) {
  const std::string binary("a\0b\nc", 5);  // a NUL and a newline are just bytes
  ReportWriter out;
  out.put_int(std::numeric_limits<std::int64_t>::min());
  out.put_string(binary);
  out.put_string("");
  out.put_int(-7);
  out.put_double(2.5);
  ReportReader in(out.bytes());
  EXPECT_EQ(in.get_int(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(in.get_string(), binary);
  EXPECT_EQ(in.get_string(), "");
  EXPECT_EQ(in.get_int(), -7);
  EXPECT_EQ(in.get_double(), 2.5);
  EXPECT_NO_THROW(in.finish());
}

TEST(ReportBytesTest, AShortReportThrows) {
  ReportWriter out;
  out.put_double(1.0);
  out.put_string("notes");
  const std::string& full = out.bytes();
  for (size_t size = 0; size < full.size(); ++size) {
    ReportReader in(std::string_view(full).substr(0, size));
    EXPECT_THROW(
        {
          (void)in.get_double();
          (void)in.get_string();
        },
        std::runtime_error)
        << size << " bytes";
  }
}

TEST(ReportBytesTest, AStringLengthPastTheEndThrows) {
  ReportWriter out;
  out.put_int(1000);  // a length with no bytes behind it
  ReportReader in(out.bytes());
  EXPECT_THROW((void)in.get_string(), std::runtime_error);
  ReportWriter negative;
  negative.put_int(-1);
  ReportReader in_negative(negative.bytes());
  EXPECT_THROW((void)in_negative.get_string(), std::runtime_error);
}

TEST(ReportBytesTest, BytesPastTheEndThrowAtFinish) {
  ReportWriter out;
  out.put_double(1.0);
  out.put_double(2.0);
  ReportReader in(out.bytes());
  EXPECT_EQ(in.get_double(), 1.0);
  EXPECT_THROW(in.finish(), std::runtime_error);
}

}  // namespace
}  // namespace capsim::sim
