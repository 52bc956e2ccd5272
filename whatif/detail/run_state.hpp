#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

#include "sim/actor_world.hpp"

#include "whatif/detail/autoscaler.hpp"
#include "whatif/detail/cluster.hpp"
#include "whatif/detail/gpu_ledger.hpp"
#include "whatif/detail/job_queue.hpp"
#include "whatif/detail/timed_events.hpp"
#include "whatif/engine.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif::detail {

// One policy's run: the what-if and the policy's control loop, the random streams, the cluster
// state, the SimGrid side, the timed events and the counters the result reports. The handlers
// act on it: job_attempt, job_interruption, node_launch, node_removal, node_events and the
// event_loop that drives them. Times in seconds of simulated time. Single-threaded (SimGrid
// runs one actor at a time).
struct RunState final : private NodeActions {
  RunState(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed);

  [[nodiscard]] static double now() { return sim::ActorWorld::now(); }

  // Records a state change for the control loop. Never yields: a simcall here would let other
  // actors run in the middle of a job's bookkeeping. Job actors notify the loop before blocking.
  void changed() { tick_wanted_s = std::min(tick_wanted_s, now()); }

  // Schedules an event of `node` at `t`, stale once the node's generation moves on.
  void schedule_node_event(double t, EventType type, int node) {
    events.push(t, type, node, cluster.node(node).gen);
  }

  // Ends job `j`'s allocation: counts the time it held its GPUs and gives them back.
  void release(int j);
  // Queues job `j` from now.
  void enqueue(int j);

  const WhatIf& w;
  ControlLoop loop;
  std::mt19937_64 rng_provisioning, rng_failure, rng_spot, rng_repair;
  Cluster cluster;
  JobQueue queue;
  GpuLedger ledger;
  Autoscaler autoscaler;
  sim::ActorWorld world;  // SimGrid: node hosts, job actors (one slot per job), the clock
  TimedEvents events;
  double horizon_s = 0.0;
  double end_time_s = 0.0;
  double tick_wanted_s = 0.0;  // the earliest time a change asks the control loop to decide
  int finished = 0;
  PolicyResult result;  // names, event counters and timeline; summarize() completes it

 private:
  // The autoscaler's actions (node_launch, node_removal).
  bool launch(int pool) override;
  void scale_down(int id) override;
};

}  // namespace capsim::whatif::detail
