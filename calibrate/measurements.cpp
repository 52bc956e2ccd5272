#include "calibrate/measurements.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <utility>

#include "calibrate/median.hpp"
#include "models/cluster_spec.hpp"

#include "io/csv_line.hpp"
#include "io/input_error.hpp"
#include "io/input_file.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/text_check.hpp"

namespace capsim::calibrate {
namespace {

constexpr double kMaxSizeBytes = 1e15;

MachineInfo read_machine(io::JsonReader& r) {
  MachineInfo m;
  m.hostname = r.optional_string("hostname", "");
  m.gpu = r.required_string("gpu");
  m.gpus_per_node = static_cast<int>(r.required_int("gpus_per_node", 1, kMaxGpusPerNode));
  m.nodes = static_cast<int>(r.required_int("nodes", 1, 100000));
  m.nics_per_node = static_cast<int>(r.optional_int("nics_per_node", 0, 0, 256));
  m.node_nic_bandwidth_bytes_per_s =
      r.optional_number("node_nic_bandwidth_bytes_per_s", 0.0, 0.0, 1e15);
  m.nccl_version = r.optional_string("nccl_version", "");
  m.cuda_version = r.optional_string("cuda_version", "");
  m.driver_version = r.optional_string("driver_version", "");
  m.efa_plugin = r.optional_string("efa_plugin", "");
  m.topology = r.optional_string("topology", "");
  m.date = r.optional_string("date", "");
  if (auto env = r.optional_object("env")) {
    for (const auto& [key, value] : env->json().items()) {
      if (!value.is_string()) {
        throw env->error(key, "expected a string, got " + io::describe_json(value));
      }
      (void)env->optional_string(key, "");
      m.env[key] = value.get<std::string>();
    }
    env->finish();
  }
  r.finish();
  return m;
}

CollectiveCurve read_curve(io::JsonReader& r, const std::string& file) {
  CollectiveCurve c;
  c.source = file;
  const std::string name = r.required_enum("collective", io::collective_names());
  c.kind = io::collective_from_name(name);
  c.ranks = static_cast<int>(r.required_int("ranks", 2, 1000000));
  c.nodes = static_cast<int>(r.required_int("nodes", 1, 100000));
  if (c.ranks % c.nodes != 0) {
    throw r.error("nodes", "ranks (" + std::to_string(c.ranks) + ") must be a multiple of nodes (" +
                               std::to_string(c.nodes) + ")");
  }
  c.ranks_per_node = c.ranks / c.nodes;
  (void)r.optional_string("dtype", "float");
  c.gpu = r.optional_string("gpu", "");
  c.nccl_version = r.optional_string("nccl_version", "");
  const auto samples = r.array("samples", 1);
  for (size_t i = 0; i < samples.size(); ++i) {
    io::JsonReader s(samples[i], r, r.pointer_to("samples") + "/" + std::to_string(i));
    CollectiveSample sample;
    sample.bytes = s.required_number("bytes", 1.0, kMaxSizeBytes);
    sample.time_s = s.required_number("time_s", 1e-9, 1e6);
    // 0 means not measured; a measured time is at least a nanosecond like time_s (a 1e-308 s
    // time made the fit's relative weights infinite).
    sample.time_in_place_s = s.optional_number("time_in_place_s", 0.0, 0.0, 1e6);
    if (sample.time_in_place_s > 0.0 && sample.time_in_place_s < 1e-9)
      throw s.error("time_in_place_s", "expected 0 (not measured) or a time in [1e-09, 1e+06]");
    (void)s.optional_number("algbw_bytes_per_s", 0.0, 0.0, 1e15);
    (void)s.optional_number("busbw_bytes_per_s", 0.0, 0.0, 1e15);
    (void)s.optional_int("wrong", 0, 0, 1LL << 50);
    s.finish();
    if (!c.samples.empty() && sample.bytes <= c.samples.back().bytes) {
      throw s.error("bytes", "sizes must increase within a curve");
    }
    c.samples.push_back(sample);
  }
  r.finish();
  return c;
}

GemmMeasurement read_gemm(io::JsonReader& r, const std::string& gpu, const std::string& file) {
  GemmMeasurement g;
  g.gpu = gpu;
  g.source = file;
  g.file = std::filesystem::path(file).filename().string();
  g.dtype = r.required_enum("dtype", {"bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "tf32"});
  g.m = r.required_number("m", 1.0, 1e9);
  g.n = r.required_number("n", 1.0, 1e9);
  g.k = r.required_number("k", 1.0, 1e9);
  g.batch = r.optional_number("batch", 1.0, 1.0, 1e9);
  const double time_s = r.required_number("time_s", 1e-9, 1e6);
  g.flop_per_s = 2.0 * g.m * g.n * g.k * g.batch / time_s;
  (void)r.optional_number("flop_per_s", 0.0, 0.0, 1e18);
  (void)r.optional_int("wrong", 0, 0, 1LL << 50);
  r.finish();
  return g;
}

OverlapMeasurement read_overlap(io::JsonReader& r, const std::string& file) {
  OverlapMeasurement o;
  o.source = file;
  o.sms = static_cast<int>(r.required_int("sms", 2, 100000));
  o.ranks = static_cast<int>(r.required_int("ranks", 2, 100000));
  o.collective_bytes = r.required_number("collective_bytes", 1.0, kMaxSizeBytes);
  o.dtype = r.required_enum("dtype", {"bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "tf32"});
  const std::string clamp = "[0, " + std::to_string(o.sms - 1) + "]";
  const auto samples = r.array("samples", 1);
  for (size_t i = 0; i < samples.size(); ++i) {
    io::JsonReader s(samples[i], r, r.pointer_to("samples") + "/" + std::to_string(i));
    OverlapSample sample;
    sample.collective =
        io::collective_from_name(s.required_enum("collective", io::collective_names()));
    sample.m = s.required_number("m", 1.0, 1e9);
    sample.n = s.required_number("n", 1.0, 1e9);
    sample.k = s.required_number("k", 1.0, 1e9);
    sample.batch = s.optional_number("batch", 1.0, 1.0, 1e9);
    sample.time_alone_s = s.required_number("time_alone_s", 1e-9, 1e6);
    sample.time_beside_s = s.required_number("time_beside_s", 1e-9, 1e6);
    sample.sms_taken = static_cast<int>(s.required_int("sms_taken", 0, o.sms - 1));
    s.finish();
    const int derived = overlap_sms_taken(o.sms, sample.time_alone_s, sample.time_beside_s);
    if (sample.sms_taken != derived) {
      throw s.error("sms_taken", "expected round(sms x (1 - time_alone_s / time_beside_s)) in " +
                                     clamp + " = " + std::to_string(derived) + ", got " +
                                     std::to_string(sample.sms_taken));
    }
    o.samples.push_back(sample);
  }
  o.sms_taken = static_cast<int>(r.required_int("sms_taken", 0, o.sms - 1));
  const int median = overlap_median_sms_taken(o.samples);
  if (o.sms_taken != median) {
    throw r.error("sms_taken", "expected the median of the samples' sms_taken, " +
                                   std::to_string(median) + ", got " + std::to_string(o.sms_taken));
  }
  r.finish();
  return o;
}

std::optional<double> csv_number(const std::string& text) {
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// The GEMM CSV's header: the fixed columns first, then optional ones by name in any order.
void check_gemm_header(const std::vector<std::string>& header, const std::string& path) {
  const std::vector<std::string> expected{"gpu", "dtype", "M", "N", "K", "tflops", "source"};
  for (size_t i = 0; i < expected.size(); ++i) {
    if (i >= header.size() || header[i] != expected[i]) {
      throw io::InputError(path, "1",
                           "expected the header to start with gpu,dtype,M,N,K,tflops,source");
    }
  }
  for (size_t i = expected.size(); i < header.size(); ++i) {
    if (header[i] != "batch" && header[i] != "library" && header[i] != "note") {
      throw io::InputError(
          path, "1",
          "unknown column \"" + header[i] + "\"; optional columns: batch, library, note");
    }
  }
}

// The field of an optional column by name, "" when the CSV has no such column.
std::string optional_column(const std::vector<std::string>& header,
                            const std::vector<std::string>& fields, const char* name) {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? "" : fields[static_cast<size_t>(it - header.begin())];
}

// M, N, K and tflops, each a positive number.
std::array<double, 4> gemm_shape_and_rate(const std::vector<std::string>& fields,
                                          const std::string& path, int line_no) {
  static constexpr std::array<const char*, 4> kColumns{"M", "N", "K", "tflops"};
  std::array<double, 4> values{};
  for (size_t i = 0; i < 4; ++i) {
    auto v = csv_number(fields[2 + i]);
    if (!v || *v <= 0.0) {
      throw io::InputError(path, std::to_string(line_no),
                           std::string("expected a positive number for ") + kColumns[i] +
                               ", got \"" + fields[2 + i] + "\"");
    }
    values[i] = *v;
  }
  return values;
}

// One data row of the GEMM CSV; `header` has been checked.
GemmMeasurement parse_gemm_row(const std::vector<std::string>& header,
                               const std::vector<std::string>& fields, const std::string& path,
                               int line_no) {
  if (fields.size() != header.size()) {
    throw io::InputError(path, std::to_string(line_no),
                         "expected " + std::to_string(header.size()) + " fields, got " +
                             std::to_string(fields.size()));
  }
  GemmMeasurement g;
  g.gpu = fields[0];
  g.dtype = fields[1];
  static constexpr std::array<const char*, 5> kDtypes{"bf16", "fp16", "fp8_e4m3", "fp8_e5m2",
                                                      "tf32"};
  if (std::find(kDtypes.begin(), kDtypes.end(), g.dtype) == kDtypes.end()) {
    throw io::InputError(
        path, std::to_string(line_no),
        "expected dtype bf16, fp16, fp8_e4m3, fp8_e5m2 or tf32, got \"" + g.dtype + "\"");
  }
  g.source = fields[6];
  g.file = std::filesystem::path(path).filename().string();
  g.line = line_no;
  // The source or the note says the row is the best of a brute-force shape search.
  const std::string note = optional_column(header, fields, "note");
  g.search_maximum = (g.source + " " + note).find("brute-force search") != std::string::npos;
  const std::array<double, 4> values = gemm_shape_and_rate(fields, path, line_no);
  g.m = values[0];
  g.n = values[1];
  g.k = values[2];
  g.flop_per_s = values[3] * 1e12;
  if (const std::string batch = optional_column(header, fields, "batch"); !batch.empty()) {
    auto b = csv_number(batch);
    if (!b || *b < 1.0) {
      throw io::InputError(path, std::to_string(line_no),
                           "expected a batch count >= 1, got \"" + batch + "\"");
    }
    g.batch = *b;
  }
  return g;
}

}  // namespace

int overlap_sms_taken(int sms, double time_alone_s, double time_beside_s) {
  const double taken = std::round(sms * (1.0 - time_alone_s / time_beside_s));
  if (!(taken > 0.0))
    return 0;  // no slowdown, or faster beside the collective (noise)
  return static_cast<int>(std::min(taken, static_cast<double>(sms - 1)));
}

int overlap_median_sms_taken(const std::vector<OverlapSample>& samples) {
  std::vector<double> v;
  v.reserve(samples.size());
  for (const auto& s : samples)
    v.push_back(s.sms_taken);
  // An even count's median of integers ends in .5 at most: rounded half up.
  return static_cast<int>(std::floor(median(std::move(v)) + 0.5));
}

namespace {

Measurements read_measurements_document(io::JsonReader& r) {
  const std::string& file = r.file();
  r.expect_schema(kMeasurementsSchema);
  Measurements out;
  {
    io::JsonReader machine = r.object("machine");
    out.machine = read_machine(machine);
  }
  if (r.has("nccl")) {
    const auto curves = r.array("nccl");
    for (size_t i = 0; i < curves.size(); ++i) {
      io::JsonReader c(curves[i], r, r.pointer_to("nccl") + "/" + std::to_string(i));
      CollectiveCurve curve = read_curve(c, file);
      if (curve.gpu.empty())
        curve.gpu = out.machine.gpu;
      if (curve.nccl_version.empty())
        curve.nccl_version = out.machine.nccl_version;
      out.collectives.push_back(std::move(curve));
    }
  }
  if (r.has("gemm")) {
    const auto gemms = r.array("gemm");
    for (size_t i = 0; i < gemms.size(); ++i) {
      io::JsonReader g(gemms[i], r, r.pointer_to("gemm") + "/" + std::to_string(i));
      out.gemms.push_back(read_gemm(g, out.machine.gpu, file));
    }
  }
  if (auto overlap = r.optional_object("overlap"))
    out.overlap = read_overlap(*overlap, file);
  r.finish();
  if (out.collectives.empty() && out.gemms.empty() && !out.overlap) {
    throw r.error("",
                  "no measurements: expected a non-empty \"nccl\" or \"gemm\" array or an "
                  "\"overlap\" object");
  }
  return out;
}

}  // namespace

Measurements read_measurements_json(const nlohmann::json& doc, const std::string& file) {
  return io::JsonReader::read_document(doc, file, read_measurements_document);
}

Measurements read_measurements(const std::string& path) {
  const nlohmann::json doc = io::JsonReader::parse_file(path);
  return read_measurements_json(doc, path);
}

nlohmann::json measurements_to_json(const Measurements& m) {
  nlohmann::json j;
  j["schema"] = kMeasurementsSchema;
  const MachineInfo& mi = m.machine;
  j["machine"] = {{"hostname", mi.hostname},
                  {"gpu", mi.gpu},
                  {"gpus_per_node", mi.gpus_per_node},
                  {"nodes", mi.nodes},
                  {"nics_per_node", mi.nics_per_node},
                  {"node_nic_bandwidth_bytes_per_s", mi.node_nic_bandwidth_bytes_per_s},
                  {"nccl_version", mi.nccl_version},
                  {"cuda_version", mi.cuda_version},
                  {"driver_version", mi.driver_version},
                  {"efa_plugin", mi.efa_plugin},
                  {"topology", mi.topology},
                  {"date", mi.date},
                  {"env", mi.env}};
  nlohmann::json curves = nlohmann::json::array();
  for (const auto& c : m.collectives) {
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& s : c.samples) {
      nlohmann::json js = {{"bytes", s.bytes}, {"time_s", s.time_s}};
      if (s.time_in_place_s > 0.0)
        js["time_in_place_s"] = s.time_in_place_s;
      samples.push_back(js);
    }
    curves.push_back({{"collective", io::collective_name(c.kind)},
                      {"ranks", c.ranks},
                      {"nodes", c.nodes},
                      {"samples", samples}});
  }
  if (!m.collectives.empty())
    j["nccl"] = curves;
  nlohmann::json gemms = nlohmann::json::array();
  for (const auto& g : m.gemms) {
    gemms.push_back({{"dtype", g.dtype},
                     {"m", g.m},
                     {"n", g.n},
                     {"k", g.k},
                     {"batch", g.batch},
                     {"time_s", 2.0 * g.m * g.n * g.k * g.batch / g.flop_per_s}});
  }
  if (!m.gemms.empty())
    j["gemm"] = gemms;
  if (m.overlap) {
    const OverlapMeasurement& o = *m.overlap;
    nlohmann::json samples = nlohmann::json::array();
    for (const auto& s : o.samples) {
      samples.push_back({{"collective", io::collective_name(s.collective)},
                         {"m", s.m},
                         {"n", s.n},
                         {"k", s.k},
                         {"batch", s.batch},
                         {"time_alone_s", s.time_alone_s},
                         {"time_beside_s", s.time_beside_s},
                         {"sms_taken", s.sms_taken}});
    }
    j["overlap"] = {
        {"sms", o.sms},     {"ranks", o.ranks},   {"collective_bytes", o.collective_bytes},
        {"dtype", o.dtype}, {"samples", samples}, {"sms_taken", o.sms_taken}};
  }
  return j;
}

std::vector<GemmMeasurement> read_gemm_csv(const std::string& path) {
  std::string text = io::read_input_file(path, io::InputKind::kLog);
  if (const auto fault = io::find_text_fault(text)) {
    const io::TextPosition at = io::text_position(text, fault->offset);
    throw io::InputError(path, std::to_string(at.line),
                         fault->problem + " at column " + std::to_string(at.column) +
                             "; a GEMM table is UTF-8 text without NUL bytes");
  }
  std::istringstream in(std::move(text));
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  std::vector<GemmMeasurement> out;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r")
      continue;
    const io::CsvFields split = io::split_csv_line(line);
    if (split.quote_open)
      throw io::InputError(path, std::to_string(line_no), "unterminated quoted field");
    const std::vector<std::string>& fields = split.fields;
    if (header.empty()) {
      header = fields;
      check_gemm_header(header, path);
      continue;
    }
    out.push_back(parse_gemm_row(header, fields, path, line_no));
  }
  if (out.empty())
    throw io::InputError(path, "", "no GEMM rows");
  return out;
}

}  // namespace capsim::calibrate
