#include "traces/job_trace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "traces/csv_table.hpp"

#include "io/input_error.hpp"
#include "io/input_file.hpp"
#include "io/text_format.hpp"
#include "io/units.hpp"

namespace capsim::traces {
namespace {

// Days since 1970-01-01 of a civil date (H. Hinnant, "chrono-compatible low-level date
// algorithms", days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3U : 9U)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

int days_in_month(int y, int m) {
  static constexpr std::array<int, 12> kDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[static_cast<std::size_t>(m - 1)];
}

// Parses "YYYY-MM-DD HH:MM:SS" (Philly, Helios) or plain seconds.
std::optional<double> parse_timestamp(const std::string& s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%d-%d-%d %d:%d:%d%c", &y, &mo, &d, &h, &mi, &se, &tail) == 6 &&
      mo >= 1 && mo <= 12 && d >= 1 && d <= days_in_month(y, mo) && h >= 0 && h < 24 && mi >= 0 &&
      mi < 60 && se >= 0 && se <= 60) {
    const auto days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
    return static_cast<double>(days) * 86400.0 + h * 3600.0 + mi * 60.0 + se;
  }
  std::size_t used = 0;
  try {
    const double v = std::stod(s, &used);
    if (used == s.size() && std::isfinite(v))
      return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A job's id from `column`: present and unique within the file (`ids` holds those seen).
std::string job_id(const CsvTable& csv, const CsvRow& row, const std::string& column,
                   std::set<std::string>& ids) {
  const std::string& id = csv.cell(row, column);
  if (id.empty())
    throw csv.error(row.line, "column \"" + column + "\": empty job id");
  if (!ids.insert(id).second)
    throw csv.error(row.line, "column \"" + column + "\": duplicate job id \"" + id + "\"");
  return id;
}

double timestamp(const CsvTable& csv, const CsvRow& row, const std::string& name) {
  const auto t = parse_timestamp(csv.cell(row, name));
  if (!t) {
    throw csv.error(row.line, bad_cell(name, "a time like \"2017-10-09 07:01:55\" or seconds",
                                       csv.cell(row, name)));
  }
  return *t;
}

// The capsim CSV header: known columns only, and either "duration" (rigid jobs) or the
// "scenario" + "tokens" pair (jobs whose run time the simulator derives).
void check_capsim_header(const CsvTable& csv) {
  require_columns(csv, {"job_id", "submit", "gpus"});
  static const std::set<std::string> kAllowed{"job_id",   "submit",   "gpus",
                                              "duration", "scenario", "tokens",
                                              "min_gpus", "max_gpus", "priority"};
  for (const auto& h : csv.header) {
    if (kAllowed.count(h) == 0) {
      throw io::InputError(csv.file, "",
                           "unknown column \"" + h +
                               "\" (allowed: job_id, submit, gpus, "
                               "duration, scenario, tokens, min_gpus, max_gpus, priority)");
    }
  }
  if (csv.has("duration") == csv.has("scenario")) {
    throw io::InputError(csv.file, "",
                         "the header needs either a \"duration\" column (rigid jobs) or "
                         "\"scenario\" and \"tokens\" columns, not both");
  }
  if (csv.has("scenario") != csv.has("tokens")) {
    throw io::InputError(csv.file, "", "columns \"scenario\" and \"tokens\" go together");
  }
}

// An optional integer column: `dflt` when the column is absent or the cell is empty.
int optional_int(const CsvTable& csv, const CsvRow& row, const std::string& name, int min, int max,
                 int dflt) {
  return csv.has(name) && !csv.cell(row, name).empty() ? parse_int(csv, row, name, min, max) : dflt;
}

// gpus, min_gpus and max_gpus (both default to gpus) with min_gpus <= gpus <= max_gpus.
void read_gpu_range(const CsvTable& csv, const CsvRow& row, JobRecord& job) {
  job.gpus = parse_int(csv, row, "gpus", 1, 1 << 20);
  job.min_gpus = optional_int(csv, row, "min_gpus", 1, 1 << 20, job.gpus);
  job.max_gpus = optional_int(csv, row, "max_gpus", 1, 1 << 20, job.gpus);
  if (job.min_gpus > job.gpus || job.gpus > job.max_gpus) {
    throw csv.error(row.line, "min_gpus <= gpus <= max_gpus does not hold: min_gpus " +
                                  std::to_string(job.min_gpus) + ", gpus " +
                                  std::to_string(job.gpus) + ", max_gpus " +
                                  std::to_string(job.max_gpus));
  }
}

// A rigid job's run time from the "duration" column.
double positive_duration(const CsvTable& csv, const CsvRow& row) {
  const auto d = io::units::parse_duration_s(csv.cell(row, "duration"));
  if (!d || *d <= 0) {
    throw csv.error(row.line, bad_cell("duration", "a positive duration like \"2h\"",
                                       csv.cell(row, "duration")));
  }
  if (*d > io::units::kMaxDurationS) {
    throw csv.error(row.line, bad_cell("duration", "a duration of at most \"1e12s\"",
                                       csv.cell(row, "duration")));
  }
  return *d;
}

// A scenario job's work: its scenario file (relative to the trace's folder) and token count.
void read_scenario_work(const CsvTable& csv, const CsvRow& row, const std::filesystem::path& folder,
                        JobRecord& job) {
  const std::string& scenario = csv.cell(row, "scenario");
  if (scenario.empty())
    throw csv.error(row.line, "column \"scenario\": empty scenario path");
  job.scenario_path = (folder / scenario).lexically_normal().string();
  const auto tokens = io::units::parse_count(csv.cell(row, "tokens"));
  if (!tokens || *tokens <= 0) {
    throw csv.error(row.line,
                    bad_cell("tokens", "a positive count like \"50B\"", csv.cell(row, "tokens")));
  }
  if (*tokens > io::units::kMaxCount) {
    throw csv.error(row.line,
                    bad_cell("tokens", "a count of at most \"1e18\"", csv.cell(row, "tokens")));
  }
  job.tokens = *tokens;
}

// One data row of a capsim CSV; the columns are checked in header-independent order so the
// first bad cell reported is always the same.
JobRecord read_capsim_row(const CsvTable& csv, const CsvRow& row,
                          const std::filesystem::path& folder, std::set<std::string>& ids) {
  JobRecord job;
  job.line = row.line;
  job.id = job_id(csv, row, "job_id", ids);
  const auto submit = io::units::parse_duration_s(csv.cell(row, "submit"));
  if (!submit || *submit < 0) {
    throw csv.error(row.line,
                    bad_cell("submit", "a duration like \"90s\"", csv.cell(row, "submit")));
  }
  if (*submit > io::units::kMaxDurationS) {
    throw csv.error(row.line,
                    bad_cell("submit", "a duration of at most \"1e12s\"", csv.cell(row, "submit")));
  }
  job.submit_s = *submit;
  read_gpu_range(csv, row, job);
  job.priority = optional_int(csv, row, "priority", -1000000, 1000000, job.priority);
  if (csv.has("duration")) {
    job.duration_s = positive_duration(csv, row);
  } else {
    read_scenario_work(csv, row, folder, job);
  }
  return job;
}

// Imported durations (seconds, or the gap of two time stamps) within the limit every duration
// has (units.hpp): a 1e308 s job would overflow the clock and the day counts of messages.
void check_durations(const std::vector<JobRecord>& jobs, const std::string& path) {
  for (const JobRecord& j : jobs) {
    if (!(j.duration_s <= io::units::kMaxDurationS)) {
      throw io::InputError(path, "line " + std::to_string(j.line),
                           "job \"" + j.id + "\" runs for " +
                               io::printf_string("%.6g", j.duration_s) +
                               " s; a duration may be at most 1e12 s (about 31,700 years)");
    }
  }
}

// Days in `seconds`, whole, for messages (in powers of ten when beyond any calendar).
std::string day_count(double seconds) {
  const double days = seconds / 86400.0;
  return days < 1e12 ? io::printf_string("%.0f", std::floor(days))
                     : io::printf_string("%.3g", days);
}

std::vector<JobRecord> read_capsim_csv(const CsvTable& csv) {
  check_capsim_header(csv);
  const auto folder = std::filesystem::path(csv.file).parent_path();
  std::vector<JobRecord> jobs;
  std::set<std::string> ids;
  for (const auto& row : csv.rows)
    jobs.push_back(read_capsim_row(csv, row, folder, ids));
  return jobs;
}

std::vector<JobRecord> read_philly(const CsvTable& csv) {
  require_columns(csv, {"timestamp", "duration", "num_gpus"});
  std::vector<JobRecord> jobs;
  for (const auto& row : csv.rows) {
    JobRecord job;
    job.line = row.line;
    job.id = "philly-" + std::to_string(row.line);
    job.submit_s = timestamp(csv, row, "timestamp");
    job.gpus = parse_int(csv, row, "num_gpus", 1, 1 << 20);
    job.min_gpus = job.max_gpus = job.gpus;
    job.duration_s = std::max(1.0, parse_number(csv, row, "duration", 0.0));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<JobRecord> read_openb(const CsvTable& csv) {
  require_columns(
      csv, {"name", "num_gpu", "gpu_milli", "creation_time", "deletion_time", "scheduled_time"});
  std::vector<JobRecord> jobs;
  std::set<std::string> ids;
  for (const auto& row : csv.rows) {
    const int gpus = parse_int(csv, row, "num_gpu", 0, 1 << 20);
    // CPU-only pods and pods that were never scheduled carry no GPU work to replay.
    if (gpus == 0 || csv.cell(row, "scheduled_time").empty())
      continue;
    JobRecord job;
    job.line = row.line;
    job.id = job_id(csv, row, "name", ids);
    job.submit_s = parse_number(csv, row, "creation_time", 0.0);
    const double start = parse_number(csv, row, "scheduled_time", 0.0);
    const double end = parse_number(csv, row, "deletion_time", 0.0);
    if (end < start) {
      throw csv.error(row.line, "deletion_time " + csv.cell(row, "deletion_time") +
                                    " is before scheduled_time " + csv.cell(row, "scheduled_time"));
    }
    // A fractional GPU (gpu_milli < 1000, num_gpu == 1) is replayed as one whole GPU: what-if
    // nodes are allocated by whole GPUs.
    job.gpus = job.min_gpus = job.max_gpus = gpus;
    job.duration_s = std::max(1.0, end - start);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// Nominal work per Pollux application in GPU-hours, at the middle of the size classes of
// Pollux (Qiao et al., OSDI'21, Table 1): cifar10/ncf "small" (0-1 GPU-h), deepspeech2/bert
// "medium" (1-10), yolov3 "large" (10-100), imagenet "XL" (100-1000). The workload file itself
// carries no durations (data/traces/README.md); these are assumptions, see docs/whatif.md.
double pollux_work_gpu_hours(const std::string& application) {
  static const std::map<std::string, double> kWork{{"cifar10", 0.5},     {"ncf", 0.5},
                                                   {"deepspeech2", 3.0}, {"bert", 3.0},
                                                   {"yolov3", 30.0},     {"imagenet", 300.0}};
  const auto it = kWork.find(application);
  return it == kWork.end() ? -1.0 : it->second;
}

std::vector<JobRecord> read_pollux(const CsvTable& csv) {
  require_columns(csv, {"name", "time", "application", "num_replicas"});
  std::vector<JobRecord> jobs;
  std::set<std::string> ids;
  for (const auto& row : csv.rows) {
    JobRecord job;
    job.line = row.line;
    job.id = job_id(csv, row, "name", ids);
    job.submit_s = parse_number(csv, row, "time", 0.0);
    const std::string& app = csv.cell(row, "application");
    const double work = pollux_work_gpu_hours(app);
    if (work < 0) {
      throw csv.error(row.line,
                      "column \"application\": unknown application \"" + app +
                          "\" (known: bert, cifar10, deepspeech2, imagenet, ncf, yolov3)");
    }
    job.gpus = parse_int(csv, row, "num_replicas", 1, 1 << 20);
    // Pollux jobs are elastic: they may shrink to one replica and grow to twice the request.
    job.min_gpus = 1;
    job.max_gpus = std::max(job.gpus, 2 * job.gpus);
    job.duration_s = work * 3600.0 / job.gpus;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<JobRecord> read_helios(const CsvTable& csv, int gpus_per_node) {
  require_columns(csv, {"job_id", "gpu_num", "submit_time"});
  const bool has_duration = csv.has("duration");
  if (!has_duration && !(csv.has("start_time") && csv.has("end_time"))) {
    throw io::InputError(csv.file, "",
                         "missing column \"duration\" (or \"start_time\" and \"end_time\")");
  }
  std::vector<JobRecord> jobs;
  std::set<std::string> ids;
  for (const auto& row : csv.rows) {
    const int gpus = parse_int(csv, row, "gpu_num", 0, 1 << 20);
    if (gpus == 0)
      continue;  // CPU jobs
    double duration = 0.0;
    if (has_duration && !csv.cell(row, "duration").empty()) {
      duration = parse_number(csv, row, "duration", 0.0);
    } else if (csv.has("start_time") && csv.has("end_time") &&
               !csv.cell(row, "start_time").empty() && !csv.cell(row, "end_time").empty()) {
      duration = timestamp(csv, row, "end_time") - timestamp(csv, row, "start_time");
      if (duration < 0)
        throw csv.error(row.line, "end_time is before start_time");
    }
    if (duration <= 0)
      continue;  // never started (cancelled while queued)
    JobRecord job;
    job.line = row.line;
    job.id = job_id(csv, row, "job_id", ids);
    job.submit_s = timestamp(csv, row, "submit_time");
    // Multi-node jobs hold whole nodes in Helios/Acme (node_num is recorded beside gpu_num).
    job.gpus =
        gpus > gpus_per_node ? (gpus + gpus_per_node - 1) / gpus_per_node * gpus_per_node : gpus;
    job.min_gpus = job.max_gpus = job.gpus;
    job.duration_s = duration;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace

const char* to_string(JobTraceFormat format) {
  switch (format) {
    case JobTraceFormat::kCapsimCsv:
      return "capsim-csv";
    case JobTraceFormat::kPhillyPollux:
      return "philly-pollux";
    case JobTraceFormat::kAlibabaOpenb:
      return "alibaba-openb";
    case JobTraceFormat::kPolluxWorkload:
      return "pollux-workload";
    case JobTraceFormat::kHelios:
      return "helios";
  }
  return "?";
}

std::vector<std::string> job_trace_format_names() {
  return {"capsim-csv", "philly-pollux", "alibaba-openb", "pollux-workload", "helios"};
}

bool parse_job_trace_format(const std::string& name, JobTraceFormat& format) {
  for (auto f :
       {JobTraceFormat::kCapsimCsv, JobTraceFormat::kPhillyPollux, JobTraceFormat::kAlibabaOpenb,
        JobTraceFormat::kPolluxWorkload, JobTraceFormat::kHelios}) {
    if (name == to_string(f)) {
      format = f;
      return true;
    }
  }
  return false;
}

std::vector<JobRecord> read_job_trace(const JobTraceOptions& options) {
  std::istringstream in(io::read_input_file(options.path, io::InputKind::kJobTrace));
  return read_job_trace(options, in);
}

std::vector<JobRecord> read_job_trace(const JobTraceOptions& options, std::istream& in) {
  const CsvTable csv = read_csv_table(in, options.path, "the job trace");
  std::vector<JobRecord> jobs;
  switch (options.format) {
    case JobTraceFormat::kCapsimCsv:
      jobs = read_capsim_csv(csv);
      break;
    case JobTraceFormat::kPhillyPollux:
      jobs = read_philly(csv);
      break;
    case JobTraceFormat::kAlibabaOpenb:
      jobs = read_openb(csv);
      break;
    case JobTraceFormat::kPolluxWorkload:
      jobs = read_pollux(csv);
      break;
    case JobTraceFormat::kHelios:
      jobs = read_helios(csv, options.gpus_per_node);
      break;
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const JobRecord& a, const JobRecord& b) { return a.submit_s < b.submit_s; });
  if (options.format != JobTraceFormat::kCapsimCsv && !jobs.empty()) {
    const double t0 = jobs.front().submit_s;
    for (auto& j : jobs)
      j.submit_s -= t0;
  }
  check_durations(jobs, options.path);
  // The span rule holds for the trace as it is replayed, time_scale applied.
  for (auto& j : jobs)
    j.submit_s *= options.time_scale;
  if (!jobs.empty() && !(jobs.back().submit_s <= kMaxTraceSpanS)) {
    throw io::InputError(
        options.path, "line " + std::to_string(jobs.back().line),
        "job \"" + jobs.back().id + "\" is submitted " + day_count(jobs.back().submit_s) +
            " days after the trace starts; a trace may span at most " +
            std::to_string(kMaxTraceSpanDays) +
            (options.time_scale != 1.0 ? " days once time_scale is applied"
                                       : " days (does it mix date-times with plain seconds?)"));
  }
  if (options.limit > 0 && jobs.size() > options.limit)
    jobs.resize(options.limit);
  for (auto& j : jobs) {
    if (options.max_duration_s > 0 && j.duration_s > options.max_duration_s) {
      j.duration_s = options.max_duration_s;
    }
  }
  return jobs;
}

}  // namespace capsim::traces
