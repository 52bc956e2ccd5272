#include "whatif/whatif_config.hpp"

#include <cmath>
#include <random>

namespace capsim::whatif {

double Delay::sample(std::mt19937_64& rng) const {
  std::normal_distribution<double> z(0.0, 1.0);
  const double draw = z(rng);
  if (p95_s <= median_s || median_s <= 0)
    return median_s;
  // Log-normal with the given median and 95th percentile: sigma = ln(p95/median) / 1.6449.
  const double sigma = std::log(p95_s / median_s) / 1.6448536269514722;
  return median_s * std::exp(sigma * draw);
}

}  // namespace capsim::whatif
