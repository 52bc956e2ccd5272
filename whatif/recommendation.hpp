#pragma once

#include <optional>
#include <string>
#include <vector>

#include "whatif/results.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// The metrics a what-if's "recommend.by" may rank by (lower is better): cost_usd,
// cost_per_useful_gpu_hour_usd, gpu_hours_billed, queue_wait_mean_s, queue_wait_p95_s,
// end_time_s.
[[nodiscard]] const std::vector<std::string>& recommendation_metrics();

// The policy --emit writes back, by whatif.recommend: among the policies whose every replica
// finished every job (and whose mean p95 queue wait is within max_queue_wait_p95, when set),
// the lowest mean of `by`; ties go to the earlier policy. The oracle preset is never picked (no
// autoscaler runs it). `policies` and `runs` are in the same order.
struct RecommendedPolicy {
  std::size_t index = 0;
  double value = 0.0;  // the mean of `by`
};
// Returns nullopt with `why_none` set when no policy qualifies.
[[nodiscard]] std::optional<RecommendedPolicy> recommend(const WhatIf& whatif,
                                                         const std::vector<PolicySpec>& policies,
                                                         const std::vector<PolicyRuns>& runs,
                                                         std::string& why_none);

}  // namespace capsim::whatif
