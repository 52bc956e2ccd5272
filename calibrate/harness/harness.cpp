#include "calibrate/harness/harness.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "calibrate/median.hpp"
#include "models/byte_units.hpp"
#include "models/workload.hpp"

#include "io/input_error.hpp"
#include "io/profile_io.hpp"

namespace capsim::calibrate::harness {
namespace {

constexpr double kFloatBytes = 4.0;  // nccl-tests default datatype (-d float)
constexpr double kMaxBytes = 64.0 * kGiB;

void throw_if_wrong_gemm(const std::string& what, long long wrong, long long checked) {
  if (wrong > 0) {
    throw std::runtime_error(what + ": " + std::to_string(wrong) + " of " +
                             std::to_string(checked) + " sampled elements wrong");
  }
}

bool moves_per_rank_chunks(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllToAll;
}

}  // namespace

std::string shape_text(const GemmShape& s) {
  std::string out = std::to_string(static_cast<long long>(s.m)) + "x" +
                    std::to_string(static_cast<long long>(s.n)) + "x" +
                    std::to_string(static_cast<long long>(s.k));
  if (s.batch != 1.0)
    out += "x" + std::to_string(static_cast<long long>(s.batch));
  return out;
}

double parse_size_arg(const std::string& option, const std::string& text) {
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  double unit = 1.0;
  if (ec == std::errc() && ptr != begin && ptr + 1 == end) {
    switch (std::toupper(static_cast<unsigned char>(*ptr))) {
      case 'K':
        unit = kKiB;
        break;
      case 'M':
        unit = kMiB;
        break;
      case 'G':
        unit = kGiB;
        break;
      default:
        unit = 0.0;
    }
  } else if (ec != std::errc() || ptr != end || ptr == begin) {
    unit = 0.0;
  }
  if (unit == 0.0 || !(value > 0.0)) {
    throw io::InputError(
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
      const CollectiveKind kind = io::collective_from_name(name);
      if (std::find(out.begin(), out.end(), kind) == out.end())
        out.push_back(kind);
    } catch (const std::invalid_argument&) {
      std::string allowed;
      for (const auto& n : io::collective_names())
        allowed += (allowed.empty() ? "" : ", ") + n;
      throw io::InputError(
          "--collectives", "",
          // NOLINTNEXTLINE(performance-inefficient-string-concatenation): runs once
          "unknown collective \"" + name + "\"; expected all or a list of " + allowed);
    }
    pos = comma + 1;
  }
  return out;
}

std::vector<GemmShape> parse_shapes_arg(const std::string& option, const std::string& text) {
  std::vector<GemmShape> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    std::vector<double> dims;
    const char* p = item.data();
    const char* end = item.data() + item.size();
    bool ok = !item.empty();
    while (ok && p < end) {
      long long v = 0;
      auto [next, ec] = std::from_chars(p, end, v);
      ok = ec == std::errc() && next != p && v > 0 && v <= 10000000;
      dims.push_back(static_cast<double>(v));
      p = next;
      if (ok && p < end) {
        ok = *p == 'x' && p + 1 < end;
        ++p;
      }
    }
    if (!ok || dims.size() < 3 || dims.size() > 4) {
      throw io::InputError(
          option, "", "expected MxNxK or MxNxKxBATCH with positive integers, got \"" + item + "\"");
    }
    out.push_back({dims[0], dims[1], dims[2], dims.size() == 4 ? dims[3] : 1.0});
    pos = comma + 1;
  }
  return out;
}

void validate(const NcclSweep& s) {
  if (s.collectives.empty())
    throw io::InputError("--collectives", "", "no collective given");
  if (!(s.min_bytes >= 1.0))
    throw io::InputError("--minbytes", "", "must be at least 1 byte");
  if (s.max_bytes > kMaxBytes)
    throw io::InputError("--maxbytes", "", "must be at most 64G");
  if (s.max_bytes < s.min_bytes) {
    throw io::InputError("--maxbytes", "", "must not be smaller than --minbytes");
  }
  if (!(s.factor > 1.0))
    throw io::InputError("--stepfactor", "", "must be greater than 1");
  if (s.warmup < 0)
    throw io::InputError("--warmup_iters", "", "must not be negative");
  if (s.iters < 1)
    throw io::InputError("--iters", "", "must be at least 1");
}

void validate(const GemmSweep& s, bool gpu_has_fp8) {
  if (s.shapes.empty())
    throw io::InputError("--grid/--scenario", "", "no GEMM shapes to run");
  for (const auto& d : s.dtypes) {
    if (d != "bf16" && d != "fp16" && d != "fp8_e4m3") {
      throw io::InputError("--dtypes", "", "expected bf16, fp16 or fp8_e4m3, got \"" + d + "\"");
    }
    if (d == "fp8_e4m3" && !gpu_has_fp8) {
      throw io::InputError("--dtypes", "", "fp8_e4m3 needs a Hopper (or newer) GPU");
    }
  }
  if (s.warmup < 0)
    throw io::InputError("--warmup", "", "must not be negative");
  if (s.repeats < 3)
    throw io::InputError("--repeats", "", "must be at least 3 (median of repeats)");
}

void validate(const OverlapRun& r) {
  if (r.shapes.empty())
    throw io::InputError("--shapes", "", "no GEMM shapes given");
  if (r.collectives.empty())
    throw io::InputError("--collectives", "", "no collective given");
  for (CollectiveKind kind : r.collectives) {
    if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kAllGather &&
        kind != CollectiveKind::kReduceScatter) {
      throw io::InputError(
          "--collectives", "",
          std::string("expected all_reduce, all_gather or reduce_scatter (the data-"
                      "parallel and ZeRO collectives that run beside compute), got ") +
              io::collective_name(kind));
    }
  }
  if (r.collective_bytes < kMiB) {
    throw io::InputError("--collective-bytes", "",
                         "must be at least 1M: NCCL runs small collectives on fewer channels");
  }
  if (r.collective_bytes > kMaxBytes)
    throw io::InputError("--collective-bytes", "", "must be at most 64G");
  if (r.dtype != "bf16" && r.dtype != "fp16")
    throw io::InputError("--dtype", "", "expected bf16 or fp16, got \"" + r.dtype + "\"");
  if (r.warmup < 0)
    throw io::InputError("--warmup", "", "must not be negative");
  if (r.repeats < 3)
    throw io::InputError("--repeats", "", "must be at least 3 (median of repeats)");
}

int plan_collective_ops(double gemm_s, double collective_s, int warmup, int repeats) {
  if (!(collective_s > 0.0))
    return kMaxCollectiveOps;
  // The GEMMs start after the first collective; each may run up to 3x slower beside the
  // collective, plus a margin of 100 us per GEMM for the host's launches.
  const double window = (warmup + repeats) * (3.0 * gemm_s + 100e-6);
  const double ops = std::ceil(window / collective_s) + 1.0;
  return static_cast<int>(std::clamp(ops, 4.0, static_cast<double>(kMaxCollectiveOps)));
}

size_t plan_gemm_operand_sets(size_t l2_cache_bytes, size_t set_bytes) {
  return std::clamp<size_t>((2 * l2_cache_bytes + set_bytes - 1) / set_bytes, 2, 1024);
}

std::vector<double> plan_sizes(const NcclSweep& s, CollectiveKind kind, int ranks) {
  // nccl-tests (src/common.cu): count = size / wordSize, and for the per-rank-chunk
  // collectives count = size / wordSize / nranks; the printed size is count x word x nranks.
  const double unit = moves_per_rank_chunks(kind) ? kFloatBytes * ranks : kFloatBytes;
  std::vector<double> out;
  // A float counter on purpose: a geometric sweep by a non-integer factor, as nccl-tests -f;
  // the 1e-12 slack keeps max_bytes in despite rounding.
  // NOLINTNEXTLINE(clang-analyzer-security.FloatLoopCounter)
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

std::vector<GemmShape> gemm_grid() {
  std::vector<GemmShape> out;
  // Squares 256 .. 16384 (launch/latency regime to the plateau; wave quantization between).
  for (int i = 256; i <= 16384; i *= 2) {
    const auto n = static_cast<double>(i);
    out.push_back({n, n, n, 1});
  }
  for (int i = 384; i <= 12288; i *= 2) {
    const auto n = static_cast<double>(i);
    out.push_back({n, n, n, 1});
  }
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
    if (op.kind != KernelKind::kGemm)
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
        throw std::runtime_error(std::string(io::collective_name(kind)) + " at " +
                                 std::to_string(static_cast<long long>(bytes)) +
                                 " B: " + std::to_string(wrong) + " wrong elements");
      }
      curve.samples.push_back(sample);
    }
    m.collectives.push_back(std::move(curve));
  }
  return m;
}

bool fp8_shape_supported(const GemmShape& shape) {
  return std::fmod(shape.m, 16.0) == 0.0 && std::fmod(shape.n, 16.0) == 0.0 &&
         std::fmod(shape.k, 16.0) == 0.0;
}

Measurements run_gemm(Backend& backend, const GemmSweep& sweep) {
  Measurements m;
  m.machine = backend.machine();
  for (const auto& dtype : sweep.dtypes) {
    for (const auto& shape : sweep.shapes) {
      if (dtype == "fp8_e4m3" && !fp8_shape_supported(shape))
        continue;
      const GemmTiming t = backend.time_gemm(dtype, shape, sweep.warmup, sweep.repeats);
      if (t.times_s.empty())
        throw std::runtime_error("backend returned no GEMM timings");
      if (t.wrong > 0) {
        throw std::runtime_error("GEMM " + dtype + " " + shape_text(shape) + ": " +
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

Measurements run_overlap(Backend& backend, const OverlapRun& run) {
  validate(run);
  Measurements m;
  m.machine = backend.machine();
  const int ranks = backend.ranks();
  if (ranks < 2) {
    throw io::InputError("--gpus", "",
                         "overlap needs at least 2 GPUs, got " + std::to_string(ranks) +
                             ": a collective over one rank moves no data");
  }
  const int sms = backend.sm_count();
  if (sms < 2)
    throw std::runtime_error("the device reports " + std::to_string(sms) + " SMs");
  OverlapMeasurement o;
  o.sms = sms;
  o.ranks = ranks;
  o.dtype = run.dtype;
  // One size valid for every collective: a whole number of floats per rank.
  const double unit = kFloatBytes * ranks;
  o.collective_bytes = std::floor(run.collective_bytes / unit) * unit;

  // Each collective alone (1 warm-up, 5 timed, checked) sizes its loop.
  std::vector<double> collective_s;
  for (CollectiveKind kind : run.collectives) {
    const CollectiveTiming t = backend.time_collective(kind, o.collective_bytes, false, 1, 5);
    if (t.wrong > 0) {
      throw std::runtime_error(std::string(io::collective_name(kind)) + " at " +
                               std::to_string(static_cast<long long>(o.collective_bytes)) +
                               " B: " + std::to_string(t.wrong) + " wrong elements");
    }
    collective_s.push_back(t.time_s);
  }

  for (const auto& shape : run.shapes) {
    const std::string what = "GEMM " + run.dtype + " " + shape_text(shape);
    const GemmTiming alone = backend.time_gemm(run.dtype, shape, run.warmup, run.repeats);
    if (alone.times_s.empty())
      throw std::runtime_error("backend returned no GEMM timings");
    throw_if_wrong_gemm(what, alone.wrong, alone.checked);
    const double time_alone_s = median(alone.times_s);
    for (size_t c = 0; c < run.collectives.size(); ++c) {
      const CollectiveKind kind = run.collectives[c];
      int ops = plan_collective_ops(time_alone_s, collective_s[c], run.warmup, run.repeats);
      OverlapTiming beside;
      for (int attempt = 0;; ++attempt) {
        beside = backend.time_gemm_beside_collective(run.dtype, shape, kind, o.collective_bytes,
                                                     ops, run.warmup, run.repeats);
        if (beside.collective_outlasted || attempt == 3 || ops >= kMaxCollectiveOps)
          break;
        ops = std::min(4 * ops, kMaxCollectiveOps);
      }
      const std::string pair = what + " beside " + io::collective_name(kind);
      if (!beside.collective_outlasted) {
        throw std::runtime_error(pair + ": the loop of " + std::to_string(ops) +
                                 " collectives ended before the timed GEMMs did");
      }
      if (beside.times_s.empty())
        throw std::runtime_error("backend returned no GEMM timings");
      throw_if_wrong_gemm(pair, beside.wrong, beside.checked);
      OverlapSample sample;
      sample.collective = kind;
      sample.m = shape.m;
      sample.n = shape.n;
      sample.k = shape.k;
      sample.batch = shape.batch;
      sample.time_alone_s = time_alone_s;
      sample.time_beside_s = median(beside.times_s);
      sample.sms_taken = overlap_sms_taken(sms, sample.time_alone_s, sample.time_beside_s);
      o.samples.push_back(sample);
    }
  }
  o.sms_taken = overlap_median_sms_taken(o.samples);
  m.overlap = std::move(o);
  return m;
}

}  // namespace capsim::calibrate::harness
