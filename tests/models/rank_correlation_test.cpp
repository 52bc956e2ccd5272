#include "models/rank_correlation.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace capsim {
namespace {

TEST(RankCorrelationTest, TiesShareTheMeanOfTheirRanks) {
  const std::vector<double> v{30.0, 10.0, 20.0, 10.0};
  EXPECT_EQ(fractional_ranks(v), (std::vector<double>{4.0, 1.5, 3.0, 1.5}));
}

TEST(RankCorrelationTest, SameOrderIsOneReversedIsMinusOne) {
  const std::vector<double> x{1.0, 2.0, 3.0, 4.0, 5.0};
  EXPECT_DOUBLE_EQ(spearman_rank_correlation(x, std::vector<double>{2.0, 4.0, 8.0, 16.0, 32.0}),
                   1.0);
  EXPECT_DOUBLE_EQ(spearman_rank_correlation(x, std::vector<double>{5.0, 4.0, 3.0, 2.0, 1.0}),
                   -1.0);
}

// Without ties rho = 1 - 6 sum d^2 / (n (n^2 - 1)): one swap of neighbours in five gives
// 1 - 6 * 2 / 120 = 0.9.
TEST(RankCorrelationTest, OneNeighbourSwapOfFiveIsPointNine) {
  const std::vector<double> x{1.0, 2.0, 3.0, 4.0, 5.0};
  const std::vector<double> y{1.0, 3.0, 2.0, 4.0, 5.0};
  EXPECT_NEAR(spearman_rank_correlation(x, y), 0.9, 1e-12);
}

// A monotone transform of either series leaves the coefficient as it is.
TEST(RankCorrelationTest, InvariantUnderMonotoneTransforms) {
  const std::vector<double> x{0.3, 1.7, 0.9, 2.4, 1.1, 0.2};
  const std::vector<double> y{5.0, 3.0, 4.5, 1.0, 4.0, 6.0};
  std::vector<double> x_exp;
  for (const double v : x)
    x_exp.push_back(std::exp(v));
  EXPECT_DOUBLE_EQ(spearman_rank_correlation(x, y), spearman_rank_correlation(x_exp, y));
  EXPECT_LT(spearman_rank_correlation(x, y), -0.9);
}

TEST(RankCorrelationTest, ConstantOrShortSeriesGiveZero) {
  EXPECT_EQ(spearman_rank_correlation(std::vector<double>{1.0, 1.0, 1.0},
                                      std::vector<double>{1.0, 2.0, 3.0}),
            0.0);
  EXPECT_EQ(spearman_rank_correlation(std::vector<double>{1.0}, std::vector<double>{2.0}), 0.0);
}

}  // namespace
}  // namespace capsim
