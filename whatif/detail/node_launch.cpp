#include "whatif/detail/node_launch.hpp"

#include <random>

namespace capsim::whatif::detail {
namespace {

constexpr double kMonthS = 30.0 * 86400.0;

void launch_failed(RunState& run, int pool) {
  ++run.result.launch_failures;
  run.autoscaler.back_off(pool, run.now());
}

}  // namespace

bool launch_node(RunState& run, int pool, bool instant) {
  const auto& spec = run.cluster.spec(pool);
  const ControlLoop& loop = run.loop;
  const int id = run.cluster.off_slot(pool);
  if (id < 0)
    return false;
  Node& n = run.cluster.node(id);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double draw = u(run.rng_provisioning);
  const double delay = spec.boot.sample(run.rng_provisioning) +
                       spec.image_pull.sample(run.rng_provisioning) +
                       spec.init.sample(run.rng_provisioning);
  // The market's capacity limits even the nodes a static cluster starts with.
  if (spec.available_nodes >= 0 && run.cluster.count(pool, true) >= spec.available_nodes) {
    if (!instant)
      launch_failed(run, pool);
    return false;
  }
  if (!instant && !loop.zero_delay && draw < spec.ice_probability) {
    launch_failed(run, pool);
    return false;
  }
  ++n.gen;
  run.world.turn_on(id);
  run.cluster.set_state(id, NodeState::kBooting);
  n.reason = OffReason::kNone;
  run.cluster.set_free_gpus(id, 0);
  n.jobs.clear();
  n.unneeded_since = -1.0;
  const double start = run.now() + (instant ? 0.0 : loop.actuation_delay_s);
  n.billed_since = start;
  if (instant) {
    become_ready(run, id);
    return true;
  }
  ++run.result.scale_ups;
  run.autoscaler.note_launch(run.now());
  if (loop.zero_delay) {
    run.schedule_node_event(run.now(), EventType::kReady, id);
  } else if (loop.provision_timeout_s > 0 && delay > loop.provision_timeout_s) {
    run.schedule_node_event(start + loop.provision_timeout_s, EventType::kTimeout, id);
  } else {
    run.schedule_node_event(start + delay, EventType::kReady, id);
  }
  return true;
}

void become_ready(RunState& run, int id) {
  Node& n = run.cluster.node(id);
  const auto& spec = run.cluster.spec(n.pool);
  const auto& f = run.w.failures;
  run.cluster.set_free_gpus(id, spec.gpus_per_node());
  run.cluster.set_state(id, NodeState::kReady);
  n.ready_at = run.now();
  run.autoscaler.note_ready(n.pool, run.now());
  if (f.gpu_mtbf_s > 0) {
    std::exponential_distribution<double> ttf(spec.gpus_per_node() / f.gpu_mtbf_s);
    run.schedule_node_event(run.now() + ttf(run.rng_failure), EventType::kFailure, id);
  }
  if (spec.pricing == Pricing::kSpot && spec.interruptions_per_node_month > 0) {
    std::exponential_distribution<double> tti(spec.interruptions_per_node_month / kMonthS);
    run.schedule_node_event(run.now() + tti(run.rng_spot), EventType::kSpotNotice, id);
  }
  if (run.loop.expire_after_s > 0)
    run.schedule_node_event(n.billed_since + run.loop.expire_after_s, EventType::kExpire, id);
  run.changed();
}

}  // namespace capsim::whatif::detail
