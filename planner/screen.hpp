#pragma once

// The analytic screen: every layout of the plan's search space, enumerated in a fixed order,
// pruned (counted per reason) or costed by the analytic estimator on worker threads, each work
// item keeping its fastest candidates for the planner to confirm.

#include <map>
#include <utility>
#include <vector>

#include "models/hardware_profile.hpp"
#include "planner/planner.hpp"

namespace capsim::planner {

// One unit of screening work: a (tensor, pipeline) pair on one (instance, node count).
struct WorkItem {
  int instance = 0;
  int nodes_index = 0;
  int tensor = 1;
  int pipeline = 1;
};

// What screening one work item found: its pruning counts and its fastest candidates.
struct ItemResult {
  PruneCounts pruned;
  long long enumerated = 0;
  long long screened = 0;
  long long bounded = 0;  // of them, settled by a lower bound on their time
  // Pipelined layouts that fit only with their layers split otherwise (screened so).
  long long fitted_splits = 0;
  std::vector<ScreenedCandidate> top;  // best K by analytic throughput
};

// Profiles per (instance, multi-node): resolving one parses JSON, so each is resolved once.
using ProfileMap = std::map<std::pair<int, bool>, HardwareProfile>;

// The screen's input: the work items in enumeration order and the profiles they use.
struct ScreenWork {
  ProfileMap profiles;
  std::vector<WorkItem> items;
};

// True when a beats b: higher throughput, then earlier in enumeration order.
[[nodiscard]] bool faster(const ScreenedCandidate& a, const ScreenedCandidate& b);

// Inserts `c` into `top` (sorted by faster()) when it is among the k fastest.
void keep_best(std::vector<ScreenedCandidate>& top, ScreenedCandidate c, size_t k);

// Returns one work item per (instance, node count, tensor, pipeline) in the search's fixed
// order (the order numbers candidates), resolving each profile the first time it is needed.
[[nodiscard]] ScreenWork enumerate_work(const PlanSpec& plan);

// Returns each item's `pool` fastest candidates, in item order, screened on options.jobs
// threads (options.progress redraws while they run); rethrows the first exception a worker met.
[[nodiscard]] std::vector<ItemResult> screen_all(const PlanSpec& plan, const ScreenWork& work,
                                                 size_t pool, double need,
                                                 const PlanOptions& options);

}  // namespace capsim::planner
