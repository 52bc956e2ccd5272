#include "whatif/detail/node_events.hpp"

#include <random>

#include "whatif/detail/job_interruption.hpp"
#include "whatif/detail/node_launch.hpp"
#include "whatif/detail/node_removal.hpp"

namespace capsim::whatif::detail {
namespace {

constexpr double kCorrelationWindowS = 180.0;  // >92 % of co-interruptions within 3 min

void on_failure(RunState& run, int id) {
  Node& n = run.cluster.node(id);
  if (n.state != NodeState::kReady && n.state != NodeState::kDraining)
    return;
  ++run.result.node_failures;
  power_off(run, id, OffReason::kFailure, NodeState::kFailed);
  run.schedule_node_event(run.now() + run.w.failures.repair.sample(run.rng_repair),
                          EventType::kRepaired, id);
}

// A spot node gets its notice: it drains and is killed when the notice ends.
void on_spot_notice(RunState& run, int id, bool correlated) {
  Node& n = run.cluster.node(id);
  const auto& spec = run.cluster.spec(n.pool);
  if (n.state != NodeState::kReady)
    return;
  ++run.result.spot_interruptions;
  n.reason = OffReason::kSpot;
  n.notice_s = spec.notice_s;
  run.cluster.set_state(id, NodeState::kDraining);
  run.schedule_node_event(run.now() + spec.notice_s, EventType::kKill, id);
  if (run.loop.replace_on_notice && !n.jobs.empty())
    (void)launch_node(run, n.pool, false);
  // Correlated interruptions: the same market pulls other spot nodes within minutes. Only
  // an independent trigger spreads (no cascades of cascades).
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int other : run.cluster.pool(n.pool).nodes) {
    if (other == id || correlated)
      continue;
    if (run.cluster.node(other).state != NodeState::kReady)
      continue;
    const double draw = u(run.rng_spot);
    const double when = u(run.rng_spot) * kCorrelationWindowS;
    if (draw < spec.interruption_correlation) {
      run.events.push(run.now() + when, EventType::kSpotNotice, other, run.cluster.node(other).gen,
                      kCorrelated);
    }
  }
  run.changed();
}

void on_kill(RunState& run, int id) {
  Node& n = run.cluster.node(id);
  if (n.state != NodeState::kDraining)
    return;
  if (n.reason == OffReason::kSpot)
    power_off(run, id, OffReason::kSpot, NodeState::kOff);
  else
    shut_down(run, id);  // billed until kShutdownDone
}

}  // namespace

void handle_timed_event(RunState& run, const TimedEvent& ev) {
  if (ev.type == EventType::kJobRecovered) {
    recover_job(run, ev.job);
    return;
  }
  Node& n = run.cluster.node(ev.node);
  if (ev.gen != n.gen)
    return;
  switch (ev.type) {
    case EventType::kReady:
      if (n.state == NodeState::kBooting)
        become_ready(run, ev.node);
      break;
    case EventType::kTimeout:
      ++run.result.provision_timeouts;
      power_off(run, ev.node, OffReason::kNone, NodeState::kOff);
      run.autoscaler.back_off(n.pool, run.now());
      break;
    case EventType::kFailure:
      on_failure(run, ev.node);
      break;
    case EventType::kRepaired:
      if (n.state == NodeState::kFailed) {
        run.cluster.set_state(ev.node, NodeState::kOff);
        run.changed();
      }
      break;
    case EventType::kSpotNotice:
      on_spot_notice(run, ev.node, ev.job == kCorrelated);
      break;
    case EventType::kKill:
      on_kill(run, ev.node);
      break;
    case EventType::kShutdownDone:
      if (n.state == NodeState::kShutdown) {
        stop_billing(run, n);
        run.cluster.set_state(ev.node, NodeState::kOff);
        run.changed();
      }
      break;
    case EventType::kJobRecovered:
      break;  // handled above
    case EventType::kExpire:
      if (n.state == NodeState::kReady)
        scale_down_node(run, ev.node);
      break;
  }
}

}  // namespace capsim::whatif::detail
