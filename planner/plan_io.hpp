#pragma once

#include <string>
#include <string_view>

#include "planner/plan.hpp"

namespace capsim::planner {

inline constexpr const char* kPlanSchema = "capsim.plan/v1";

// Reads a `capsim.plan/v1` file (format: docs/planner.md), checking keys, types, units, ranges
// and cross-field rules; errors are InputErrors naming the file and the JSON pointer. Search
// dimensions the file leaves out default to every sensible value for the model (docs/planner.md).
[[nodiscard]] PlanSpec load_plan(const std::string& path);

// Same, from text attributed to `name` (the embedded default plan, tests).
[[nodiscard]] PlanSpec read_plan_text(std::string_view text, const std::string& name);

// Returns the embedded default plan: a 30B model to 1T tokens in 30 days on p4d.24xlarge,
// p4de.24xlarge or p5.48xlarge, on-demand (also shipped as scenarios/plans/default.json).
[[nodiscard]] std::string_view default_plan_text();

}  // namespace capsim::planner
