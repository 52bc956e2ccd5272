#include "whatif/detail/job_attempt.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "whatif/detail/placement.hpp"

namespace capsim::whatif::detail {
namespace {

double checkpoint_interval(const RunState& run, const Job& job) {
  const auto& f = run.w.failures;
  if (f.young_daly) {
    // Young (CACM 1974): tau = sqrt(2 * C * M), M = the job's MTBF = GPU MTBF / GPUs.
    return std::max(kMinCheckpointIntervalS,
                    std::sqrt(2.0 * f.checkpoint_cost_s * f.gpu_mtbf_s / job.gpus));
  }
  return f.checkpoint_interval_s;
}

// The phase start and rate are kept so that an interruption can account for exactly the work
// done so far.
void enter(Job& job, Phase phase, double rate) {
  job.phase = phase;
  job.phase_start = RunState::now();
  job.phase_rate = rate;
}

// Elastic jobs resize at checkpoints: shrink to the minimum when others wait, grow into free
// GPUs of the pool when nobody waits (Pollux-style, without its goodput model).
bool resize_at_checkpoint(RunState& run, int j) {
  Job& job = run.cluster.job(j);
  std::vector<Piece> place;
  if (!find_resize(run.cluster, job, !run.queue.empty(), place))
    return false;
  const int pool = job.pool;
  run.release(j);
  take(run.cluster, j, pool, place, run.now());
  job.resized = true;
  ++run.result.job_resizes;
  return true;
}

void finish_job(RunState& run, int j) {
  Job& job = run.cluster.job(j);
  run.world.forget_actor(j);
  run.release(j);
  job.state = JobState::kDone;
  run.cluster.running_jobs.erase(j);
  job.end = run.now();
  ++run.finished;
  run.world.notify();
}

// The attempt's actor: each phase is a sleep, after which the job may be gone (interrupted).
void run_attempt(RunState& run, int j) {
  Job& job = run.cluster.job(j);
  const auto& f = run.w.failures;
  bool restart = job.attempts > 1 || job.resized;
  job.computed_since_ckpt_s = 0.0;
  const std::uint64_t epoch = job.epoch;
  // An interruption bumps the epoch; if this actor gets to run again before its kill lands,
  // it must not touch the job.
  auto gone = [&] { return job.epoch != epoch; };
  for (;;) {
    if (restart && f.restart_cost_s > 0) {
      enter(job, Phase::kRestart, 0.0);
      sim::ActorWorld::sleep_for(f.restart_cost_s);
      if (gone())
        return;
      run.ledger.count_restart(f.restart_cost_s, job.gpus);
    }
    restart = false;
    const double r = rate(job);
    const double to_done = job.remaining / r;
    const double tau = checkpoint_interval(run, job);
    const bool last = to_done <= tau;
    const double seg = last ? to_done : tau;
    enter(job, Phase::kCompute, r);
    sim::ActorWorld::sleep_for(seg);
    if (gone())
      return;
    job.computed_since_ckpt_s += seg;
    if (last) {
      job.remaining = 0.0;
      finish_job(run, j);
      return;
    }
    job.remaining -= seg * r;
    if (f.checkpoint_cost_s > 0) {
      enter(job, Phase::kCheckpoint, 0.0);
      sim::ActorWorld::sleep_for(f.checkpoint_cost_s);
      if (gone())
        return;
      run.ledger.count_checkpoint(f.checkpoint_cost_s, job.gpus);
    }
    job.saved_remaining = job.remaining;
    job.computed_since_ckpt_s = 0.0;
    if (job.rec->is_elastic() && resize_at_checkpoint(run, j)) {
      restart = true;
      run.world.notify();
      run.world.move_current_actor_to(job.pieces.front().node);
    }
  }
}

}  // namespace

void start_job_attempt(RunState& run, int j) {
  run.world.start_actor(j, run.cluster.job(j).pieces.front().node,
                        [&run, j] { run_attempt(run, j); });
}

}  // namespace capsim::whatif::detail
