#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace capsim {

// Time compute of `work_s` started at `start_s` takes when it keeps only `rate` of its
// throughput until `busy_until_s` (collectives on the wire hold SMs; models/overlap.hpp) and
// all of it after.
inline double slowed_compute_s(double start_s, double work_s, double busy_until_s, double rate) {
  if (busy_until_s <= start_s || rate >= 1.0)
    return work_s;
  const double overlapped_work_s = (busy_until_s - start_s) * rate;
  if (work_s <= overlapped_work_s)
    return work_s / rate;
  return (busy_until_s - start_s) + (work_s - overlapped_work_s);
}

// The distributed optimizer's parameter gather beside the next forward (Megatron-Core
// overlap_param_gather): after the step the buckets are gathered one after another in forward
// order (`gather_end_s[k]`: when bucket k is done, counted from the step's end), and the
// forward, which starts `slack_s` after the step's end anyway (a later pipeline stage), runs
// the layers of bucket k (`forward_share[k]` of its `forward_s`; 0 for buckets of later
// chunks) once that bucket is gathered (the forward pre-hook waits for it), at `rate` while
// gathers are still on the wire. Returns how much later than slack_s + forward_s the forward
// ends, or the last gather when that is later. One bucket: max(0, gather - slack). Many small
// buckets: the gather streams ahead, slowing the forward only.
// REQUIRES: gather_end_s non-decreasing, forward_share.size() == gather_end_s.size().
inline double param_gather_exposed_s(const std::vector<double>& gather_end_s,
                                     const std::vector<double>& forward_share, double forward_s,
                                     double slack_s, double rate) {
  if (gather_end_s.empty())
    return 0.0;
  const double all_gathered_s = gather_end_s.back();
  double t = slack_s;
  for (std::size_t k = 0; k < gather_end_s.size(); ++k) {
    t = std::max(t, gather_end_s[k]);
    t += slowed_compute_s(t, forward_share[k] * forward_s, all_gathered_s, rate);
  }
  return std::max(0.0, t - slack_s - forward_s);
}

}  // namespace capsim
