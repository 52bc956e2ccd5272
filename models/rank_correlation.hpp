#pragma once

#include <span>
#include <vector>

namespace capsim {

// Ranks of `values`, 1 for the smallest; tied values share the mean of the ranks they span
// (the convention Spearman's coefficient uses with ties).
[[nodiscard]] std::vector<double> fractional_ranks(std::span<const double> values);

// Spearman's rank correlation of two equally long series: Pearson's correlation of their
// fractional ranks, in [-1, 1]. 0 when either series has every value equal or fewer than two.
[[nodiscard]] double spearman_rank_correlation(std::span<const double> x,
                                               std::span<const double> y);

}  // namespace capsim
