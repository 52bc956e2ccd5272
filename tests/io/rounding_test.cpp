#include "io/rounding.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace capsim::io {
namespace {

// Halves go away from zero: binary sizes in GiB are often exact halves (2.390625 = 2 + 25/64).
TEST(RoundSignificantTest, RoundsHalvesAwayFromZero) {
  EXPECT_EQ(round_significant(2.390625), 2.39063);
  EXPECT_EQ(round_significant(-2.390625), -2.39063);
  EXPECT_EQ(round_significant(1234565.0), 1234570.0);
}

TEST(RoundSignificantTest, KeepsTheGivenSignificantDigits) {
  EXPECT_EQ(round_significant(3.14159265), 3.14159);
  EXPECT_EQ(round_significant(0.000123456789), 0.000123457);
  EXPECT_EQ(round_significant(-2.718281828, 4), -2.718);
  EXPECT_EQ(round_significant(4519798.0), 4519800.0);
}

// The digits read back are printf's %.*g digits, whatever the magnitude and digit count.
TEST(RoundSignificantTest, AgreesWithPrintfAndStrtodOnRandomValues) {
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> mantissa(-10.0, 10.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  std::uniform_int_distribution<int> digits(1, 17);
  for (int i = 0; i < 20000; ++i) {
    const double value = mantissa(rng) * std::pow(10.0, exponent(rng));
    const int d = digits(rng);
    const double magnitude = std::floor(std::log10(std::fabs(value))) + 1.0;
    const double scale = std::pow(10.0, d - magnitude);
    if (!std::isfinite(scale))
      continue;
    const double rounded = std::round(value * scale) / scale;
    char text[64];
    std::snprintf(text, sizeof text, "%.*g", d, rounded);
    ASSERT_EQ(round_significant(value, d), std::strtod(text, nullptr)) << value << " " << d;
  }
}

// Large and tiny magnitudes give the double nearest the decimal, so JSON shows no noise digits
// (6.47834e10 computed as (v / 10^5) * 10^5 would be 64783399999.999992).
TEST(RoundSignificantTest, GivesTheNearestDoubleAtEveryMagnitude) {
  EXPECT_EQ(round_significant(64783371564.041763), 64783400000.0);
  EXPECT_EQ(nlohmann::json(round_significant(64783371564.041763)).dump(), "64783400000.0");
  EXPECT_EQ(round_significant(1.23456789e-30), 1.23457e-30);
  EXPECT_EQ(round_significant(9.87654321e250), 9.87654e250);
}

// A value read back from a written file rounds to itself: regenerated files are byte-identical.
TEST(RoundSignificantTest, IsIdempotent) {
  for (const double v : {0.123456789, 98765.4321, 1e-7 / 3.0, 7.0 / 3.0 * 1e12}) {
    const double once = round_significant(v);
    EXPECT_EQ(round_significant(once), once) << v;
  }
}

TEST(RoundSignificantTest, ZeroAndNonFiniteValuesPassThrough) {
  EXPECT_EQ(round_significant(0.0), 0.0);
  EXPECT_EQ(round_significant(std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(round_significant(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(round_significant(std::numeric_limits<double>::denorm_min()),
            std::numeric_limits<double>::denorm_min());
}

// Decimals past the point, not significant digits: large totals keep every integer digit.
TEST(RoundDecimalsTest, KeepsDecimalsPastThePoint) {
  EXPECT_EQ(round_decimals(1748980.123456789, 6), 1748980.123457);
  EXPECT_EQ(round_decimals(0.1234565001, 6), 0.123457);
  EXPECT_EQ(round_decimals(2.5, 0), 3.0);
  EXPECT_EQ(round_decimals(-2.5, 0), -3.0);
  EXPECT_EQ(round_decimals(1e-9, 6), 0.0);
}

}  // namespace
}  // namespace capsim::io
