#include "whatif/detail/node_removal.hpp"

#include "whatif/detail/job_interruption.hpp"

namespace capsim::whatif::detail {
namespace {

// Voluntary or forced removal: empty nodes shut down at once, busy ones are cordoned and
// killed after `grace_s`.
void remove_node(RunState& run, int id, OffReason why, double grace_s) {
  Node& n = run.cluster.node(id);
  n.reason = why;
  n.notice_s = grace_s;
  if (n.jobs.empty()) {
    shut_down(run, id);
  } else {
    run.cluster.set_state(id, NodeState::kDraining);
    run.schedule_node_event(run.now() + grace_s, EventType::kKill, id);
  }
  run.autoscaler.note_removal(run.now());
}

}  // namespace

void scale_down_node(RunState& run, int id) {
  ++run.result.scale_downs;
  remove_node(run, id, OffReason::kScaleDown, run.w.failures.checkpoint_cost_s);
}

void power_off(RunState& run, int id, OffReason why, NodeState next) {
  Node& n = run.cluster.node(id);
  n.reason = why;
  interrupt_jobs_on(run, id);
  run.ledger.count_node_lost(run.cluster, id, run.now());
  if (n.state != NodeState::kShutdown)
    stop_billing(run, n);
  run.cluster.set_free_gpus(id, 0);
  run.cluster.set_state(id, next);
  ++n.gen;
  run.world.turn_off(id);
  run.changed();
}

void shut_down(RunState& run, int id) {
  Node& n = run.cluster.node(id);
  const OffReason why = n.reason;
  interrupt_jobs_on(run, id);
  run.ledger.count_node_lost(run.cluster, id, run.now());
  ++n.gen;
  run.cluster.set_free_gpus(id, 0);
  run.cluster.set_state(id, NodeState::kShutdown);
  n.reason = why;
  run.world.turn_off(id);
  run.schedule_node_event(run.now() + run.loop.termination_s, EventType::kShutdownDone, id);
  run.changed();
}

void stop_billing(RunState& run, const Node& n) {
  run.cluster.pool(n.pool).billed_s += run.now() - n.billed_since;
}

}  // namespace capsim::whatif::detail
