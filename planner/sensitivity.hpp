#pragma once

// How the plan's answer moves with the inputs it is least sure of (docs/planner.md,
// "Sensitivity"): NIC bandwidth, kernel efficiency, HBM bandwidth, failure rate and price, each
// moved by -25%, -10%, +10% and +25% alone. Every ranked candidate is re-timed under each move
// and the entries re-ranked; the robust choice is the entry whose worst case is best.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace capsim::planner {

struct PlanSpec;
struct PlanResult;
struct RankedEntry;

// One uncertain input of the plan.
enum class SensitivityFactor {
  kNicBandwidth,      // every node's NIC bandwidth (the cluster's inter_node.nic_bandwidth)
  kKernelEfficiency,  // the profile's in-situ factor (software_efficiency): every kernel's speed
  kHbmBandwidth,      // the GPU's HBM bandwidth: memory-bound kernels and GEMMs
  kFailureRate,       // unexpected interruptions per GPU-hour (the goodput model's MTBF)
  kPrice,             // every USD per node-hour
};
inline constexpr std::array<SensitivityFactor, 5> kSensitivityFactors = {
    SensitivityFactor::kNicBandwidth, SensitivityFactor::kKernelEfficiency,
    SensitivityFactor::kHbmBandwidth, SensitivityFactor::kFailureRate, SensitivityFactor::kPrice};
// The moves, as fractions of the planned value.
inline constexpr std::array<double, 4> kSensitivityChanges = {-0.25, -0.10, 0.10, 0.25};

// Returns the key used in reports: "nic_bandwidth", "kernel_efficiency", "hbm_bandwidth",
// "failure_rate", "price".
[[nodiscard]] const char* to_string(SensitivityFactor factor);

// The plan's answer under one move.
struct SensitivityCase {
  SensitivityFactor factor = SensitivityFactor::kNicBandwidth;
  double change = 0.0;       // -0.25: 25% lower than planned
  bool applies = true;       // false: the factor cannot move this plan (failure rate, no goodput)
  double wall_time_s = 0.0;  // the nominal winner's all-in time under the move
  double cost_usd = 0.0;     // and its cost
  bool meets_target = false;
  int rank = 1;       // the nominal winner's rank under the move (1: still first)
  size_t winner = 0;  // index into PlanResult::ranked of the entry first under the move
};

// The sensitivity of a plan's winner, and the robust choice beside it.
struct Sensitivity {
  std::vector<SensitivityCase> cases;  // factor by factor, each's changes ascending
  // Index into PlanResult::ranked of the entry that misses the target in the fewest moves, and
  // of those the one whose worst objective value (cost, or days for a min_time plan) over the
  // nominal plan and every move is least; ties go to the better-ranked entry.
  size_t robust = 0;
  double robust_worst = 0.0;   // its worst objective value (USD or seconds)
  int robust_misses = 0;       // moves under which it misses the target
  double nominal_worst = 0.0;  // the same for the nominal winner (ranked[0])
  int nominal_misses = 0;
};

// Returns the sensitivity of the plan's winner, or nullopt when no entry meets the target.
// Each move re-times every candidate by the analytic estimator's ratio of its time under the
// move to its planned time, applied to the time it ranks on (the event engine's, when
// confirmed); price and failure-rate moves re-rank without a new estimate. Deterministic.
[[nodiscard]] std::optional<Sensitivity> plan_sensitivity(const PlanSpec& plan,
                                                          const PlanResult& result);

// Returns the JSON's "sensitivity" object: "cases" (factor, change, applies, days, cost_usd,
// meets_target, rank, winner's label) and "robust" beside "nominal".
[[nodiscard]] nlohmann::json sensitivity_json(const PlanSpec& plan, const PlanResult& result,
                                              const Sensitivity& sensitivity);

// Returns the table's sensitivity section: one row per factor (the winner's days and cost at
// each move) and the robust choice's line.
[[nodiscard]] std::string sensitivity_table(const PlanSpec& plan, const PlanResult& result,
                                            const Sensitivity& sensitivity);

// Returns the one-line description of a ranked entry the sensitivity outputs use, its layout as
// the tables show it (layout_label): "64 x p5.48xlarge 2/8/32/1/1 spot".
[[nodiscard]] std::string entry_label(const PlanSpec& plan, const PlanResult& result,
                                      const RankedEntry& entry);

}  // namespace capsim::planner
