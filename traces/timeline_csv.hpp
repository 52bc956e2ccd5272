#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace capsim::traces {

// One sample of a cluster's state during a what-if run: node counts by state, GPUs in use and
// the job queue. Plain value type.
struct TimelineSample {
  double time_s = 0.0;
  int nodes_booting = 0;   // launched, billed, not yet ready
  int nodes_idle = 0;      // ready, no job
  int nodes_busy = 0;      // ready, at least one job
  int nodes_draining = 0;  // cordoned (spot notice, scale-down) or shutting down
  int nodes_failed = 0;    // in repair
  int gpus_busy = 0;
  int jobs_running = 0;
  int jobs_queued = 0;
};

// A named series of samples (one what-if policy run).
struct Timeline {
  std::string name;
  std::vector<TimelineSample> samples;
};

// Writes the timelines as one CSV with a header row: series,time_s,nodes_booting,nodes_idle,
// nodes_busy,nodes_draining,nodes_failed,gpus_busy,jobs_running,jobs_queued.
void write_timeline_csv(std::ostream& out, const std::vector<Timeline>& timelines);

}  // namespace capsim::traces
