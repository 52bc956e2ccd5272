#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "traces/timeline_csv.hpp"

#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// GPU-hours of allocated time that did not advance training, by cause.
struct GoodputLoss {
  double failure_gpu_hours = 0.0;     // work since the last checkpoint + detection, on failures
  double preemption_gpu_hours = 0.0;  // spot interruptions
  double disruption_gpu_hours = 0.0;  // autoscaler scale-down / expiry evictions
  double restart_gpu_hours = 0.0;     // restart cost (rendezvous, NCCL init, checkpoint load)
  double checkpoint_gpu_hours = 0.0;  // blocking checkpoint saves

  [[nodiscard]] double total() const {
    return failure_gpu_hours + preemption_gpu_hours + disruption_gpu_hours + restart_gpu_hours +
           checkpoint_gpu_hours;
  }
};

// What one policy did with one seed. Times in seconds, money in USD.
struct PolicyResult {
  std::string name;
  std::string preset;
  std::uint64_t seed = 0;
  double end_time_s = 0.0;
  double cost_usd = 0.0;
  std::map<std::string, double> cost_by_pricing_usd;  // on-demand, spot, capacity-block
  double gpu_hours_billed = 0.0;
  double gpu_hours_busy = 0.0;
  double utilization = 0.0;  // busy / billed
  double queue_wait_p50_s = 0.0;
  double queue_wait_p95_s = 0.0;
  double queue_wait_max_s = 0.0;
  double queue_wait_mean_s = 0.0;
  double queue_wait_p99_s = 0.0;
  // Job completion time percentiles and the longest, of the jobs that finished; none when no
  // job did.
  std::optional<double> jct_p50_s;
  std::optional<double> jct_p95_s;
  std::optional<double> jct_max_s;
  // Cost over the GPU-hours of work that counted (busy less every loss); none without any.
  std::optional<double> cost_per_useful_gpu_hour_usd;
  int jobs_total = 0;
  int jobs_finished = 0;
  GoodputLoss lost;
  int scale_ups = 0;        // nodes launched by the loop
  int scale_downs = 0;      // nodes removed by the loop (idle, consolidation, expiry)
  int launch_failures = 0;  // insufficient capacity
  int provision_timeouts = 0;
  int node_failures = 0;
  int spot_interruptions = 0;
  int job_restarts = 0;
  int job_resizes = 0;
  traces::Timeline timeline;
};

// Replays the what-if's jobs under one policy on a SimGrid platform (one host per node, hosts
// turned on and off, one actor per running job plus the control-loop actor) and returns the
// metrics. Deterministic for a seed.
// REQUIRES: called at most once per OS process (SimGrid keeps one engine per process); use
// run_all() (runner.hpp) to run several.
[[nodiscard]] PolicyResult run_policy(const WhatIf& whatif, const PolicySpec& policy,
                                      std::uint64_t seed);

}  // namespace capsim::whatif
