// Go durations as Kubernetes controllers and cluster-autoscaler flags write them.
#include "io/go_duration.hpp"

#include <gtest/gtest.h>

namespace capsim::io {
namespace {

TEST(GoDurationTest, ParsesGoSpellings) {
  EXPECT_EQ(parse_go_duration("90s"), 90.0);
  EXPECT_EQ(parse_go_duration("10m"), 600.0);
  EXPECT_EQ(parse_go_duration("1h30m"), 5400.0);
  EXPECT_EQ(parse_go_duration("1.5h"), 5400.0);
  EXPECT_EQ(parse_go_duration("720h"), 2592000.0);
  EXPECT_EQ(parse_go_duration("300ms"), 0.3);
  EXPECT_EQ(parse_go_duration("0"), 0.0);
  EXPECT_EQ(parse_go_duration("2m0s"), 120.0);
}

TEST(GoDurationTest, RejectsWhatGoRejects) {
  for (const char* bad : {"", "10", "-5m", "10min", "m", "1d", "1h 30m", "10 minutes", "2562048h",
                          "06666666666666666666666666666666666666666666645m"})
    EXPECT_FALSE(parse_go_duration(bad).has_value()) << bad;
  EXPECT_TRUE(parse_go_duration("2562047h").has_value());  // Go's longest whole hours
}

TEST(GoDurationTest, FormatsShortestAndReadsBack) {
  EXPECT_EQ(format_go_duration(0), "0s");
  EXPECT_EQ(format_go_duration(600), "10m");
  EXPECT_EQ(format_go_duration(5430), "1h30m30s");
  EXPECT_EQ(format_go_duration(2592000), "720h");
  EXPECT_EQ(format_go_duration(1.5), "1.5s");
  for (double s : {0.0, 1.0, 59.0, 61.0, 3599.0, 3601.0, 86400.0, 0.25, 12345.5})
    EXPECT_EQ(parse_go_duration(format_go_duration(s)), s) << s;
}

}  // namespace
}  // namespace capsim::io
