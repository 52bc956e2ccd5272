#pragma once

#include "whatif/detail/cluster.hpp"
#include "whatif/engine.hpp"

namespace capsim::whatif::detail {

// Where allocated GPU time went: busy (held by jobs, in GPU-seconds) and lost to failures,
// interruptions, restarts and checkpoints (GoodputLoss, in GPU-hours).
class GpuLedger {
 public:
  // Counts the time `job` held its live pieces until `now`, and, after a failure, the time
  // those pieces waited for the job to notice (detect_s) as lost.
  void count_held(const Cluster& c, const Job& job, double now);
  // Counts the pieces still held on node `id` up to `now`, before it goes away.
  void count_node_lost(const Cluster& c, int id, double now);
  // Counts a completed restart or checkpoint save of `seconds` on `gpus` as lost.
  void count_restart(double seconds, int gpus) {
    lost_.restart_gpu_hours += seconds * gpus / 3600.0;
  }
  void count_checkpoint(double seconds, int gpus) {
    lost_.checkpoint_gpu_hours += seconds * gpus / 3600.0;
  }
  // Ends the running job's current phase at `now` because its node goes away (`why`, with
  // `notice_s` of warning), and rolls it back: a failure loses the work since the last
  // checkpoint and leaves the job recovering; a notice long enough for an emergency checkpoint
  // keeps the work; otherwise the work since the checkpoint is lost.
  void settle_interruption(Job& job, OffReason why, double notice_s, const FailureModel& f,
                           double now);

  [[nodiscard]] double busy_gpu_s() const { return busy_gpu_s_; }
  [[nodiscard]] const GoodputLoss& lost() const { return lost_; }

 private:
  void end_phase(Job& job, double now);
  void save_in_notice(Job& job, const FailureModel& f);

  double busy_gpu_s_ = 0.0;
  GoodputLoss lost_;
};

}  // namespace capsim::whatif::detail
