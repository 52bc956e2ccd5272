#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planner/plan.hpp"
#include "planner/planner.hpp"

namespace capsim::planner {

// One instance and pricing option of a plan over several: its cheapest and its fastest entry
// that meet the target (indices into PlanResult::ranked), and what makes the cheapest cheap:
// the GPU-hour price against the tokens each GPU trains per second.
struct InstanceOption {
  size_t instance = 0;  // index into PlanSpec::instances
  PriceOption price;
  std::optional<size_t> cheapest;  // none: no entry of this option meets the target
  std::optional<size_t> fastest;
  double usd_per_gpu_hour = 0.0;
  double tokens_per_s_per_gpu = 0.0;    // of the cheapest, steady state
  double usd_per_million_tokens = 0.0;  // of the cheapest: GPU-hour price / tokens per GPU-hour
};

// The options in the order of the plan's instances, then its pricing list.
[[nodiscard]] std::vector<InstanceOption> compare_instances(const PlanSpec& plan,
                                                            const PlanResult& result);

// The two lines that say which option wins on cost (with its tokens per GPU-second and GPU-hour
// price against the best other instance's) and which on time; empty when none meets the target.
[[nodiscard]] std::vector<std::string> instance_verdicts(
    const PlanSpec& plan, const PlanResult& result, const std::vector<InstanceOption>& options);

// The comparison as the plan's table prints it ("by instance"), with a line saying which option
// wins on cost and which on time, and why; empty when the plan offers a single instance.
[[nodiscard]] std::string instance_comparison_table(const PlanSpec& plan, const PlanResult& result);

}  // namespace capsim::planner
