#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace capsim::traces {

// One timed slice on a GPU's stream (seconds from the start of the iteration).
struct TraceSlice {
  int track = 0;         // index into ChromeTrace::tracks
  int stream = 0;        // index into ChromeTrace::streams (e.g. 0 compute, 1 communication)
  std::string name;      // "F3", "B3 c1", "DP all-reduce 12"
  std::string category;  // "compute", "tp", "pp", "dp", "optimizer", ...
  double start_s = 0.0;
  double duration_s = 0.0;
};

// A timeline of one simulated iteration: one track per simulated GPU, each with the same
// streams. Plain value type; the writer does not reorder slices.
struct ChromeTrace {
  std::vector<std::string> tracks;   // track names, e.g. "stage 0 (tp 0, dp 0)"
  std::vector<std::string> streams;  // stream names, e.g. {"compute", "communication"}
  std::vector<TraceSlice> slices;
};

// Writes `trace` as Chrome trace event JSON (the "traceEvents" object format that
// chrome://tracing and ui.perfetto.dev load): one process per track, one thread per stream,
// complete ("X") events in microseconds. Output is byte-identical for identical input.
void write_chrome_trace(std::ostream& out, const ChromeTrace& trace);

// A timeline of several jobs' iterations on one fabric, one ChromeTrace per job.
struct JobTrace {
  std::string job;
  const ChromeTrace* trace = nullptr;
};

// Writes `jobs` as one Chrome trace: one process per job, one thread per GPU track and stream
// of that job ("stage 0 tp 0 dp 1 (gpu 9): compute"). Byte-identical for identical input.
void write_job_traces(std::ostream& out, const std::vector<JobTrace>& jobs);

}  // namespace capsim::traces
