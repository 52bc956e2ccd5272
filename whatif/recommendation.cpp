#include "whatif/recommendation.hpp"

#include <cmath>

namespace capsim::whatif {
namespace {

// The value of metric `by` in one run; nullopt when the run has none.
std::optional<double> metric(const PolicyResult& r, const std::string& by) {
  if (by == "cost_usd")
    return r.cost_usd;
  if (by == "cost_per_useful_gpu_hour_usd")
    return r.cost_per_useful_gpu_hour_usd;
  if (by == "gpu_hours_billed")
    return r.gpu_hours_billed;
  if (by == "queue_wait_mean_s")
    return r.queue_wait_mean_s;
  if (by == "queue_wait_p95_s")
    return r.queue_wait_p95_s;
  return r.end_time_s;
}

}  // namespace

const std::vector<std::string>& recommendation_metrics() {
  static const std::vector<std::string> kMetrics{"cost_usd",         "cost_per_useful_gpu_hour_usd",
                                                 "gpu_hours_billed", "queue_wait_mean_s",
                                                 "queue_wait_p95_s", "end_time_s"};
  return kMetrics;
}

std::optional<RecommendedPolicy> recommend(const WhatIf& whatif,
                                           const std::vector<PolicySpec>& policies,
                                           const std::vector<PolicyRuns>& runs,
                                           std::string& why_none) {
  const Recommendation& rec = whatif.recommend;
  std::optional<RecommendedPolicy> best;
  int unfinished = 0;
  int over_wait = 0;
  for (std::size_t p = 0; p < runs.size() && p < policies.size(); ++p) {
    if (policies[p].preset == "oracle" || runs[p].runs.empty())
      continue;
    double sum = 0.0;
    double wait = 0.0;
    bool ok = true;
    for (const auto& r : runs[p].runs) {
      const auto v = metric(r, rec.by);
      if (r.jobs_finished < r.jobs_total || !v) {
        ok = false;
        break;
      }
      sum += *v;
      wait += r.queue_wait_p95_s;
    }
    const double n = static_cast<double>(runs[p].runs.size());
    if (!ok) {
      ++unfinished;
      continue;
    }
    if (rec.max_queue_wait_p95_s && wait / n > *rec.max_queue_wait_p95_s) {
      ++over_wait;
      continue;
    }
    if (!best || sum / n < best->value)
      best = RecommendedPolicy{p, sum / n};
  }
  if (!best) {
    why_none = "no policy qualifies (" + std::to_string(unfinished) + " left jobs unfinished, " +
               std::to_string(over_wait) +
               " exceeded the p95 queue-wait bound; the oracle is never recommended)";
  }
  return best;
}

}  // namespace capsim::whatif
