#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/instance_catalog.hpp"
#include "models/pricing.hpp"
#include "models/scenario.hpp"
#include "traces/job_trace.hpp"

#include "io/input_error.hpp"
#include "whatif/fabric_slowdown.hpp"
#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// Node pools buy on-demand, spot, capacity-block or reserved nodes (capsim::Pricing), as
// `capsim plan` prices them.
using capsim::Pricing;

// Whether a pool of this pricing is paid for all its max_nodes over the whole run (a capacity
// block or a reservation, bought upfront), rather than per second of each node's life.
[[nodiscard]] inline bool is_committed(Pricing pricing) {
  return pricing == Pricing::kCapacityBlock || pricing == Pricing::kReserved;
}

// A positive delay: fixed (p95 == median) or log-normal with the given median and 95th
// percentile (lognormal fits launch tails well: docs/design/autoscaling.md §2.1).
struct Delay {
  double median_s = 0.0;
  double p95_s = 0.0;

  // Returns one sample; draws exactly one normal variate whatever the shape, so streams stay
  // aligned across configurations.
  [[nodiscard]] double sample(std::mt19937_64& rng) const;
};

// A group of identical nodes bought one way. Prices in USD per node-hour.
struct NodePool {
  std::string name;
  InstanceSpec instance;
  Pricing pricing = Pricing::kOnDemand;
  double price_usd_per_hour = 0.0;
  int min_nodes = 0;
  int max_nodes = 0;
  Delay boot;                                 // launch request -> OS up
  Delay image_pull;                           // container image
  Delay init;                                 // NCCL/EFA init, health checks
  int available_nodes = -1;                   // capacity the market holds for us; -1: unlimited
  double ice_probability = 0.0;               // per launch request: InsufficientInstanceCapacity
  double interruptions_per_node_month = 0.0;  // spot: independent interruption triggers
  double interruption_correlation = 0.0;      // chance each other spot node goes with a trigger
  double notice_s = 120.0;                    // spot notice (AWS: 2 min)

  [[nodiscard]] int gpus_per_node() const { return instance.gpus_per_node; }
};

// Hardware failures, repair and checkpointing, shared by all jobs.
// Shortest checkpoint interval (given or Young-Daly's): below a second the job's phases are
// too short for double-precision time to advance.
inline constexpr double kMinCheckpointIntervalS = 1.0;

struct FailureModel {
  double gpu_mtbf_s = 0.0;  // 0: no failures
  Delay repair;             // a failed node's slot is unusable this long
  double detect_s = 0.0;    // failure -> job notices (NCCL watchdog)
  bool young_daly = false;  // checkpoint interval sqrt(2 * cost * job MTBF)
  double checkpoint_interval_s = 3600.0;
  double checkpoint_cost_s = 0.0;  // blocking save
  double restart_cost_s = 0.0;     // rendezvous, NCCL init, checkpoint load
};

enum class ScaleDownPredicate { kNever, kIdle, kUnderutilized };
enum class Expander { kPriority, kPrice };

// The one autoscaler control loop; every policy is a parameterisation of it
// (docs/design/autoscaling.md §1.9). Times in seconds; 0 disables a cap or delay.
struct ControlLoop {
  std::string preset;
  bool autoscale = true;           // false: static, every pool at max size
  double tick_s = 10.0;            // loop period
  double demand_delay_s = 0.0;     // upstream loop before node demand is visible (stacked)
  double actuation_delay_s = 0.0;  // set-desired -> launch call (ASG)
  double upscaling_speed = 0.0;    // Ray: pending <= max(floor, speed * running); 0: no cap
  int upscaling_floor = 0;
  bool conservative = false;         // KubeRay Conservative: pending <= running
  double resume_rate_per_min = 0.0;  // Slurm ResumeRate (decaying launch counter); 0: unlimited
  int max_pending = 0;               // concurrent launches in flight; 0: unlimited
  double provision_timeout_s = 0.0;
  double backoff_initial_s = 0.0;
  double backoff_max_s = 0.0;
  double backoff_reset_s = 0.0;
  Expander expander = Expander::kPriority;
  ScaleDownPredicate scale_down = ScaleDownPredicate::kIdle;
  double utilization_threshold = 0.0;  // kUnderutilized: busy GPUs / GPUs below this
  double dwell_s = 0.0;                // predicate must hold this long
  double delay_after_add_s = 0.0;
  double delay_after_delete_s = 0.0;
  double delay_after_failure_s = 0.0;
  int max_delete_per_tick = 0;     // 0: unlimited
  double budget_fraction = 1.0;    // voluntary disruptions in flight <= ceil(fraction * nodes)
  double termination_s = 0.0;      // shutdown, still billed
  double expire_after_s = 0.0;     // forced replacement age; 0: never
  bool replace_on_notice = false;  // launch a replacement at a spot notice
  bool zero_delay = false;         // oracle: nodes are ready at launch, no ICE
};

// A named policy: a preset plus the knobs the user set (kept for output and sweeps).
struct PolicySpec {
  std::string name;
  std::string preset;
  nlohmann::json knobs = nlohmann::json::object();
  ControlLoop loop;
  // The pools this policy runs on instead of the what-if's (a configuration's node groups);
  // empty: the what-if's.
  std::vector<NodePool> pools;
  // The configuration the policy was read from, and its files, for `--emit`.
  std::optional<ImportedPolicy> imported;
  std::shared_ptr<const ImportedSource> source;
};

// A sweep over one knob of one policy; each value becomes a policy variant.
struct Sweep {
  std::string policy;
  std::string knob;
  std::vector<nlohmann::json> values;
};

enum class QueueOrder { kFirstFit, kFifo };

// How `--emit` picks the policy to write back: the lowest mean of `by` among the policies that
// finish every job (and keep the mean p95 queue wait within the bound, when one is set); the
// oracle, which no autoscaler can run, is never picked.
struct Recommendation {
  std::string by = "cost_usd";
  std::optional<double> max_queue_wait_p95_s;
};

// Throughput of a scenario job at each GPU count, memoised by the loader (tokens/s).
struct ScenarioJobModel {
  std::string scenario_path;
  // tp * pp * cp (with experts, also a multiple of pp * ep * etp): allocations are multiples
  int model_parallel = 1;
  std::map<std::string, std::map<int, double>> tokens_per_s;  // instance -> gpus -> rate
};

// A complete `capsim.whatif/v1` input, validated.
struct WhatIf {
  std::string file;
  std::string name;
  std::uint64_t seed = 1;
  int replicas = 1;
  double horizon_s = 0.0;  // 0: until every job finished (capped at last submit + 365 d)
  double timeline_interval_s = 600.0;
  QueueOrder queue = QueueOrder::kFirstFit;
  std::vector<NodePool> pools;
  std::vector<traces::JobRecord> jobs;
  std::map<std::string, ScenarioJobModel> scenario_models;  // by scenario path
  FailureModel failures;
  std::vector<PolicySpec> policies;
  std::optional<Sweep> sweep;
  // Opt-in: leaves and placement of multi-node scenario jobs, and each placement shape's
  // slowdown (whatif/fabric_slowdown.hpp).
  std::optional<WhatIfFabric> fabric;
  std::map<FabricShape, double> fabric_slowdowns;
  Recommendation recommend;
  // What the policies' configurations say that capsim does not model (docs/whatif.md).
  std::vector<io::InputProblem> notes;
};

}  // namespace capsim::whatif
