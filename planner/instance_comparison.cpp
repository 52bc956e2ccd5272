#include "planner/instance_comparison.hpp"

#include <string>
#include <vector>

#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

bool same_option(const InstanceOption& o, const ScreenedCandidate& c, const RankedEntry& r) {
  return static_cast<size_t>(c.candidate.instance) == o.instance &&
         r.price.pricing == o.price.pricing;
}

// "<instance> (<pricing>)", as the option's rows name it.
std::string option_name(const PlanSpec& plan, const InstanceOption& o) {
  return plan.instances[o.instance].name + " (" + to_string(o.price.pricing) + ")";
}

}  // namespace

std::vector<InstanceOption> compare_instances(const PlanSpec& plan, const PlanResult& result) {
  std::vector<InstanceOption> out;
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    const InstanceSpec* spec = plan.catalog.find_instance(plan.instances[i].name);
    for (const PriceOption& price : plan.instances[i].prices) {
      InstanceOption o;
      o.instance = i;
      o.price = price;
      o.usd_per_gpu_hour = spec != nullptr && spec->gpus_per_node > 0
                               ? price.usd_per_node_hour / spec->gpus_per_node
                               : 0.0;
      // The ranking is by objective; each option's cheapest and fastest are found by value, the
      // first of equals kept (the ranking's order breaks ties deterministically).
      for (size_t k = 0; k < result.ranked.size(); ++k) {
        const RankedEntry& r = result.ranked[k];
        const ScreenedCandidate& c = result.candidates[r.candidate];
        if (!r.meets_target || !same_option(o, c, r))
          continue;
        if (!o.cheapest || r.cost_usd < result.ranked[*o.cheapest].cost_usd)
          o.cheapest = k;
        if (!o.fastest || r.wall_time_s < result.ranked[*o.fastest].wall_time_s)
          o.fastest = k;
      }
      if (o.cheapest) {
        const ScreenedCandidate& c = result.candidates[result.ranked[*o.cheapest].candidate];
        const Evaluation& e = c.final_evaluation();
        o.tokens_per_s_per_gpu = e.tokens_per_s / c.candidate.parallelism.num_gpus();
        if (o.tokens_per_s_per_gpu > 0.0)
          o.usd_per_million_tokens = o.usd_per_gpu_hour / (o.tokens_per_s_per_gpu * 3600.0) * 1e6;
      }
      out.push_back(o);
    }
  }
  return out;
}

std::vector<std::string> instance_verdicts(const PlanSpec& plan, const PlanResult& result,
                                           const std::vector<InstanceOption>& options) {
  const InstanceOption* by_cost = nullptr;
  const InstanceOption* by_time = nullptr;
  for (const InstanceOption& o : options) {
    if (!o.cheapest)
      continue;
    if (by_cost == nullptr ||
        result.ranked[*o.cheapest].cost_usd < result.ranked[*by_cost->cheapest].cost_usd)
      by_cost = &o;
    if (by_time == nullptr ||
        result.ranked[*o.fastest].wall_time_s < result.ranked[*by_time->fastest].wall_time_s)
      by_time = &o;
  }
  if (by_cost == nullptr)
    return {};
  // Why the cheapest wins: its price per GPU-hour over the tokens a GPU trains, against the best
  // other instance's (cost = GPU-hours x price, and GPU-hours = tokens / tokens per GPU-hour).
  const InstanceOption* runner_up = nullptr;
  for (const InstanceOption& o : options) {
    if (o.instance != by_cost->instance && o.cheapest &&
        (runner_up == nullptr ||
         result.ranked[*o.cheapest].cost_usd < result.ranked[*runner_up->cheapest].cost_usd))
      runner_up = &o;
  }
  std::string cheapest =
      "cheapest: " + option_name(plan, *by_cost) +
      io::printf_string(", $%.3f per million tokens", by_cost->usd_per_million_tokens);
  if (runner_up != nullptr) {
    cheapest += io::printf_string(
        " against $%.3f on %s: %.2fx the tokens per GPU-second for %.2fx the GPU-hour price",
        runner_up->usd_per_million_tokens, option_name(plan, *runner_up).c_str(),
        by_cost->tokens_per_s_per_gpu / runner_up->tokens_per_s_per_gpu,
        by_cost->usd_per_gpu_hour / runner_up->usd_per_gpu_hour);
  }
  // Why the fastest wins: how many GPUs it could use and what each trains at that size.
  const RankedEntry& fastest = result.ranked[*by_time->fastest];
  const ScreenedCandidate& fast = result.candidates[fastest.candidate];
  const int gpus = fast.candidate.parallelism.num_gpus();
  return {cheapest, "fastest: " + option_name(plan, *by_time) +
                        io::printf_string(", %.2f days all-in on %d GPUs at %.0f tokens/s per GPU",
                                          fastest.wall_time_s / kDay, gpus,
                                          fast.final_evaluation().tokens_per_s / gpus)};
}

std::string instance_comparison_table(const PlanSpec& plan, const PlanResult& result) {
  if (plan.instances.size() < 2)
    return {};
  const std::vector<InstanceOption> options = compare_instances(plan, result);
  std::string out =
      "\nby instance (the cheapest and the fastest configuration of each that meet the target):\n"
      "  instance            pricing         $/GPU-h  cheapest: GPUs  tokens/s/GPU  $/M tokens  "
      "all-in d      cost $   fastest: GPUs  all-in d      cost $\n";
  for (const InstanceOption& o : options) {
    out += io::printf_string("  %-19s %-14s %8.2f", plan.instances[o.instance].name.c_str(),
                             to_string(o.price.pricing), o.usd_per_gpu_hour);
    if (!o.cheapest) {
      out += "  none meets the target\n";
      continue;
    }
    const RankedEntry& cheap = result.ranked[*o.cheapest];
    const RankedEntry& fast = result.ranked[*o.fastest];
    out += io::printf_string("  %14d  %12.0f  %10.3f  %8.2f  %10.0f  %13d  %8.2f  %10.0f\n",
                             result.candidates[cheap.candidate].candidate.parallelism.num_gpus(),
                             o.tokens_per_s_per_gpu, o.usd_per_million_tokens,
                             cheap.wall_time_s / kDay, cheap.cost_usd,
                             result.candidates[fast.candidate].candidate.parallelism.num_gpus(),
                             fast.wall_time_s / kDay, fast.cost_usd);
  }
  for (const std::string& verdict : instance_verdicts(plan, result, options))
    out += "  " + verdict + "\n";
  return out;
}

}  // namespace capsim::planner
