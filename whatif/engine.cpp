// The what-if engine on SimGrid, through sim::ActorWorld. Nodes are hosts, turned on at launch
// and off at failure, spot kill or scale-down; a job attempt is an actor on its first node that
// sleeps through its phases (restart, compute to the next checkpoint, save), at the rate of its
// allocation. One control-loop actor runs the scheduler (event-driven), the autoscaler loop (on
// its tick grid) and the timed node events; it interrupts the actors of jobs whose nodes go away.
// Execs are deliberately not used for job progress: SimGrid 3.32 connects every Exec to the
// global Host::on_state_change signal and never disconnects it, so each host toggle would cost
// O(execs ever created) (measured: 14.7 s instead of ~1 s on the 10k-job benchmark).
// The run lives in detail/: its state (run_state), the control loop (event_loop) and the
// handlers it drives (job_attempt, job_interruption, node_launch, node_removal, node_events),
// over the decisions (placement, scheduler, autoscaler, GPU ledger, summary).
#include "whatif/engine.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sim/actor_world.hpp"

#include "whatif/detail/event_loop.hpp"
#include "whatif/detail/run_state.hpp"
#include "whatif/detail/summary.hpp"

namespace capsim::whatif {
namespace {

// Records one node slot per pool node (up to its max_nodes) in `cluster` and returns their hosts,
// in node order.
std::vector<sim::HostSpec> node_slots(const WhatIf& whatif, detail::Cluster& cluster) {
  std::vector<sim::HostSpec> hosts;
  cluster.pools.resize(whatif.pools.size());
  for (std::size_t p = 0; p < whatif.pools.size(); ++p) {
    for (int i = 0; i < whatif.pools[p].max_nodes; ++i) {
      hosts.push_back(
          {whatif.pools[p].name + "-" + std::to_string(i), whatif.pools[p].gpus_per_node()});
      (void)cluster.add_node(static_cast<int>(p));
    }
  }
  return hosts;
}

}  // namespace

PolicyResult run_policy(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed) {
  if (!policy.pools.empty()) {
    // A policy read from a configuration runs on its own node groups' pools.
    WhatIf own = whatif;
    own.pools = policy.pools;
    PolicySpec on_own = policy;
    on_own.pools.clear();
    return run_policy(own, on_own, seed);
  }
  detail::RunState run(whatif, policy, seed);
  run.world.build(node_slots(whatif, run.cluster), static_cast<int>(whatif.jobs.size()));
  run.world.start_control_loop([&run] { detail::run_control_loop(run); });
  run.world.run();
  return detail::summarize(run.result, run.cluster, run.ledger, run.end_time_s, run.finished);
}

}  // namespace capsim::whatif
