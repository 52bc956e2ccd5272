#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/pricing.hpp"
#include "models/scenario.hpp"
#include "planner/shared_fabric.hpp"

namespace capsim::planner {

// What the planner optimises: total cost, days to train, or the cost-vs-days Pareto front.
enum class Objective { kMinCost, kMinTime, kPareto };

struct PriceOption {
  Pricing pricing = Pricing::kOnDemand;
  double usd_per_node_hour = 0.0;
};

// One catalog instance the plan may buy, with the prices of the pricing options it offers.
struct InstanceChoice {
  std::string name;                 // InstanceSpec::name in PlanSpec::catalog
  std::vector<PriceOption> prices;  // in the order of the plan's "pricing" list
  std::string profile_path = {};    // resolved; empty: the shipped profile of the instance
  int nvlink_domain = 0;            // GPUs of an NVLink domain spanning nodes; 0: the node
};

// One step of a batch-size ramp: training runs at `batch_fraction` of the global batch until
// `until_tokens` tokens have been trained (Llama 3 405B: 1/4 to 252M tokens, 1/2 to 2.87T).
struct BatchRampStep {
  double until_tokens = 0.0;
  double batch_fraction = 1.0;
};

// The goodput model: what stretches a training run past its steady-state time (failures and
// restarts, checkpoints, stragglers, start-up, batch ramp, evaluation pauses; docs/planner.md,
// "Goodput"). Failures are exponential; a zero in a field the plan reader fills marks "derive it"
// (goodput.hpp). With only the first three fields set it is Daly's checkpoint model alone.
struct FailureModel {
  double gpu_mtbf_s = 0.0;             // mean time between unexpected interruptions, per GPU
  double checkpoint_save_s = 0.0;      // stalled training per checkpoint
  double checkpoint_restore_s = 0.0;   // reload after an interruption
  double detection_s = 0.0;            // from a failure to the job noticing it
  double restart_s = 0.0;              // relaunch: scheduling, process start, NCCL set-up
  double checkpoint_interval_s = 0.0;  // 0: Young-Daly
  double planned_per_gpu_hour = 0.0;   // planned stops (maintenance): a restart, no lost work
  double straggler_sigma = 0.0;        // per-GPU speed spread (standard deviation, fraction)
  int warmup_iterations = 0;           // slow first iterations, counted once more each
  double evaluation_every_s = 0.0;     // 0: no evaluation pauses
  double evaluation_s = 0.0;
  std::vector<BatchRampStep> batch_ramp;
  // Fields the reader derives per instance (0 in a file: default): per-node storage bandwidth
  // and checkpoint bytes per parameter.
  double storage_bytes_per_s_per_node = 0.0;
  double checkpoint_bytes_per_parameter = 0.0;
};

// A pricing option the plan asked for that an instance does not offer, and why.
struct SkippedPrice {
  std::string instance;
  Pricing pricing = Pricing::kOnDemand;
  std::string reason;
};

// Every value each parallelism dimension may take; the cross product is the search space.
// Non-interleaved schedules run only with virtual stages 1 and sequence parallelism only with
// tensor > 1 (those pairs are not distinct layouts and are skipped, not counted as pruned).
struct SearchSpace {
  std::vector<int> tensor;
  std::vector<int> pipeline;
  std::vector<int> virtual_pipeline_stages;
  std::vector<int> micro_batch_size;
  std::vector<int> context;
  std::vector<Schedule> schedule;
  std::vector<Recompute> recompute;
  std::vector<int> zero_stage;
  std::vector<bool> sequence_parallel;
  std::vector<Precision> precision;
  // Expert parallelism of a mixture-of-experts model's expert layers, and their expert tensor
  // parallelism (empty: each candidate's tensor degree).
  std::vector<int> expert = {1};
  std::vector<int> expert_tensor;
  // When pipeline x virtual stages does not divide the layers, try uneven_stage_layers()
  // (Llama-3 405B: 7 + 14 x 8 + 7) instead of pruning.
  bool uneven_stages = true;
  // Give the leading pipelined candidates of each group the layer split that evens their
  // stages' work (estimate/stage_balance.hpp), when the screen times one faster.
  bool balance_stages = true;
};

// A `capsim.plan/v1` input: a model, a training target, what may be bought and how the model
// may be laid out. Units: seconds, tokens, USD. Plain value.
struct PlanSpec {
  std::string file;  // where it was read from (for messages)
  std::string name;
  ModelSpec model;
  double tokens = 0.0;            // tokens to train
  double deadline_s = 0.0;        // 0: none
  double min_tokens_per_s = 0.0;  // 0: none
  std::vector<InstanceChoice> instances;
  Catalog catalog;  // the instance types and GPUs the plan may name: built in, or defined in it
  std::vector<int> node_counts;         // ascending
  std::vector<int> global_batch_sizes;  // sequences, ascending (one value when fixed)
  SearchSpace space;
  // The training stack's settings every candidate shares: only the fields read_stack_keys()
  // reads are used (gradient reduction, optimizer storage, fp8 parameters; docs/planner.md,
  // "stack").
  Parallelism stack;
  // The named stack shards data parallelism (ZeRO-2/3) in pipelined layouts (torchtitan), so the
  // search keeps such candidates.
  bool stack_shards_with_pipeline = false;
  // The stack the plan names ("stack": "NAME"), or nullptr: its candidates run on it, so their
  // profiles (shipped or datasheet) take that stack's in-situ factor where one was fitted.
  const TrainingStack* named_stack = nullptr;
  // The named stack keeps fp8 parameters under some recipes (keeps_fp8_parameters) and the
  // plan's stack does not say fp8_params: each candidate takes its precision's.
  bool fp8_params_by_recipe = false;
  Objective objective = Objective::kMinCost;
  std::optional<FailureModel> failure;
  int confirm_top_k = 2;  // event confirmations per (instance, node count)
  // HBM a candidate must leave free: it fits when its peak is at most the GPU's capacity minus
  // this (allocator fragmentation the memory model's 5% does not cover, other processes).
  double memory_headroom_bytes = 0.0;
  // Free HBM below which the winner gets a warning (the memory model's estimate is not exact).
  double memory_warning_bytes = 4.0 * 1024.0 * 1024.0 * 1024.0;
  std::vector<SkippedPrice> skipped_prices;   // in instance order, then the pricing list's
  std::optional<SharedFabric> shared_fabric;  // opt-in: what a shared fabric does to the winner
};

// Whether a candidate of `plan` in `precision` keeps fp8 parameters: the plan's stack says so
// and the precision is an fp8 recipe, or its named stack does so for that recipe.
[[nodiscard]] bool candidate_fp8_params(const PlanSpec& plan, Precision precision);

// Canonical names used in plan JSON and reports.
[[nodiscard]] const char* to_string(Objective objective);

}  // namespace capsim::planner
