#pragma once

// The planner's layer-split step: the screen costs each layout with its even (or Megatron's)
// split; the leading pipelined candidates of a group are then given the split that evens their
// stages' work when the estimator times it faster (estimate/stage_balance.hpp).

#include <cstddef>
#include <vector>

#include "planner/planner.hpp"
#include "planner/screen.hpp"

namespace capsim::planner {

// Candidates that an evened split could bring within this factor of their group's fastest
// throughput get a balanced split tried: a better split usually gains a few percent (about a
// layer's work on the busiest stage), so slower ones would not overtake the leader.
inline constexpr double kBalanceWindow = 1.1;

// Rebalances the layer split of `pool`'s pipelined candidates (sorted fastest first) whose
// throughput times their busiest stage's share over the mean (the most an even split could
// give) reaches within kBalanceWindow of the fastest, keeping their memory under the plan's
// headroom; updates their screen evaluation and re-sorts the pool. Returns how many got a
// faster split.
size_t balance_pool_splits(const PlanSpec& plan, const ProfileMap& profiles,
                           std::vector<ScreenedCandidate>& pool);

}  // namespace capsim::planner
