#include "planner/stage_split.hpp"

#include <algorithm>

#include "estimate/stage_balance.hpp"

namespace capsim::planner {

size_t balance_pool_splits(const PlanSpec& plan, const ProfileMap& profiles,
                           std::vector<ScreenedCandidate>& pool) {
  if (!plan.space.balance_stages || pool.empty())
    return 0;
  // Throughput, not iteration time: a group's candidates may train different batch sizes.
  const double slowest_tokens_per_s = pool.front().analytic.tokens_per_s / kBalanceWindow;
  size_t balanced = 0;
  for (ScreenedCandidate& c : pool) {
    Candidate& candidate = c.candidate;
    if (candidate.parallelism.pipeline <= 1 || c.analytic.tokens_per_s < slowest_tokens_per_s)
      continue;
    const HardwareProfile& profile = profiles.at({candidate.instance, candidate.num_nodes > 1});
    const Scenario sc = candidate_scenario(plan, candidate);
    const auto balance = estimate::balance_stage_layers(
        sc, profile, c.analytic.capacity_bytes - plan.memory_headroom_bytes);
    if (!balance)
      continue;
    candidate.parallelism.stage_layers = balance->stage_layers;
    // The search timed the split already; throughput and MFU go as one over the step time.
    const double speedup = c.analytic.iteration_time_s / balance->iteration_time_s;
    c.analytic.iteration_time_s = balance->iteration_time_s;
    c.analytic.tokens_per_s *= speedup;
    c.analytic.mfu *= speedup;
    c.analytic.peak_memory_bytes = balance->peak_bytes;
    ++balanced;
  }
  std::stable_sort(pool.begin(), pool.end(), faster);
  return balanced;
}

}  // namespace capsim::planner
