#include "whatif/detail/run_state.hpp"

#include <algorithm>

#include "whatif/detail/node_launch.hpp"
#include "whatif/detail/node_removal.hpp"
#include "whatif/detail/placement.hpp"

namespace capsim::whatif::detail {
namespace {

// Returns a SplitMix64-finalised seed (Steele et al., OOPSLA'14): it decorrelates the
// per-purpose random streams drawn from one run seed.
std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

RunState::RunState(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed)
    : w(whatif),
      loop(policy.loop),
      rng_provisioning(mix(seed, 1)),
      rng_failure(mix(seed, 2)),
      rng_spot(mix(seed, 3)),
      rng_repair(mix(seed, 4)),
      cluster(whatif),
      autoscaler(cluster, queue, loop, *this) {
  result.name = policy.name;
  result.preset = policy.preset;
  result.seed = seed;
  result.timeline.name = policy.name;
  result.jobs_total = static_cast<int>(whatif.jobs.size());
  double last_submit = 0.0;
  for (const auto& j : whatif.jobs)
    last_submit = std::max(last_submit, j.submit_s);
  horizon_s = whatif.horizon_s > 0 ? whatif.horizon_s : last_submit + 365 * 86400.0;
  cluster.jobs.resize(whatif.jobs.size());
  for (std::size_t i = 0; i < whatif.jobs.size(); ++i) {
    auto& j = cluster.jobs[i];
    j.rec = &whatif.jobs[i];
    j.remaining = j.saved_remaining = work_of(*j.rec);
  }
}

void RunState::release(int j) {
  ledger.count_held(cluster, cluster.job(j), now());
  release_pieces(cluster, j);
  changed();
}

void RunState::enqueue(int j) {
  Job& job = cluster.job(j);
  job.state = JobState::kQueued;
  cluster.running_jobs.erase(j);
  job.queued_at = now();
  queue.add(j, job);
  changed();
}

bool RunState::launch(int pool) {
  return launch_node(*this, pool, false);
}

void RunState::scale_down(int id) {
  scale_down_node(*this, id);
}

}  // namespace capsim::whatif::detail
