#include "whatif/detail/job_interruption.hpp"

#include <vector>

namespace capsim::whatif::detail {
namespace {

void interrupt(RunState& run, int j, OffReason why, double notice_s) {
  Job& job = run.cluster.job(j);
  if (job.state != JobState::kRunning || job.recovering)
    return;
  ++job.epoch;
  run.world.kill_actor(j);
  run.ledger.settle_interruption(job, why, notice_s, run.w.failures, run.now());
  ++run.result.job_restarts;
  if (why == OffReason::kFailure) {
    run.events.push(run.now() + run.w.failures.detect_s, EventType::kJobRecovered, -1, 0, j);
    return;
  }
  run.release(j);
  run.enqueue(j);
}

}  // namespace

void interrupt_jobs_on(RunState& run, int node) {
  const Node& n = run.cluster.node(node);
  const std::vector<int> victims = n.jobs;
  for (int j : victims)
    interrupt(run, j, n.reason, n.reason == OffReason::kFailure ? 0.0 : n.notice_s);
}

void recover_job(RunState& run, int j) {
  run.release(j);
  run.cluster.job(j).recovering = false;
  run.enqueue(j);
}

}  // namespace capsim::whatif::detail
