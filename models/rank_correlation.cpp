#include "models/rank_correlation.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace capsim {

std::vector<double> fractional_ranks(std::span<const double> values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    // Positions i..j (0-based) hold ranks i+1..j+1; each gets their mean.
    const double mean_rank = (static_cast<double>(i + j) / 2.0) + 1.0;
    for (size_t k = i; k <= j; ++k)
      ranks[order[k]] = mean_rank;
    i = j + 1;
  }
  return ranks;
}

double spearman_rank_correlation(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2)
    return 0.0;
  const std::vector<double> rx = fractional_ranks(x);
  const std::vector<double> ry = fractional_ranks(y);
  const double n = static_cast<double>(rx.size());
  const double mean = (n + 1.0) / 2.0;  // the mean of any n fractional ranks
  double sxy = 0.0;
  double sxx = 0.0;
  double syy = 0.0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0.0 || syy == 0.0)
    return 0.0;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace capsim
