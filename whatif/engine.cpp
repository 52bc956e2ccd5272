// The what-if engine on SimGrid. Nodes are hosts, turned on at launch and off at failure, spot
// kill or scale-down; a job attempt is an actor on its first node that sleeps through its
// phases (restart, compute to the next checkpoint, save), at the rate of its allocation. One
// control-loop actor runs the scheduler (event-driven), the autoscaler loop (on its tick grid)
// and the timed node events; it interrupts the actors of jobs whose nodes go away.
// Execs are deliberately not used for job progress: SimGrid 3.32 connects every Exec to the
// global Host::on_state_change signal and never disconnects it, so each host toggle would cost
// O(execs ever created) (measured: 14.7 s instead of ~1 s on the 10k-job benchmark).
// The run lives in detail/: its state (run_state), the SimGrid side (sim_world), the control
// loop (event_loop) and the handlers it drives (job_attempt, job_interruption, node_launch,
// node_removal, node_events), over the decisions (placement, scheduler, autoscaler, GPU ledger,
// summary).
#include "whatif/engine.hpp"

#include <array>
#include <string>

#include <simgrid/s4u.hpp>

#include "whatif/detail/event_loop.hpp"
#include "whatif/detail/run_state.hpp"
#include "whatif/detail/summary.hpp"

namespace capsim::whatif {

PolicyResult run_policy(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed) {
  int argc = 3;
  std::string a0 = "capsim-whatif", a1 = "--log=root.thres:critical",
              a2 = "--cfg=contexts/stack-size:256";
  std::array<char*, 4> argv{a0.data(), a1.data(), a2.data(), nullptr};
  simgrid::s4u::Engine engine(&argc, argv.data());
  detail::RunState run(whatif, policy, seed);
  run.world.build(whatif, run.cluster);
  run.world.start_control_loop([&run] { detail::run_control_loop(run); });
  engine.run();
  return detail::summarize(run.result, run.cluster, run.ledger, run.end_time_s, run.finished);
}

}  // namespace capsim::whatif
