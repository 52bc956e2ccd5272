#include "whatif/detail/event_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "whatif/detail/job_attempt.hpp"
#include "whatif/detail/node_events.hpp"
#include "whatif/detail/node_launch.hpp"
#include "whatif/detail/scheduler.hpp"
#include "whatif/detail/summary.hpp"

namespace capsim::whatif::detail {
namespace {

void schedule_jobs(RunState& run) {
  schedule(run.cluster, run.queue, run.now(), [&run](int j) { start_job_attempt(run, j); });
}

// Pools start at their minimum (static: maximum), already running.
void start_pools(RunState& run) {
  for (std::size_t p = 0; p < run.cluster.pools.size(); ++p) {
    const int n0 = run.loop.autoscale ? run.w.pools[p].min_nodes : run.w.pools[p].max_nodes;
    for (int k = 0; k < n0; ++k)
      (void)launch_node(run, static_cast<int>(p), true);
  }
}

void sample(RunState& run) {
  record_sample(run.result.timeline, run.cluster, static_cast<int>(run.queue.size()), run.now());
}

// Bills the nodes still up and counts the jobs still running, up to the end of the run.
void end_run(RunState& run) {
  run.end_time_s = run.now();
  sample(run);
  for (std::size_t i = 0; i < run.cluster.nodes.size(); ++i) {
    Node& n = run.cluster.nodes[i];
    if (n.state == NodeState::kBooting || n.state == NodeState::kReady ||
        n.state == NodeState::kDraining || n.state == NodeState::kShutdown) {
      run.cluster.pool(n.pool).billed_s += run.end_time_s - n.billed_since;
      run.cluster.set_state(static_cast<int>(i), NodeState::kOff);
    }
    run.world.turn_off(static_cast<int>(i));
  }
  for (const auto& j : run.cluster.jobs) {
    if (j.state == JobState::kRunning)
      run.ledger.count_held(run.cluster, j, run.end_time_s);
  }
}

}  // namespace

void run_control_loop(RunState& run) {
  start_pools(run);
  const auto& jobs = run.cluster.jobs;
  std::size_t next_job = 0;
  double next_sample = 0.0;
  double next_tick = 0.0;
  double last_tick = -kInf;
  for (;;) {
    const double t = run.now();
    while (!run.events.empty() && run.events.next_time() <= t + kEps)
      handle_timed_event(run, run.events.pop());
    while (next_job < jobs.size() && jobs[next_job].rec->submit_s <= t + kEps)
      run.enqueue(static_cast<int>(next_job++));
    schedule_jobs(run);
    if (t + kEps >= next_tick) {
      run.tick_wanted_s = kInf;
      const double a = run.autoscaler.scale_up(run.now());
      const double b = run.autoscaler.scale_down(run.now());
      schedule_jobs(run);
      run.tick_wanted_s = std::min({run.tick_wanted_s, a, b});
      last_tick = t;
    }
    next_tick = kInf;
    if (run.tick_wanted_s < kInf) {
      // Decisions happen on the loop's tick grid, at most once per period.
      const double want = std::max(run.tick_wanted_s, last_tick + run.loop.tick_s);
      next_tick = std::ceil(want / run.loop.tick_s - 1e-9) * run.loop.tick_s;
    }
    if (t + kEps >= next_sample) {
      sample(run);
      next_sample += run.w.timeline_interval_s;
    }
    if (run.finished == static_cast<int>(jobs.size()) || t >= run.horizon_s)
      break;
    double wake = std::min({next_tick, next_sample, run.horizon_s});
    if (!run.events.empty())
      wake = std::min(wake, run.events.next_time());
    if (next_job < jobs.size())
      wake = std::min(wake, jobs[next_job].rec->submit_s);
    run.world.wait_for_notice(wake > t + kEps ? wake - t : 0.0);
  }
  end_run(run);
}

}  // namespace capsim::whatif::detail
