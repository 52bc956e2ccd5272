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
    // A split that evened the stages' work runs at most busiest/mean faster: a candidate that
    // would stay out of the window even so keeps its split.
    if (candidate.parallelism.pipeline <= 1 ||
        c.analytic.tokens_per_s * c.analytic.busiest_over_mean_busy < slowest_tokens_per_s)
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
    c.analytic.busiest_over_mean_busy = 1.0;
    ++balanced;
  }
  std::stable_sort(pool.begin(), pool.end(), faster);
  return balanced;
}

}  // namespace capsim::planner
