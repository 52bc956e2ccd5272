#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/plan.hpp"
#include "planner/planner.hpp"

namespace capsim::planner {

// Analytic screen vs event confirmation gaps above this are listed as disagreements.
inline constexpr double kDisagreementPct = 5.0;

// Returns the JSON of `capsim plan --json` (docs/design/json-output.md §3): best, ranked (first
// `top` entries; 0 = all), pareto, pruned, plus search counts, disagreements and notes; and,
// when some event runs failed, their count and "confirmation_failures" (scenario and error).
// Numbers are rounded to 6 significant digits; output is byte-stable for a given result,
// except the wall-clock timings under "timing" (omitted when `with_timing` is false).
[[nodiscard]] nlohmann::json plan_to_json(const PlanSpec& plan, const PlanResult& result,
                                          size_t top, bool with_timing);

// Returns a layout as the tables show it: TP/PP/DP/CP/VP, a '*' after PP for an uneven split
// of the layers, then " EPn" (and " ETPn" when the experts' tensor degree differs).
[[nodiscard]] std::string layout_label(const Parallelism& p);

// Returns the warnings about the winner: free HBM below the plan's memory_warning_headroom
// (the memory model's estimate is not exact; a caching allocator may need more). Empty when
// there is no winner or none applies.
[[nodiscard]] std::vector<std::string> memory_warnings(const PlanSpec& plan,
                                                       const PlanResult& result);

// Returns the readable report: ranked table, Pareto front, pruned counts, disagreements.
[[nodiscard]] std::string plan_table(const PlanSpec& plan, const PlanResult& result, size_t top);

// Returns why no candidate meets the target, when none does: nothing fits in memory, nothing
// passes the layout rules, or how far the fastest candidate falls short. The table's last line
// and the JSON's "no_best_reason" say it.
[[nodiscard]] std::string no_best_reason(const PlanSpec& plan, const PlanResult& result);

// Returns the winning configuration as a `capsim.scenario/v1` object, or null when no
// candidate meets the target.
[[nodiscard]] nlohmann::json best_scenario_json(const PlanSpec& plan, const PlanResult& result);

}  // namespace capsim::planner
