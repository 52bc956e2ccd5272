#include "calibrate/median.hpp"

#include <algorithm>

namespace capsim::calibrate {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace capsim::calibrate
