#pragma once

// Time units: NCCL's and the hardware's latencies are published in microseconds; capsim counts
// seconds.

namespace capsim {

inline constexpr double kUs = 1e-6;  // one microsecond, in seconds

}  // namespace capsim
