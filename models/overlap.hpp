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

// Time compute of `work_s` started at `start_s` takes when it keeps only `rate` of its
// throughput until `busy_until_s` (collectives on the wire hold SMs) and all of it after.
inline double slowed_compute_s(double start_s, double work_s, double busy_until_s, double rate) {
  if (busy_until_s <= start_s || rate >= 1.0)
    return work_s;
  const double overlapped_work_s = (busy_until_s - start_s) * rate;
  if (work_s <= overlapped_work_s)
    return work_s / rate;
  return (busy_until_s - start_s) + (work_s - overlapped_work_s);
}

}  // namespace capsim
