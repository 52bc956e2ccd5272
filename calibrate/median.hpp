#pragma once

#include <vector>

namespace capsim::calibrate {

// Returns the median of `values`: the middle one, or the mean of the middle two for an even
// count. Repeated timings are summarised by it, as nccl-tests' and cuBLAS benchmarks' outliers
// (a preempted run, a clock ramp) would pull a mean. REQUIRES: !values.empty()
[[nodiscard]] double median(std::vector<double> values);

}  // namespace capsim::calibrate
