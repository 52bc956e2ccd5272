#pragma once

#include <functional>
#include <memory>

#include "whatif/detail/cluster.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif::detail {

// The run's SimGrid side: one host per node slot (off until launched) and a control-plane host,
// the actor of each running job attempt, the clock, and the semaphore that wakes the control
// loop. The rest of the engine is plain state. Each call but now() is a simcall, a point where
// other actors may run, so callers keep their order relative to state changes.
// REQUIRES: a SimGrid engine exists for the world's lifetime (one per process).
class SimWorld {
 public:
  SimWorld();
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;
  SimWorld(SimWorld&&) = delete;
  SimWorld& operator=(SimWorld&&) = delete;

  // Creates one host per node slot of every pool (all off) with the cluster's node records,
  // the control-plane host and the wake-up semaphore.
  void build(const WhatIf& whatif, Cluster& cluster);

  // Returns the simulated time in seconds.
  [[nodiscard]] static double now();

  void turn_on(int node);
  // Powers the node's host off if it is on; the actors on it die with it.
  void turn_off(int node);

  // Starts the control loop's actor on the control-plane host.
  void start_control_loop(std::function<void()> body);
  // Starts job `job`'s attempt as an actor on `node`.
  void start_job(int job, int node, std::function<void()> body);
  // Kills job `job`'s running attempt, if it has one.
  void kill_job(int job);
  // Drops job `job`'s attempt, which ended by itself.
  void forget_job(int job);

  // Makes the calling actor sleep for `seconds` of simulated time.
  static void sleep_for(double seconds);
  // Moves the calling actor to `node`'s host.
  void move_current_actor_to(int node);

  // Wakes the control loop.
  void notify();
  // Blocks the calling actor until notify() or for `timeout_s` (not at all when 0), then takes
  // every pending notice.
  void wait_for_notice(double timeout_s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace capsim::whatif::detail
