#include "whatif/detail/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace capsim::whatif::detail {
namespace {

constexpr std::size_t kMaxTimelineSamples = 1'000'000;

// Adds each pool's cost and returns the GPU-seconds billed.
double bill(PolicyResult& r, const Cluster& c, double end_time_s) {
  double billed_gpu_s = 0.0;
  for (std::size_t p = 0; p < c.pools.size(); ++p) {
    const auto& spec = c.w.pools[p];
    // A capacity block or a reservation is paid for every node it holds for the whole run, used
    // or not.
    const double node_s =
        is_committed(spec.pricing) ? spec.max_nodes * end_time_s : c.pools[p].billed_s;
    const double cost = node_s / 3600.0 * spec.price_usd_per_hour;
    r.cost_by_pricing_usd[to_string(spec.pricing)] += cost;
    r.cost_usd += cost;
    billed_gpu_s += node_s * spec.gpus_per_node();
  }
  return billed_gpu_s;
}

// Sets the queue-wait and job-completion-time statistics of the jobs submitted by the end.
void time_jobs(PolicyResult& r, const Cluster& c, double end_time_s) {
  std::vector<double> waits, jcts;
  for (const auto& j : c.jobs) {
    if (j.rec->submit_s > end_time_s)
      continue;  // after the horizon
    // Jobs that never started count with the wait they had when the run ended (censored).
    waits.push_back((j.first_start >= 0 ? j.first_start : end_time_s) - j.rec->submit_s);
    if (j.state == JobState::kDone)
      jcts.push_back(j.end - j.rec->submit_s);
  }
  r.queue_wait_p50_s = percentile(waits, 0.50);
  r.queue_wait_p95_s = percentile(waits, 0.95);
  r.queue_wait_max_s = waits.empty() ? 0.0 : *std::max_element(waits.begin(), waits.end());
  r.queue_wait_p99_s = percentile(waits, 0.99);
  double wait_sum = 0.0;
  for (const double w : waits)
    wait_sum += w;
  r.queue_wait_mean_s = waits.empty() ? 0.0 : wait_sum / static_cast<double>(waits.size());
  if (!jcts.empty()) {
    r.jct_p50_s = percentile(jcts, 0.50);
    r.jct_p95_s = percentile(jcts, 0.95);
    r.jct_max_s = *std::max_element(jcts.begin(), jcts.end());
  }
}

}  // namespace

void record_sample(traces::Timeline& timeline, const Cluster& c, int jobs_queued, double now) {
  if (timeline.samples.size() >= kMaxTimelineSamples)
    return;
  traces::TimelineSample s;
  s.time_s = now;
  for (const auto& n : c.nodes) {
    switch (n.state) {
      case NodeState::kBooting:
        ++s.nodes_booting;
        break;
      case NodeState::kReady:
        ++(n.jobs.empty() ? s.nodes_idle : s.nodes_busy);
        break;
      case NodeState::kDraining:
      case NodeState::kShutdown:
        ++s.nodes_draining;
        break;
      case NodeState::kFailed:
        ++s.nodes_failed;
        break;
      case NodeState::kOff:
        break;
    }
  }
  for (const int j : c.running_jobs) {
    ++s.jobs_running;
    s.gpus_busy += c.job(j).gpus;
  }
  s.jobs_queued = jobs_queued;
  timeline.samples.push_back(s);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

PolicyResult summarize(PolicyResult counts, const Cluster& c, const GpuLedger& ledger,
                       double end_time_s, int jobs_finished) {
  PolicyResult r = std::move(counts);
  r.end_time_s = end_time_s;
  const double billed_gpu_s = bill(r, c, end_time_s);
  r.gpu_hours_billed = billed_gpu_s / 3600.0;
  r.gpu_hours_busy = ledger.busy_gpu_s() / 3600.0;
  r.utilization = billed_gpu_s > 0 ? ledger.busy_gpu_s() / billed_gpu_s : 0.0;
  time_jobs(r, c, end_time_s);
  r.jobs_finished = jobs_finished;
  r.lost = ledger.lost();
  const double useful_gpu_hours = r.gpu_hours_busy - r.lost.total();
  if (useful_gpu_hours > 0.0)
    r.cost_per_useful_gpu_hour_usd = r.cost_usd / useful_gpu_hours;
  return r;
}

}  // namespace capsim::whatif::detail
