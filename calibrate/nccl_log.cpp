#include "calibrate/nccl_log.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "io/input_error.hpp"
#include "io/input_file.hpp"
#include "io/text_check.hpp"
#include "io/units.hpp"

namespace capsim::calibrate {
namespace {

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0)
      ++i;
    const size_t start = i;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) == 0)
      ++i;
    if (i > start)
      out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool is_integer(std::string_view s) {
  if (s.empty())
    return false;
  size_t i = (s.front() == '-') ? 1 : 0;
  if (i == s.size())
    return false;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

std::optional<double> to_number(std::string_view s) {
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// nccl-tests datatype names (src/common.cu test_typenames), plus older spellings.
bool is_type_name(std::string_view s) {
  static const std::set<std::string_view> kTypes{
      "int8",   "uint8",    "int32",    "uint32",   "int64",  "uint64", "half", "float",
      "double", "bfloat16", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2", "int",  "uint"};
  return kTypes.count(s) > 0;
}

bool is_redop(std::string_view s) {
  return s == "sum" || s == "prod" || s == "max" || s == "min" || s == "avg" || s == "none" ||
         s == "mulsum" || s == "premulsum";
}

[[noreturn]] void fail_at(const std::string& name, int line, const std::string& message) {
  throw io::InputError(name, std::to_string(line), message);
}

// Collective from the test binary name or the file name (all_reduce_perf, *_allreduce_*).
std::optional<CollectiveKind> collective_from_text(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  lower.erase(std::remove(lower.begin(), lower.end(), '_'), lower.end());
  static const std::array<std::pair<const char*, CollectiveKind>, 6> kNames{{
      {"allreduce", CollectiveKind::kAllReduce},
      {"allgather", CollectiveKind::kAllGather},
      {"reducescatter", CollectiveKind::kReduceScatter},
      {"alltoall", CollectiveKind::kAllToAll},
      {"broadcast", CollectiveKind::kBroadcast},
      {"sendrecv", CollectiveKind::kSendRecv},
  }};
  for (const auto& [key, kind] : kNames) {
    if (lower.find(key) != std::string::npos)
      return kind;
  }
  return std::nullopt;
}

double ratio_for(CollectiveKind kind, int n) {
  return kind == CollectiveKind::kAllReduce ? 2.0 * (n - 1) / n : (n - 1.0) / n;
}

// Rank counts consistent with busbw/algbw = factor(n) given the printed 2-decimal rounding
// (docs/design/nccl-tests-format.md §4, §6 item 6). Large n are indistinguishable (2(n-1)/n
// flattens), so the caller breaks ties.
std::vector<int> ranks_from_ratio(CollectiveKind kind, double algbw, double busbw) {
  if (kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kSendRecv)
    return {};
  const double lo = (busbw - 0.005) / (algbw + 0.005);
  const double hi = (busbw + 0.005) / (algbw - 0.005);
  std::vector<int> out;
  for (int n = 2; n <= 65536; ++n) {
    const double r = ratio_for(kind, n);
    if (r >= lo - 1e-12 && r <= hi + 1e-12)
      out.push_back(n);
    if (r > hi)
      break;
  }
  return out;
}

struct Row {
  CollectiveSample sample;
  double algbw = 0.0;
  double busbw = 0.0;
};

// Parses a data row (docs/design/nccl-tests-format.md §6 item 4): size count type [redop] [root]
// then 4 fields per variant (time algbw busbw #wrong|error), out-of-place and optionally in-place.
// `root_column`: whether the log's column header names a root column (unset without a header):
// with it known, a row cut short cannot pass for a row without one.
Row parse_row(const std::vector<std::string_view>& t, const std::string& name, int line,
              std::optional<bool> root_column) {
  size_t i = 3;
  if (i < t.size() && is_redop(t[i]))
    ++i;
  std::vector<std::string_view> rest(t.begin() + static_cast<std::ptrdiff_t>(i), t.end());
  const size_t fields = rest.size();
  const bool has_root = root_column.value_or(fields == 9 || fields == 5);
  if (has_root && !rest.empty())
    rest.erase(rest.begin());
  if (rest.size() != 8 && rest.size() != 4) {
    fail_at(name, line,
            "data row has " + std::to_string(fields) + " fields after the datatype, expected " +
                (has_root ? "9 (the root, then time algbw busbw #wrong out-of-place and "
                            "in-place; an optional redop before them)"
                          : "8 (time algbw busbw #wrong, out-of-place then in-place; an "
                            "optional redop and root before them)"));
  }
  auto number = [&](size_t k, const char* what) {
    auto v = to_number(rest[k]);
    if (!v || *v < 0.0) {
      fail_at(
          name, line,
          std::string("expected a number for ") + what + ", got \"" + std::string(rest[k]) + "\"");
    }
    return *v;
  };
  Row row;
  row.sample.line = line;
  const auto bytes = to_number(t[0]);
  // Within the size limit of every input (units.hpp): message sizes are printed as integers.
  if (!bytes || *bytes < 0.0 || *bytes > io::units::kMaxSizeBytes)
    fail_at(name, line, "size out of range: \"" + std::string(t[0]) + "\"");
  row.sample.bytes = *bytes;
  row.sample.time_s = number(0, "the out-of-place time (us)") * 1e-6;
  row.algbw = number(1, "the out-of-place algbw (GB/s)");
  row.busbw = number(2, "the out-of-place busbw (GB/s)");
  if (rest.size() == 8)
    row.sample.time_in_place_s = number(4, "the in-place time (us)") * 1e-6;
  if (row.sample.bytes > 0.0 && row.sample.time_s <= 0.0) {
    fail_at(name, line, "time must be positive for a non-empty message");
  }
  // Nothing crosses a GPU in under a nanosecond (nccl-tests prints 0.01 us at best); below it
  // the fit's relative weights overflow. 0 in-place means not measured.
  for (const double seconds : {row.sample.time_s, row.sample.time_in_place_s}) {
    if ((seconds > 0.0 && seconds < 1e-9) || seconds > 1e6)
      fail_at(name, line, "time out of range [0.001 us, 1e12 us]");
  }
  return row;
}

}  // namespace

double CollectiveSample::best_time_s() const {
  if (time_in_place_s > 0.0)
    return std::min(time_s, time_in_place_s);
  return time_s;
}

std::string_view strip_launcher_prefix(std::string_view line) {
  // Open MPI --tag-output: "[1,0]<stdout>:".
  if (!line.empty() && line.front() == '[') {
    const size_t close = line.find("]<std");
    if (close != std::string_view::npos) {
      const size_t colon = line.find(">:", close);
      if (colon != std::string_view::npos)
        return line.substr(colon + 2);
    }
  }
  // srun --label: "0: " or " 0: " (digits then a colon).
  size_t i = 0;
  while (i < line.size() && line[i] == ' ')
    ++i;
  const size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0)
    ++i;
  if (i > digits && i < line.size() && line[i] == ':') {
    line.remove_prefix(i + 1);
    if (!line.empty() && line.front() == ' ')
      line.remove_prefix(1);
  }
  return line;
}

namespace {

// What the line scan of one log collects before shape inference.
struct LogScan {
  std::optional<CollectiveKind> kind;
  int header_threads = 0;
  int header_gpus = 0;
  bool rank_lines_elided = false;
  std::optional<bool> root_column;  // from the column header ("size count type redop root ...")
  int empty_rows = 0;               // size-0 rows, skipped
  std::vector<std::string> hosts;   // one per Rank line
  std::vector<Row> rows;
};

void read_version(std::string_view line, CollectiveCurve& curve) {
  static const std::regex kNcclVersion(R"(NCCL (?:version |v)?(\d+\.\d+\.\d+))");
  static const std::regex kLibraryCode(R"(nccl-library=(\d+))");
  // libstdc++'s regex recurses per character: a pathological line would exhaust the stack.
  if (!curve.nccl_version.empty() || line.size() > 1024)
    return;
  std::smatch m;
  const std::string owned(line);
  if (std::regex_search(owned, m, kNcclVersion)) {
    curve.nccl_version = m[1].str();
  } else if (std::regex_search(owned, m, kLibraryCode)) {
    int code = 0;  // major*10000 + minor*100 + patch (>= 2.9)
    const std::string digits = m[1].str();
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), code);
    if (error == std::errc() && end == digits.data() + digits.size()) {
      curve.nccl_version = std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) +
                           "." + std::to_string(code % 100);
    }
  }
}

// A '#' line (or the legacy header without '#'): notes, collective, nThread/nGpus, Rank lines.
void read_comment(std::string_view body, LogScan& scan, CollectiveCurve& curve) {
  if (body.rfind("SOURCE:", 0) == 0 || body.rfind("HARDWARE:", 0) == 0) {
    curve.notes.emplace_back(body);
  } else if (body.rfind("Collective test starting:", 0) == 0) {
    scan.kind = collective_from_text(body);
  } else if (body.rfind("nThread", 0) == 0) {
    const auto t = split_ws(body);
    for (size_t i = 0; i + 1 < t.size(); ++i) {
      // Counts beyond any machine are not counts: read as absent.
      const double value = to_number(t[i + 1]).value_or(0.0);
      const int count = value >= 1.0 && value <= 1e6 ? static_cast<int>(value) : 0;
      if (t[i] == "nThread")
        scan.header_threads = count;
      if (t[i] == "nGpus")
        scan.header_gpus = count;
    }
  } else if (body.rfind("size", 0) == 0 && body.find("count") != std::string_view::npos) {
    const auto t = split_ws(body);
    scan.root_column = std::find(t.begin(), t.end(), "root") != t.end();
  } else if (body.rfind("Rank", 0) == 0) {
    const auto t = split_ws(body);
    auto on = std::find(t.begin(), t.end(), "on");
    if (on != t.end() && on + 1 != t.end())
      scan.hosts.emplace_back(*(on + 1));
    const size_t bracket = body.find(']');
    if (curve.gpu.empty() && bracket != std::string_view::npos) {
      curve.gpu = std::string(io::units::trim(body.substr(bracket + 1)));
    }
  }
}

LogScan scan_lines(std::string_view text, const std::string& name, CollectiveCurve& curve) {
  LogScan scan;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!raw.empty() && raw.back() == '\r')
      raw.remove_suffix(1);
    const std::string_view line = io::units::trim(strip_launcher_prefix(raw));
    if (line.empty())
      continue;
    read_version(line, curve);
    if (line.front() == '#' || line.rfind("nThread", 0) == 0) {
      read_comment(io::units::trim(line.front() == '#' ? line.substr(1) : line), scan, curve);
      continue;
    }
    if (line == "..." && !scan.hosts.empty() && scan.rows.empty())
      scan.rank_lines_elided = true;
    const auto t = split_ws(line);
    if (t.size() < 3 || !is_integer(t[0]) || !is_integer(t[1]) || !is_type_name(t[2])) {
      continue;  // foreign text: NCCL INFO, MPI help, SHARP lines, "..." elisions
    }
    Row row = parse_row(t, name, line_no, scan.root_column);
    // nccl-tests prints size-0 rows where the count per rank rounds down to 0 (all-gather,
    // reduce-scatter, alltoall from small sizes on many ranks): no measurement, not a sweep.
    if (row.sample.bytes == 0.0) {
      ++scan.empty_rows;
      continue;
    }
    if (!scan.rows.empty() && row.sample.bytes <= scan.rows.back().sample.bytes) {
      fail_at(name, line_no,
              "size " + std::string(t[0]) + " does not increase (previous row has " +
                  std::to_string(static_cast<long long>(scan.rows.back().sample.bytes)) +
                  "); one log must hold one sweep");
    }
    scan.rows.push_back(row);
  }
  return scan;
}

// The row with the largest algbw (at least 0.5 GB/s): the most printed digits, so the
// tightest busbw/algbw ratio. Null when no row has one.
const Row* widest_row(const std::vector<Row>& rows) {
  const Row* widest = nullptr;
  for (const Row& row : rows) {
    if (row.algbw >= 0.5 && (widest == nullptr || row.algbw > widest->algbw))
      widest = &row;
  }
  return widest;
}

// The rank counts the widest row's busbw/algbw allows; empty when no row tells or the
// collective's bus bandwidth factor is 1 (broadcast, send/recv).
std::vector<int> rank_candidates(const LogScan& scan, const std::string& name,
                                 CollectiveKind kind) {
  const Row* widest = widest_row(scan.rows);
  if (widest == nullptr)
    return {};
  std::vector<int> candidates = ranks_from_ratio(kind, widest->algbw, widest->busbw);
  const bool has_factor = kind != CollectiveKind::kBroadcast && kind != CollectiveKind::kSendRecv;
  if (candidates.empty() && has_factor) {
    fail_at(name, widest->sample.line,
            std::string("busbw/algbw does not match any rank count for ") +
                (kind == CollectiveKind::kAllReduce ? "all-reduce (2(n-1)/n)"
                                                    : "this collective ((n-1)/n)"));
  }
  return candidates;
}

// Among the counts the ratio allows (large n are indistinguishable): nThread x nGpus, then a
// multiple of 8 (8-GPU nodes), then the smallest.
int pick_rank_count(const std::vector<int>& candidates, int header_ranks) {
  auto pick = [&](auto&& predicate) {
    auto it = std::find_if(candidates.begin(), candidates.end(), predicate);
    return it == candidates.end() ? 0 : *it;
  };
  int ranks = pick([&](int n) { return n == header_ranks; });
  if (ranks == 0)
    ranks = pick([](int n) { return n % 8 == 0; });
  if (ranks == 0)
    ranks = candidates.front();
  return ranks;
}

// Rank count: the busbw/algbw ratio of the row with the largest algbw (the most printed
// digits) survives elided Rank lines; among the counts it allows, prefer the Rank-line count,
// then nThread x nGpus, then a multiple of 8 (8-GPU nodes), then the smallest
// (docs/design/nccl-tests-format.md §6).
void infer_ranks(const LogScan& scan, const std::string& name, CollectiveCurve& curve) {
  const int listed = static_cast<int>(scan.hosts.size());
  const std::vector<int> candidates = rank_candidates(scan, name, curve.kind);
  const bool listed_allowed = candidates.empty() || std::find(candidates.begin(), candidates.end(),
                                                              listed) != candidates.end();
  const bool ranks_listed = listed > 0 && !scan.rank_lines_elided;
  const int header_ranks = scan.header_threads * scan.header_gpus;
  curve.ranks_inferred = true;
  if (ranks_listed && listed_allowed) {
    curve.ranks = listed;
    curve.ranks_inferred = false;
  } else if (!candidates.empty()) {
    if (ranks_listed) {
      throw io::InputError(name, "",
                           "busbw/algbw implies " + std::to_string(candidates.front()) +
                               (candidates.size() > 1 ? "+" : "") + " ranks but the log lists " +
                               std::to_string(listed) + " Rank lines");
    }
    curve.ranks = pick_rank_count(candidates, header_ranks);
  } else if (listed > 0) {  // no candidates, so listed_allowed: the Rank lines are elided
    throw io::InputError(
        name, "",
        "the Rank lines are elided ('...') and broadcast/send-recv bandwidths carry "
        "no rank count; give the full device list or use measurement JSON");
  } else if (header_ranks > 0) {
    curve.ranks = header_ranks;
  } else {
    curve.ranks = 2;  // send/recv without any header: one pair (busbw factor 1 either way)
  }
}

void infer_nodes(const LogScan& scan, const std::string& name, CollectiveCurve& curve) {
  if (static_cast<int>(scan.hosts.size()) == curve.ranks) {
    std::vector<std::string> distinct = scan.hosts;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    curve.nodes = static_cast<int>(distinct.size());
  } else if (scan.header_gpus > 1 && scan.header_threads * scan.header_gpus == curve.ranks) {
    curve.nodes = 1;  // one process drives every rank
  } else {
    // Rank lines elided or absent: assume the 8-GPU nodes of every platform in scope.
    curve.nodes = std::max(1, (curve.ranks + 7) / 8);
    curve.nodes_inferred = true;
  }
  if (curve.ranks % curve.nodes != 0) {
    throw io::InputError(name, "",
                         std::to_string(curve.ranks) + " ranks do not divide evenly over " +
                             std::to_string(curve.nodes) + " nodes");
  }
  curve.ranks_per_node = curve.ranks / curve.nodes;
}

// Throws unless `text` is UTF-8: its notes and device names go into profiles, which are JSON.
void check_utf8(std::string_view text, const std::string& name) {
  if (const auto bad = io::find_invalid_utf8(text)) {
    const auto byte = static_cast<unsigned char>(text[*bad]);
    fail_at(name, static_cast<int>(io::text_position(text, *bad).line),
            "the log is not UTF-8 text (byte " + std::to_string(byte) + ")");
  }
}

}  // namespace

CollectiveCurve parse_nccl_log(std::string_view text, const std::string& name) {
  CollectiveCurve curve;
  curve.source = name;
  check_utf8(text, name);
  LogScan scan = scan_lines(text, name, curve);
  if (scan.rows.empty() && scan.empty_rows > 0)
    throw io::InputError(name, "", "no data rows with a non-zero size");
  if (scan.rows.empty())
    throw io::InputError(name, "", "no nccl-tests data rows found");
  if (!scan.kind)
    scan.kind = collective_from_text(std::filesystem::path(name).filename().string());
  if (!scan.kind) {
    throw io::InputError(name, "",
                         "cannot tell which collective this log measures: no \"# Collective test "
                         "starting\" line and the file name names none of allreduce, allgather, "
                         "reducescatter, alltoall, broadcast, sendrecv");
  }
  curve.kind = *scan.kind;
  infer_ranks(scan, name, curve);
  infer_nodes(scan, name, curve);
  for (const Row& row : scan.rows)
    curve.samples.push_back(row.sample);
  return curve;
}

CollectiveCurve read_nccl_log(const std::string& path) {
  // A folder would be refused as "not a regular file": say what to pass instead.
  if (std::filesystem::is_directory(path))
    throw io::InputError(path, "",
                         "is a folder, not a log; name the logs in it (e.g. " +
                             (std::filesystem::path(path) / "*.txt").lexically_normal().string() +
                             ")");
  return parse_nccl_log(io::read_input_file(path, io::InputKind::kLog), path);
}

}  // namespace capsim::calibrate
