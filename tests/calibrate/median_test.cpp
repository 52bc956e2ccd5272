#include "calibrate/median.hpp"

#include <gtest/gtest.h>

namespace capsim::calibrate {
namespace {

TEST(MedianTest, MiddleValueOfAnOddCountInAnyOrder) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({7.5}), 7.5);
}

TEST(MedianTest, MeanOfTheMiddleTwoOfAnEvenCount) {
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 2.0, 3.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({-1.0, 1.0}), 0.0);
}

// One slow repeat among fast ones does not move it (why repeated timings use it).
TEST(MedianTest, IgnoresOneOutlier) {
  EXPECT_DOUBLE_EQ(median({1.0, 1.0, 1.0, 1.0, 100.0}), 1.0);
}

}  // namespace
}  // namespace capsim::calibrate
