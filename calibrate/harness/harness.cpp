#include "calibrate/harness/harness.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "models/io/input_error.hpp"
#include "models/io/profile_io.hpp"
#include "models/workload.hpp"

namespace capsim::calibrate::harness {
namespace {

constexpr double kFloatBytes = 4.0;  // nccl-tests default datatype (-d float)
constexpr double kMaxBytes = 64.0 * 1024 * 1024 * 1024;

bool moves_per_rank_chunks(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllToAll;
}

}  // namespace

double parse_size_arg(const std::string& option, const std::string& text) {
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  double unit = 1.0;
  if (ec == std::errc() && ptr != begin && ptr + 1 == end) {
    switch (std::toupper(static_cast<unsigned char>(*ptr))) {
      case 'K':
        unit = 1024.0;
        break;
      case 'M':
        unit = 1024.0 * 1024;
        break;
      case 'G':
        unit = 1024.0 * 1024 * 1024;
        break;
      default:
        unit = 0.0;
    }
  } else if (ec != std::errc() || ptr != end || ptr == begin) {
    unit = 0.0;
  }
  if (unit == 0.0 || !(value > 0.0)) {
    throw InputError(
        option, "",
        "expected a size like 8, 128K, 1M or 8G (1024-based, as nccl-tests), got \"" + text + "\"");
  }
  return value * unit;
}

std::vector<CollectiveKind> parse_collectives_arg(const std::string& text) {
  if (text == "all") {
    return {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
            CollectiveKind::kAllToAll,  CollectiveKind::kBroadcast, CollectiveKind::kSendRecv};
  }
  std::vector<CollectiveKind> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string name = text.substr(pos, comma - pos);
    try {
      const CollectiveKind kind = collective_from_name(name);
      if (std::find(out.begin(), out.end(), kind) == out.end())
        out.push_back(kind);
    } catch (const std::invalid_argument&) {
      std::string allowed;
      for (const auto& n : collective_names())
        allowed += (allowed.empty() ? "" : ", ") + n;
      throw InputError("--collectives", "",
                       "unknown collective \"" + name + "\"; expected all or a list of " + allowed);
    }
    pos = comma + 1;
  }
  return out;
}

void validate(const NcclSweep& s) {
  if (s.collectives.empty())
    throw InputError("--collectives", "", "no collective given");
  if (!(s.min_bytes >= 1.0))
    throw InputError("--minbytes", "", "must be at least 1 byte");
  if (s.max_bytes > kMaxBytes)
    throw InputError("--maxbytes", "", "must be at most 64G");
  if (s.max_bytes < s.min_bytes) {
    throw InputError("--maxbytes", "", "must not be smaller than --minbytes");
  }
  if (!(s.factor > 1.0))
    throw InputError("--stepfactor", "", "must be greater than 1");
  if (s.warmup < 0)
    throw InputError("--warmup_iters", "", "must not be negative");
  if (s.iters < 1)
    throw InputError("--iters", "", "must be at least 1");
}

void validate(const GemmSweep& s, bool gpu_has_fp8) {
  if (s.shapes.empty())
    throw InputError("--grid/--scenario", "", "no GEMM shapes to run");
  for (const auto& d : s.dtypes) {
    if (d != "bf16" && d != "fp16" && d != "fp8_e4m3") {
      throw InputError("--dtypes", "", "expected bf16, fp16 or fp8_e4m3, got \"" + d + "\"");
    }
    if (d == "fp8_e4m3" && !gpu_has_fp8) {
      throw InputError("--dtypes", "", "fp8_e4m3 needs a Hopper (or newer) GPU");
    }
  }
  if (s.warmup < 0)
    throw InputError("--warmup", "", "must not be negative");
  if (s.repeats < 3)
    throw InputError("--repeats", "", "must be at least 3 (median of repeats)");
}

std::vector<double> plan_sizes(const NcclSweep& s, CollectiveKind kind, int ranks) {
  // nccl-tests (src/common.cu): count = size / wordSize, and for the per-rank-chunk
  // collectives count = size / wordSize / nranks; the printed size is count x word x nranks.
  const double unit = moves_per_rank_chunks(kind) ? kFloatBytes * ranks : kFloatBytes;
  std::vector<double> out;
  for (double size = s.min_bytes; size <= s.max_bytes * (1.0 + 1e-12); size *= s.factor) {
    const double rounded = std::floor(size / unit) * unit;
    if (rounded <= 0.0)
      continue;
    if (!out.empty() && rounded <= out.back())
      continue;
    out.push_back(rounded);
  }
  return out;
}

double algorithm_bandwidth(double bytes, double time_s) {
  return time_s > 0.0 ? bytes / time_s : 0.0;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::vector<GemmShape> gemm_grid() {
  std::vector<GemmShape> out;
  // Squares 256 .. 16384 (launch/latency regime to the plateau; wave quantization between).
  for (double n = 256; n <= 16384; n *= 2)
    out.push_back({n, n, n, 1});
  for (double n = 384; n <= 12288; n *= 2)
    out.push_back({n, n, n, 1});
  // Transformer-like: tokens x hidden x hidden-multiples, K sweep at fixed M, N.
  for (double k : {256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
    out.push_back({4096, 4096, k, 1});
  }
  for (double m : {512.0, 1024.0, 2048.0, 8192.0})
    out.push_back({m, 12288, 4096, 1});
  // Alignment: multiple of 64, of 8 only, and of neither (the SwiGLU 8/3 h case).
  for (double k : {10944.0, 10920.0, 10922.0})
    out.push_back({4096, 4096, k, 1});
  return out;
}

std::vector<GemmShape> scenario_gemm_shapes(const Scenario& scenario) {
  std::vector<Op> ops = lower_layer(scenario.model, scenario.parallelism);
  const auto head = lower_head(scenario.model, scenario.parallelism);
  ops.insert(ops.end(), head.begin(), head.end());
  std::vector<GemmShape> out;
  for (const auto& op : ops) {
    if (op.kind != OpKind::kGemm)
      continue;
    const bool seen = std::any_of(out.begin(), out.end(), [&](const GemmShape& s) {
      return s.m == op.gemm.m && s.n == op.gemm.n && s.k == op.gemm.k && s.batch == op.gemm.batch;
    });
    if (!seen)
      out.push_back(op.gemm);
  }
  return out;
}

Measurements run_nccl(Backend& backend, const NcclSweep& sweep) {
  validate(sweep);
  Measurements m;
  m.machine = backend.machine();
  const int ranks = backend.ranks();
  const int nodes = backend.nodes();
  for (CollectiveKind kind : sweep.collectives) {
    CollectiveCurve curve;
    curve.kind = kind;
    curve.ranks = ranks;
    curve.nodes = nodes;
    curve.ranks_per_node = ranks / std::max(nodes, 1);
    curve.gpu = m.machine.gpu;
    curve.nccl_version = m.machine.nccl_version;
    curve.source = "capsim-calibrate";
    for (double bytes : plan_sizes(sweep, kind, ranks)) {
      CollectiveSample sample;
      sample.bytes = bytes;
      const CollectiveTiming out =
          backend.time_collective(kind, bytes, false, sweep.warmup, sweep.iters);
      sample.time_s = out.time_s;
      long long wrong = out.wrong;
      if (sweep.in_place) {
        const CollectiveTiming in =
            backend.time_collective(kind, bytes, true, sweep.warmup, sweep.iters);
        sample.time_in_place_s = in.time_s;
        wrong += in.wrong;
      }
      if (wrong > 0) {
        throw std::runtime_error(std::string(collective_name(kind)) + " at " +
                                 std::to_string(static_cast<long long>(bytes)) +
                                 " B: " + std::to_string(wrong) + " wrong elements");
      }
      curve.samples.push_back(sample);
    }
    m.collectives.push_back(std::move(curve));
  }
  return m;
}

Measurements run_gemm(Backend& backend, const GemmSweep& sweep) {
  Measurements m;
  m.machine = backend.machine();
  for (const auto& dtype : sweep.dtypes) {
    for (const auto& shape : sweep.shapes) {
      const GemmTiming t = backend.time_gemm(dtype, shape, sweep.warmup, sweep.repeats);
      if (t.times_s.empty())
        throw std::runtime_error("backend returned no GEMM timings");
      if (t.wrong > 0) {
        throw std::runtime_error("GEMM " + dtype + " " + std::to_string(shape.m) + "x" +
                                 std::to_string(shape.n) + "x" + std::to_string(shape.k) + ": " +
                                 std::to_string(t.wrong) + " of " + std::to_string(t.checked) +
                                 " sampled elements wrong");
      }
      GemmMeasurement g;
      g.gpu = m.machine.gpu;
      g.dtype = dtype;
      g.m = shape.m;
      g.n = shape.n;
      g.k = shape.k;
      g.batch = shape.batch;
      g.flop_per_s = shape.flop() / median(t.times_s);
      g.source = "capsim-calibrate";
      m.gemms.push_back(g);
    }
  }
  return m;
}

}  // namespace capsim::calibrate::harness
