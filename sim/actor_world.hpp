#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace capsim::sim {

// A host of an ActorWorld: a node slot the actors run on.
struct HostSpec {
  std::string name;
  int cores = 1;
};

// SimGrid as a clock for actors that sleep through phases: hosts on one star zone, a
// control-plane host, one actor slot per job, and a semaphore that wakes the control loop. The
// what-if engine keeps its state outside; each call but now() is a simcall, a point where other
// actors may run, so callers keep their order relative to state changes.
// REQUIRES: one ActorWorld per process at a time (SimGrid allows one engine per process).
class ActorWorld {
 public:
  // Starts the SimGrid engine, quiet and with 256 KiB actor stacks.
  ActorWorld();
  ~ActorWorld();
  ActorWorld(const ActorWorld&) = delete;
  ActorWorld& operator=(const ActorWorld&) = delete;
  ActorWorld(ActorWorld&&) = delete;
  ActorWorld& operator=(ActorWorld&&) = delete;

  // Creates `hosts` (index = host id) and the control-plane host, and `actor_slots` slots for
  // start_actor().
  void build(const std::vector<HostSpec>& hosts, int actor_slots);

  // Runs every actor to its end.
  void run();

  // Returns the simulated time in seconds.
  [[nodiscard]] static double now();

  void turn_on(int host);
  // Powers the host off if it is on; the actors on it die with it.
  void turn_off(int host);

  // Starts the control loop's actor on the control-plane host.
  void start_control_loop(std::function<void()> body);
  // Starts an actor on `host` in `slot`.
  void start_actor(int slot, int host, std::function<void()> body);
  // Kills the actor in `slot`, if there is one.
  void kill_actor(int slot);
  // Empties `slot`, whose actor ended by itself.
  void forget_actor(int slot);

  // Makes the calling actor sleep for `seconds` of simulated time.
  static void sleep_for(double seconds);
  // Moves the calling actor to `host`.
  void move_current_actor_to(int host);

  // Wakes the control loop.
  void notify();
  // Blocks the calling actor until notify() or for `timeout_s` (not at all when 0), then takes
  // every pending notice.
  void wait_for_notice(double timeout_s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace capsim::sim
