#pragma once

#include <algorithm>

namespace capsim {

// Time a collective of `comm_s` adds when it runs next to `compute_s` of compute, given that
// compute keeps only `rate` (0..1] of its throughput while the collective runs (its CTAs hold
// SMs; HardwareProfile::collective_sms). While both run, compute advances comm_s x rate; so
// either compute outlasts the collective and is stretched by comm_s x (1 - rate), or the
// collective outlasts the slowed compute and ends comm_s - compute_s after compute would have.
// rate = 1 gives the classic max(0, comm_s - compute_s).
inline double overlapped_exposed_s(double comm_s, double compute_s, double rate) {
  return comm_s - std::min(compute_s, comm_s * rate);
}

}  // namespace capsim
