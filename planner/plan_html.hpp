#pragma once

#include <string>

#include "planner/plan.hpp"
#include "planner/planner.hpp"

namespace capsim::planner {

// Returns the self-contained HTML page of `capsim plan --report` (docs/planner.md, "HTML
// report"): the headline, the ranked table (first `top` entries; 0 = all), the Pareto front as
// an SVG chart, the winner's time breakdown (its iteration's parts from the analytic engine,
// scaled to its confirmed iteration time, then the goodput losses), its memory per GPU against
// capacity, its Megatron-LM arguments, and what the search left out and why. No scripts, no
// external resources; byte-stable for a given result.
[[nodiscard]] std::string plan_html(const PlanSpec& plan, const PlanResult& result, size_t top);

}  // namespace capsim::planner
