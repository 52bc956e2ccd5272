#pragma once

#include <vector>

#include "traces/timeline_csv.hpp"

#include "whatif/detail/cluster.hpp"
#include "whatif/detail/gpu_ledger.hpp"
#include "whatif/engine.hpp"

namespace capsim::whatif::detail {

// Appends the cluster's node and job counts at `now` to the timeline; past a cap (a year at
// 30 s) samples are dropped (docs/whatif.md), so a fine interval cannot exhaust memory.
void record_sample(traces::Timeline& timeline, const Cluster& c, int jobs_queued, double now);

// Returns the nearest-rank `q` quantile of `v` (deterministic, no interpolation); 0 if empty.
[[nodiscard]] double percentile(std::vector<double> v, double q);

// Returns the run's result: `counts` (names, event counters, timeline) completed with cost,
// billed and busy GPU-hours, queue waits, job completion times and goodput losses.
[[nodiscard]] PolicyResult summarize(PolicyResult counts, const Cluster& c, const GpuLedger& ledger,
                                     double end_time_s, int jobs_finished);

}  // namespace capsim::whatif::detail
