#include "whatif/detail/gpu_ledger.hpp"

#include <algorithm>

namespace capsim::whatif::detail {

void GpuLedger::count_held(const Cluster& c, const Job& job, double now) {
  busy_gpu_s_ += (now - job.alloc_since) * c.live_gpus(job);
  // GPU-seconds a failed job holds on nodes still up while it waits to notice (detect_s).
  const double detection_gpu_s = job.recovering ? (now - job.failed_at) * c.live_gpus(job) : 0.0;
  lost_.failure_gpu_hours += detection_gpu_s / 3600.0;
}

void GpuLedger::count_node_lost(const Cluster& c, int id, double now) {
  const Node& n = c.node(id);
  for (int j : n.jobs) {
    const Job& job = c.job(j);
    for (const auto& p : job.pieces) {
      if (p.node != id || p.gen != n.gen)
        continue;
      busy_gpu_s_ += (now - job.alloc_since) * p.gpus;
      if (job.recovering)
        lost_.failure_gpu_hours += (now - job.failed_at) * p.gpus / 3600.0;
    }
  }
}

void GpuLedger::settle_interruption(Job& job, OffReason why, double notice_s, const FailureModel& f,
                                    double now) {
  end_phase(job, now);
  const double g = job.gpus;
  if (why == OffReason::kFailure) {
    // Detection time is counted as the job's live pieces are released (count_held).
    lost_.failure_gpu_hours += job.computed_since_ckpt_s * g / 3600.0;
    job.remaining = job.saved_remaining;
    job.recovering = true;
    job.failed_at = now;
    return;
  }
  if (notice_s >= f.checkpoint_cost_s) {
    save_in_notice(job, f);
    return;
  }
  auto& bucket = why == OffReason::kSpot ? lost_.preemption_gpu_hours : lost_.disruption_gpu_hours;
  bucket += job.computed_since_ckpt_s * g / 3600.0;
  job.remaining = job.saved_remaining;
}

// Accounts for exactly the work done in the phase so far: a cut restart or save is lost,
// computing advanced the job.
void GpuLedger::end_phase(Job& job, double now) {
  const double g = job.gpus;
  const double dt = now - job.phase_start;
  switch (job.phase) {
    case Phase::kRestart:
      lost_.restart_gpu_hours += dt * g / 3600.0;
      break;
    case Phase::kCheckpoint:
      lost_.checkpoint_gpu_hours += dt * g / 3600.0;
      break;
    case Phase::kCompute:
      job.computed_since_ckpt_s += dt;
      job.remaining -= dt * job.phase_rate;
      break;
  }
}

// Emergency checkpoint inside the notice: the last checkpoint_cost seconds of computing went
// to the save instead (a save already under way simply completes).
void GpuLedger::save_in_notice(Job& job, const FailureModel& f) {
  if (job.phase == Phase::kCompute) {
    const double save = std::min(f.checkpoint_cost_s, job.computed_since_ckpt_s);
    job.remaining += save * job.phase_rate;
    lost_.checkpoint_gpu_hours += save * static_cast<double>(job.gpus) / 3600.0;
  }
  job.saved_remaining = job.remaining;
}

}  // namespace capsim::whatif::detail
