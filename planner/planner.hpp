#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "planner/confirm.hpp"
#include "planner/goodput.hpp"
#include "planner/plan.hpp"
#include "planner/search.hpp"
#include "planner/sensitivity.hpp"

namespace capsim::planner {

// Seconds in a day: plans give their times in seconds and their reports in days.
inline constexpr double kDay = 86400.0;

// One point of the search space: a layout on `num_nodes` nodes of plan.instances[instance].
struct Candidate {
  int instance = 0;
  int num_nodes = 0;
  Parallelism parallelism;
  long long order = 0;  // enumeration index: ties are broken by it (determinism)
};

// A candidate after the screen, and after confirmation when it was confirmed.
struct ScreenedCandidate {
  Candidate candidate;
  Evaluation analytic;
  bool confirmed = false;  // the event engine ran it successfully
  Evaluation event;
  std::string confirm_error;  // set when its confirmation failed
  // Returns the evaluation the ranking uses: the event one when confirmed.
  [[nodiscard]] const Evaluation& final_evaluation() const { return confirmed ? event : analytic; }
};

// A confirmed candidate under one pricing option, with its time to train and cost.
struct RankedEntry {
  size_t candidate = 0;  // index into PlanResult::candidates
  PriceOption price;
  double time_to_train_s = 0.0;            // steady state: whole iterations at the throughput
  double wall_time_s = 0.0;                // all-in: with the goodput model's losses when it is on
  double checkpoint_interval_s = 0.0;      // 0 without a goodput model
  double failure_overhead_fraction = 0.0;  // 1 - steady / all-in
  GoodputBreakdown goodput;                // zero without a goodput model
  double cost_usd = 0.0;                   // nodes x price x wall time
  bool meets_target = false;
};

// Everything `capsim plan` reports. Plain value.
struct PlanResult {
  std::vector<ScreenedCandidate> candidates;  // the confirmed per (instance, node count)
  std::vector<RankedEntry> ranked;            // by objective; target-meeting first
  std::vector<RankedEntry> pareto;            // cost vs days, by days ascending
  PruneCounts pruned;
  long long enumerated = 0;
  long long screened = 0;  // analytic evaluations
  long long bounded = 0;   // of them, settled by the lower bound (below target, not kept)
  int confirmations = 0;   // event runs attempted
  // Candidates whose event run failed (their confirm_error says why): they rank on the screen's
  // numbers.
  int failed_confirmations = 0;
  // Of the candidates, those confirmed in a second batch because the screen ranked them faster
  // than the event engine ran their group's confirmed best.
  size_t second_batch = 0;
  // Pipelined candidates the screen timed faster with a split that evens their stages' work.
  size_t balanced_splits = 0;
  // Pipelined layouts that fit in memory only with their layers split otherwise.
  long long fitted_splits = 0;
  bool event_available = false;
  std::string event_unavailable_reason;
  double screen_wall_s = 0.0;
  double confirm_wall_s = 0.0;
  double required_tokens_per_s = 0.0;
  // With confirmations: the candidate the screen alone would have chosen, and whether the
  // confirmed ranking picked a different winner (candidate or pricing).
  size_t screen_winner = 0;
  bool screen_winner_changed = false;
  std::vector<std::string> notes;
  // With the plan's shared_fabric: its effect on the winner (assess_shared_fabric).
  std::optional<SharedFabricEffect> shared_fabric;
  // With `capsim plan --sensitivity`: how the winner moves with its uncertain inputs.
  std::optional<Sensitivity> sensitivity;
};

// Options of one planner run. `confirm` may be empty: then nothing is confirmed.
struct PlanOptions {
  int jobs = 1;  // screening threads
  // Settle layouts that can change nothing (slower than every kept candidate and below the
  // target) by a lower bound on their time instead of a full estimate. The plan is the same
  // either way; off, every layout is estimated in full (tests compare the two).
  bool screen_bounds = true;
  ConfirmFn confirm;
  ProgressFn progress;
};

// Runs the search: enumerate, prune (counted per reason), screen with the analytic estimator,
// confirm plan.confirm_top_k per (instance, node count) group whose analytic throughput comes
// within 10% of the target (the fastest of distinct meshes first), rank on confirmed numbers,
// and compute the Pareto front.
// Deterministic for a given plan and confirm function, whatever `jobs` is.
[[nodiscard]] PlanResult run_plan(const PlanSpec& plan, const PlanOptions& options);

// Moves of the ranking's inputs that need no new estimate (the sensitivity analysis's price and
// failure-rate moves, planner/sensitivity.hpp); 1 = as the plan has them.
struct RankingScales {
  double price = 1.0;         // every price option's USD per node-hour
  double failure_rate = 1.0;  // unexpected interruptions per GPU-hour (the MTBF divided by it)
};

// Returns every candidate of `result` under every pricing option of its instance, with its time
// to train, all-in time and cost, sorted by the plan's objective (target-meeting first);
// `confirmed` false ranks on the screen's numbers even where the event engine ran.
[[nodiscard]] std::vector<RankedEntry> rank_entries(const PlanSpec& plan, const PlanResult& result,
                                                    bool confirmed,
                                                    const RankingScales& scales = {});

// Returns the scenario of a candidate (named after its layout), ready for `capsim simulate`.
[[nodiscard]] Scenario candidate_scenario(const PlanSpec& plan, const Candidate& candidate);

// Returns the indices of the entries no other entry beats on both cost and wall time (ties on
// both keep the first), sorted by wall time ascending.
[[nodiscard]] std::vector<size_t> pareto_front(const std::vector<RankedEntry>& entries);

}  // namespace capsim::planner
