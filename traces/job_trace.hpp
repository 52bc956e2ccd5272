#pragma once

#include <istream>
#include <string>
#include <vector>

namespace capsim::traces {

// One job of a what-if trace, whatever format it came from. Times in seconds from the trace
// start. A rigid job carries `duration_s` (wall time at `gpus`); a scenario job carries a
// scenario file and the tokens to train. Elastic jobs have min_gpus < max_gpus.
struct JobRecord {
  std::string id;
  double submit_s = 0.0;
  int gpus = 1;  // requested at submission
  int min_gpus = 1;
  int max_gpus = 1;
  double duration_s = 0.0;    // rigid work: wall time at `gpus`; 0 for scenario jobs
  std::string scenario_path;  // resolved against the trace's folder; empty for rigid jobs
  double tokens = 0.0;        // work of a scenario job
  int priority = 0;
  int line = 0;  // the trace line it was read from (1-based), for error messages

  [[nodiscard]] bool is_elastic() const { return min_gpus != max_gpus; }
};

enum class JobTraceFormat { kCapsimCsv, kPhillyPollux, kAlibabaOpenb, kPolluxWorkload, kHelios };

// How to read a trace file and map it onto JobRecords.
// Submit times lie within this many seconds of the first: keeps the event loop finite and
// catches a file that mixes date-times with plain seconds (tens of years apart).
inline constexpr int kMaxTraceSpanDays = 3650;
inline constexpr double kMaxTraceSpanS = kMaxTraceSpanDays * 86400.0;

struct JobTraceOptions {
  JobTraceFormat format = JobTraceFormat::kCapsimCsv;
  std::string path;
  std::size_t limit = 0;        // keep the first `limit` jobs by submit time; 0 keeps all
  double time_scale = 1.0;      // multiplies submit offsets (0.5 compresses arrivals 2x)
  double max_duration_s = 0.0;  // clips imported durations; 0 keeps them
  int gpus_per_node = 8;        // Helios/Acme jobs bigger than a node round up to whole nodes
};

// Returns the canonical name of a format ("capsim-csv", "philly-pollux", ...).
[[nodiscard]] const char* to_string(JobTraceFormat format);
// Returns every format name, for error messages.
[[nodiscard]] std::vector<std::string> job_trace_format_names();
// Parses a format name; returns false when unknown.
[[nodiscard]] bool parse_job_trace_format(const std::string& name, JobTraceFormat& format);

// Reads a job trace and returns its jobs sorted by submit time (ties keep file order), with
// submit offsets starting at 0 for imported formats. Throws InputError naming the file, the
// line and the column of the first bad field.
[[nodiscard]] std::vector<JobRecord> read_job_trace(const JobTraceOptions& options);
// Same, from a stream whose text is attributed to options.path (embedded traces, tests).
[[nodiscard]] std::vector<JobRecord> read_job_trace(const JobTraceOptions& options,
                                                    std::istream& in);

}  // namespace capsim::traces
