#pragma once

#include <algorithm>

#include "models/overlap.hpp"

namespace capsim {

// The distributed optimizer's parameter gather beside the next forward (Megatron-Core
// overlap_param_gather): after the step the buckets are gathered one after another in forward
// order, and the forward, which starts `slack_s` after the step's end anyway (a later pipeline
// stage), runs the layers of each bucket once that bucket is gathered (the forward pre-hook
// waits for it), at `rate` while gathers are still on the wire (until `all_gathered_s`). Times
// count from the step's end. Feed the buckets in forward order with bucket(); exposed_s() is
// how much later than slack_s + forward_s the forward ends, or the last gather when that is
// later. One bucket: max(0, gather - slack). Many small buckets: the gather streams ahead,
// slowing the forward only.
class ForwardBehindGathers {
 public:
  ForwardBehindGathers(double forward_s, double slack_s, double all_gathered_s, double rate)
      : forward_s_(forward_s),
        slack_s_(slack_s),
        all_gathered_s_(all_gathered_s),
        rate_(rate),
        t_(slack_s) {}

  // The next bucket in forward order: gathered at `gather_end_s` (non-decreasing from call to
  // call), holding `forward_share` of the forward's layers (0 for a later chunk's bucket).
  void bucket(double gather_end_s, double forward_share) {
    t_ = std::max(t_, gather_end_s);
    t_ += slowed_compute_s(t_, forward_share * forward_s_, all_gathered_s_, rate_);
  }

  // `count` buckets in a row, the first gathered at `first_end_s` and each next `gather_s`
  // later, each holding `forward_share` of the forward's layers: the same as `count` calls of
  // bucket(), in constant time. The forward ends the run at the latest of, over the points it
  // may last have waited at (now, or bucket k's gather), that point plus the rest of the run's
  // work from there (completion of a sequence with release times on one machine). From bucket
  // k that is the smaller of two lines in k (work at `rate` throughout, or past the last gather
  // at full speed) whose slopes, gather_s - w / rate and rate times that, share their sign: it
  // is monotone in k and peaks at the run's first or last bucket.
  void bucket_run(double first_end_s, double gather_s, int count, double forward_share) {
    if (count <= 0)
      return;
    const double w = forward_share * forward_s_;
    const auto from = [&](double start_s, double work_s) {
      return start_s + slowed_compute_s(start_s, work_s, all_gathered_s_, rate_);
    };
    const double last_end_s = first_end_s + (count - 1) * gather_s;
    t_ = std::max({from(t_, count * w), from(first_end_s, count * w), from(last_end_s, w)});
  }

  [[nodiscard]] double exposed_s() const {
    return std::max(0.0, std::max(t_, all_gathered_s_) - slack_s_ - forward_s_);
  }

 private:
  double forward_s_;
  double slack_s_;
  double all_gathered_s_;
  double rate_;
  double t_;  // when the forward has done the layers of the buckets fed so far
};

}  // namespace capsim
