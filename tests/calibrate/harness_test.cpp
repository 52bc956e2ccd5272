#include "calibrate/harness/harness.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/profile_fit.hpp"
#include "models/collective_cost.hpp"

#include "io/input_error.hpp"
#include "io/json_reader.hpp"

namespace capsim::calibrate::harness {
namespace {

// Deterministic stand-in for the CUDA/NCCL layer: collectives follow a two-regime NCCL-like
// curve, GEMMs a fixed throughput with one slow repeat (the median must ignore it).
class FakeBackend : public Backend {
 public:
  MachineInfo machine() override {
    MachineInfo m;
    m.hostname = "fake";
    m.gpu = "NVIDIA A100-SXM4-80GB";
    m.gpus_per_node = 8;
    m.nodes = 1;
    m.nccl_version = "2.23.4";
    m.env["NCCL_ALGO"] = "";
    m.date = "2026-01-01";
    return m;
  }
  int ranks() override { return 8; }
  int nodes() override { return 1; }
  CollectiveTiming time_collective(CollectiveKind kind, double bytes, bool in_place, int warmup,
                                   int iters) override {
    ++collective_calls;
    last_warmup = warmup;
    last_iters = iters;
    const GroupShape g{8, 8, 1, 0.0};
    const AlgorithmParams ll{CollectiveAlgorithm::kRing, 7e-6, 0.7e-6, 0.0, 60e9};
    const AlgorithmParams simple{CollectiveAlgorithm::kRing, 9e-6, 3.6e-6, 0.0, 230e9};
    const double t = std::min(algorithm_time_s(ll, kind, bytes, g, 1.0),
                              algorithm_time_s(simple, kind, bytes, g, 1.0));
    return {in_place ? t * 0.99 : t, wrong_elements};
  }
  GemmTiming time_gemm(const std::string& dtype, const GemmShape& shape, int /*warmup*/,
                       int repeats) override {
    gemms_run.emplace_back(dtype, shape.k);
    GemmTiming t;
    const double base = shape.flop() / 250e12;
    for (int i = 0; i < repeats; ++i)
      t.times_s.push_back(i == 0 ? 10 * base : base);
    t.wrong = wrong_elements;
    t.checked = 64;
    return t;
  }
  int sm_count() override { return 108; }
  // Beside all-reduce the GEMMs lose 24 SMs, beside all-gather 20; the FFN shape (n > 8192)
  // 2 more: the expected per-pair counts are exact by construction.
  static int taken(CollectiveKind kind, const GemmShape& shape) {
    return (kind == CollectiveKind::kAllReduce ? 24 : 20) + (shape.n > 8192 ? 2 : 0);
  }
  OverlapTiming time_gemm_beside_collective(const std::string& /*dtype*/, const GemmShape& shape,
                                            CollectiveKind kind, double collective_bytes,
                                            int collective_ops, int /*warmup*/,
                                            int repeats) override {
    ++beside_calls;
    last_ops = collective_ops;
    last_collective_bytes = collective_bytes;
    const double alone = shape.flop() / 250e12;
    const double beside = beside_over_alone > 0.0
                              ? alone * beside_over_alone
                              : alone * sm_count() / (sm_count() - taken(kind, shape));
    OverlapTiming t;
    for (int i = 0; i < repeats; ++i)
      t.times_s.push_back(i == 1 ? 10 * beside : beside);
    t.collective_outlasted = collective_ops >= outlasting_ops;
    t.wrong = wrong_elements;
    t.checked = 64;
    return t;
  }
  int collective_calls = 0;
  std::vector<std::pair<std::string, double>> gemms_run;  // (dtype, K) of every time_gemm
  int last_warmup = 0;
  int last_iters = 0;
  long long wrong_elements = 0;
  int beside_calls = 0;
  int last_ops = 0;
  double last_collective_bytes = 0.0;
  double beside_over_alone = 0.0;  // > 0: every GEMM this much slower beside any collective
  int outlasting_ops = 0;          // loops of fewer ops end before the GEMMs
};

// Single-GPU variant: overlap needs a collective over at least 2 ranks.
class OneGpuBackend : public FakeBackend {
 public:
  int ranks() override { return 1; }
};

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(HarnessTest, SizeArgumentsAre1024Based) {
  EXPECT_DOUBLE_EQ(parse_size_arg("-b", "8"), 8.0);
  EXPECT_DOUBLE_EQ(parse_size_arg("-b", "128K"), 131072.0);
  EXPECT_DOUBLE_EQ(parse_size_arg("-e", "8G"), 8589934592.0);
  try {
    (void)parse_size_arg("-e", "8GB");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "-e: expected a size like 8, 128K, 1M or 8G (1024-based, as nccl-tests), got "
              "\"8GB\"");
  }
}

TEST(HarnessTest, CollectiveListsAndValidation) {
  EXPECT_EQ(parse_collectives_arg("all").size(), 6U);
  EXPECT_EQ(parse_collectives_arg("all_reduce,send_recv,all_reduce").size(), 2U);
  try {
    (void)parse_collectives_arg("allreduce");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--collectives: unknown collective \"allreduce\"; expected all or a list of "
              "all_reduce, all_gather, reduce_scatter, alltoall, broadcast, send_recv");
  }
  NcclSweep s;
  s.factor = 1.0;
  try {
    validate(s);
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--stepfactor: must be greater than 1");
  }
  GemmSweep g;
  g.shapes = gemm_grid();
  g.dtypes = {"fp8_e4m3"};
  try {
    validate(g, false);
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--dtypes: fp8_e4m3 needs a Hopper (or newer) GPU");
  }
  EXPECT_NO_THROW(validate(g, true));
}

TEST(HarnessTest, PlansSizesLikeNcclTests) {
  NcclSweep s;
  s.min_bytes = 8;
  s.max_bytes = 1024;
  const auto ar = plan_sizes(s, CollectiveKind::kAllReduce, 8);
  ASSERT_EQ(ar.size(), 8U);  // 8 .. 1024 doubling
  EXPECT_DOUBLE_EQ(ar.front(), 8.0);
  EXPECT_DOUBLE_EQ(ar.back(), 1024.0);
  // All-gather moves 8 ranks x count floats: sizes are multiples of 32 B; below that nothing.
  const auto ag = plan_sizes(s, CollectiveKind::kAllGather, 8);
  EXPECT_DOUBLE_EQ(ag.front(), 32.0);
  for (double b : ag)
    EXPECT_EQ(static_cast<long long>(b) % 32, 0);
}

TEST(HarnessTest, GemmOperandSetsCoverTwiceTheL2) {
  const size_t l2_bytes = 40u << 20;  // A100
  // 256^3 bf16: A, B and D of 128 KiB each; 80 MiB / 384 KiB = 213.3, rounded up.
  EXPECT_EQ(plan_gemm_operand_sets(l2_bytes, 3 * (128u << 10)), 214U);
  EXPECT_EQ(plan_gemm_operand_sets(l2_bytes, l2_bytes / 2), 4U);
  EXPECT_EQ(plan_gemm_operand_sets(l2_bytes, l2_bytes / 2 - 1), 5U);
  // Consecutive repeats never share a set, and tiny GEMMs stop at 1024 sets.
  EXPECT_EQ(plan_gemm_operand_sets(l2_bytes, size_t{1} << 32), 2U);
  EXPECT_EQ(plan_gemm_operand_sets(l2_bytes, 1024), 1024U);
}

TEST(HarnessTest, AlgorithmBandwidthIsSizeOverTime) {
  EXPECT_DOUBLE_EQ(algorithm_bandwidth(1e9, 0.5), 2e9);
}

TEST(HarnessTest, NcclSweepWritesMeasurementsTheFitterReads) {
  FakeBackend backend;
  NcclSweep s;
  s.collectives = {CollectiveKind::kAllReduce, CollectiveKind::kSendRecv};
  s.max_bytes = 1024.0 * 1024 * 1024;
  const Measurements m = run_nccl(backend, s);
  ASSERT_EQ(m.collectives.size(), 2U);
  EXPECT_EQ(m.collectives[0].samples.size(), 28U);
  EXPECT_EQ(backend.collective_calls, 2 * 2 * 28);  // out-of-place and in-place
  EXPECT_EQ(backend.last_warmup, 5);
  EXPECT_EQ(backend.last_iters, 20);
  // Write, read back strictly, fit: the round trip through capsim.measurements/v1 works.
  const nlohmann::json doc = measurements_to_json(m);
  const Measurements back = read_measurements_json(doc, "m.json");
  ASSERT_EQ(back.collectives.size(), 2U);
  EXPECT_EQ(back.machine.nccl_version, "2.23.4");
  CalibrationInputs in;
  in.curves = back.collectives;
  in.machines = {back.machine};
  const auto fit = fit_profile(in, {});
  EXPECT_EQ(fit->profile.gpu.name, "A100-SXM4-80GB");
  for (const auto& rec : fit->profile.fit_quality)
    EXPECT_LT(rec.mape_pct, 2.0) << rec.curve;
}

TEST(HarnessTest, WrongElementsFailTheRun) {
  FakeBackend backend;
  backend.wrong_elements = 3;
  NcclSweep s;
  s.max_bytes = 8;
  try {
    (void)run_nccl(backend, s);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "all_reduce at 8 B: 6 wrong elements");
  }
}

TEST(HarnessTest, WrongGemmElementsFailTheRunNamingTheShape) {
  FakeBackend backend;
  backend.wrong_elements = 2;
  GemmSweep s;
  s.shapes = {{4096, 1024, 512, 1}};
  try {
    (void)run_gemm(backend, s);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(" 4096x1024x512: 2 of "), std::string::npos) << e.what();
  }
}

TEST(HarnessTest, GemmRunTakesTheMedianOfRepeats) {
  FakeBackend backend;
  GemmSweep s;
  s.shapes = {{4096, 4096, 4096, 1}};
  const Measurements m = run_gemm(backend, s);
  ASSERT_EQ(m.gemms.size(), 1U);
  EXPECT_NEAR(m.gemms[0].flop_per_s, 250e12, 1e6);
  EXPECT_FALSE(gemm_grid().empty());
}

// cuBLASLt's fp8 kernels need every dimension a multiple of 16: such fp8 shapes are skipped
// (the grid's K = 10920 and 10922 would otherwise abort the whole run), 16-bit ones all run.
TEST(HarnessTest, Fp8SkipsShapesCublasLtCannotRun) {
  EXPECT_TRUE(fp8_shape_supported({4096, 4096, 10944, 1}));
  EXPECT_FALSE(fp8_shape_supported({4096, 4096, 10920, 1}));
  EXPECT_FALSE(fp8_shape_supported({4104, 4096, 4096, 1}));
  FakeBackend backend;
  GemmSweep s;
  s.dtypes = {"bf16", "fp8_e4m3"};
  s.shapes = {{4096, 4096, 10944, 1}, {4096, 4096, 10920, 1}};
  const Measurements m = run_gemm(backend, s);
  using Run = std::pair<std::string, double>;
  EXPECT_EQ(backend.gemms_run,
            (std::vector<Run>{{"bf16", 10944}, {"bf16", 10920}, {"fp8_e4m3", 10944}}));
  EXPECT_EQ(m.gemms.size(), 3U);
}

TEST(HarnessTest, ScenarioShapesAreDistinctGemms) {
  Scenario s;
  s.model = {"t", 2, 4096, 32, 32, 16384, FfnActivation::kGelu, 2048, 51200, false};
  s.parallelism.tensor = 2;
  s.parallelism.micro_batch_size = 1;
  s.parallelism.global_batch_size = 8;
  const auto shapes = scenario_gemm_shapes(s);
  ASSERT_FALSE(shapes.empty());
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (size_t j = i + 1; j < shapes.size(); ++j) {
      EXPECT_FALSE(shapes[i].m == shapes[j].m && shapes[i].n == shapes[j].n &&
                   shapes[i].k == shapes[j].k && shapes[i].batch == shapes[j].batch);
    }
  }
}

TEST(HarnessTest, OverlapDerivesTheSmsTakenPerPairAndTheirMedian) {
  FakeBackend backend;
  const OverlapRun run;  // 8192^3 and 8192x28672x8192, all-reduce and all-gather of 256 MiB
  const Measurements m = run_overlap(backend, run);
  ASSERT_TRUE(m.overlap.has_value());
  const OverlapMeasurement& o = *m.overlap;
  EXPECT_EQ(o.sms, 108);
  EXPECT_EQ(o.ranks, 8);
  EXPECT_EQ(o.dtype, "bf16");
  EXPECT_DOUBLE_EQ(o.collective_bytes, 256.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(backend.last_collective_bytes, 256.0 * 1024 * 1024);
  EXPECT_EQ(backend.last_iters, 5);  // each collective timed alone to size its loop
  ASSERT_EQ(o.samples.size(), 4U);
  // Shape by shape, collective by collective; medians ignore the one slow repeat.
  const int expected[] = {24, 20, 26, 22};
  for (size_t i = 0; i < 4; ++i) {
    const OverlapSample& s = o.samples[i];
    EXPECT_EQ(s.collective, i % 2 == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kAllGather);
    EXPECT_DOUBLE_EQ(s.m, 8192.0);
    EXPECT_DOUBLE_EQ(s.n, i < 2 ? 8192.0 : 28672.0);
    EXPECT_NEAR(s.time_alone_s, 2.0 * 8192 * s.n * 8192 / 250e12, 1e-12);
    EXPECT_NEAR(s.time_beside_s, s.time_alone_s * 108 / (108 - expected[i]), 1e-12);
    EXPECT_EQ(s.sms_taken, expected[i]) << i;
  }
  EXPECT_EQ(o.sms_taken, 23);  // median of 20, 22, 24, 26 = 23
  EXPECT_EQ(backend.beside_calls, 4);
  // The last loop was sized from the FFN GEMM alone and the fake's all-gather time.
  const double ag_s =
      backend.time_collective(CollectiveKind::kAllGather, o.collective_bytes, false, 1, 5).time_s;
  EXPECT_EQ(backend.last_ops,
            plan_collective_ops(o.samples[3].time_alone_s, ag_s, run.warmup, run.repeats));
}

TEST(HarnessTest, OverlapWithoutSlowdownTakesNoSms) {
  FakeBackend backend;
  backend.beside_over_alone = 1.0;
  Measurements m = run_overlap(backend, {});
  for (const auto& s : m.overlap->samples)
    EXPECT_EQ(s.sms_taken, 0);
  EXPECT_EQ(m.overlap->sms_taken, 0);
  // Faster beside the collective (noise) clamps to 0, not a negative count.
  backend.beside_over_alone = 0.9;
  m = run_overlap(backend, {});
  EXPECT_EQ(m.overlap->sms_taken, 0);
  // A collective cannot take every SM: 1000x slower clamps to SMs - 1.
  backend.beside_over_alone = 1000.0;
  m = run_overlap(backend, {});
  EXPECT_EQ(m.overlap->sms_taken, 107);
}

TEST(HarnessTest, OverlapSmsTakenFormula) {
  EXPECT_EQ(overlap_sms_taken(132, 1.0, 132.0 / 108.0), 24);
  EXPECT_EQ(overlap_sms_taken(108, 1.0, 1.0), 0);
  EXPECT_EQ(overlap_sms_taken(108, 1.0, 0.5), 0);
  EXPECT_EQ(overlap_sms_taken(108, 1.0, 1e6), 107);
  EXPECT_EQ(overlap_sms_taken(8, 0.9375, 1.0), 1);  // 8 x 0.0625 = 0.5 rounds half up
  std::vector<OverlapSample> samples(3);
  samples[0].sms_taken = 30;
  samples[1].sms_taken = 10;
  samples[2].sms_taken = 20;
  EXPECT_EQ(overlap_median_sms_taken(samples), 20);
  samples.pop_back();
  EXPECT_EQ(overlap_median_sms_taken(samples), 20);  // (10 + 30) / 2
  samples[1].sms_taken = 11;
  EXPECT_EQ(overlap_median_sms_taken(samples), 21);  // 20.5 rounds up
}

TEST(HarnessTest, OverlapLoopsAreSizedToOutlastTheGemms) {
  // (0 + 3) x (3 x 0.5 s + 100 us) / 0.25 s = 18.0012 -> 19, + 1 for the op before the GEMMs.
  EXPECT_EQ(plan_collective_ops(0.5, 0.25, 0, 3), 20);
  EXPECT_EQ(plan_collective_ops(1e-6, 10.0, 0, 3), 4);
  EXPECT_EQ(plan_collective_ops(1.0, 0.0, 10, 30), kMaxCollectiveOps);
  EXPECT_EQ(plan_collective_ops(1.0, 1e-9, 10, 30), kMaxCollectiveOps);
  // A loop that ends first is re-run 4x longer (here twice), then the result is kept.
  FakeBackend backend;
  OverlapRun run;
  run.shapes = {{8192, 8192, 8192, 1}};
  run.collectives = {CollectiveKind::kAllReduce};
  const double ar_s =
      backend.time_collective(CollectiveKind::kAllReduce, 256.0 * 1024 * 1024, false, 1, 5).time_s;
  const int planned = plan_collective_ops(2.0 * 8192 * 8192 * 8192 / 250e12, ar_s, 10, 30);
  backend.outlasting_ops = 4 * planned + 1;
  const Measurements m = run_overlap(backend, run);
  EXPECT_EQ(backend.beside_calls, 3);
  EXPECT_EQ(backend.last_ops, 16 * planned);
  EXPECT_EQ(m.overlap->sms_taken, 24);
  // Never outlasting: 4 attempts, then an error naming the pair.
  backend.beside_calls = 0;
  backend.outlasting_ops = kMaxCollectiveOps + 1;
  EXPECT_EQ(error_of([&] { (void)run_overlap(backend, run); }),
            "GEMM bf16 8192x8192x8192 beside all_reduce: the loop of " +
                std::to_string(64 * planned) + " collectives ended before the timed GEMMs did");
  EXPECT_EQ(backend.beside_calls, 4);
}

TEST(HarnessTest, OverlapArgumentsHaveExactMessages) {
  const auto shapes = parse_shapes_arg("--shapes", "8192x8192x8192,512x512x64x16");
  ASSERT_EQ(shapes.size(), 2U);
  EXPECT_DOUBLE_EQ(shapes[1].k, 64.0);
  EXPECT_DOUBLE_EQ(shapes[1].batch, 16.0);
  for (const char* bad : {"8192x8192", "8192x8192x0", "8192x8192x8192x1x1", "8192x8192x", "x1x2",
                          "8192*8192*8192", "1.5x2x3"}) {
    EXPECT_EQ(
        error_of([&] { (void)parse_shapes_arg("--shapes", bad); }),
        std::string("--shapes: expected MxNxK or MxNxKxBATCH with positive integers, got \"") +
            bad + "\"")
        << bad;
  }
  EXPECT_EQ(error_of([&] { (void)parse_shapes_arg("--shapes", "64x64x64,"); }),
            "--shapes: expected MxNxK or MxNxKxBATCH with positive integers, got \"\"");
  const std::vector<std::pair<std::function<void(OverlapRun&)>, std::string>> cases = {
      {[](OverlapRun& r) { r.shapes.clear(); }, "--shapes: no GEMM shapes given"},
      {[](OverlapRun& r) { r.collectives.clear(); }, "--collectives: no collective given"},
      {[](OverlapRun& r) { r.collectives = {CollectiveKind::kSendRecv}; },
       "--collectives: expected all_reduce, all_gather or reduce_scatter (the data-parallel and "
       "ZeRO collectives that run beside compute), got send_recv"},
      {[](OverlapRun& r) { r.collective_bytes = 512.0 * 1024; },
       "--collective-bytes: must be at least 1M: NCCL runs small collectives on fewer channels"},
      {[](OverlapRun& r) { r.collective_bytes = 65.0 * 1024 * 1024 * 1024; },
       "--collective-bytes: must be at most 64G"},
      {[](OverlapRun& r) { r.dtype = "fp8_e4m3"; },
       "--dtype: expected bf16 or fp16, got \"fp8_e4m3\""},
      {[](OverlapRun& r) { r.warmup = -1; }, "--warmup: must not be negative"},
      {[](OverlapRun& r) { r.repeats = 2; }, "--repeats: must be at least 3 (median of repeats)"},
  };
  for (const auto& [mutate, message] : cases) {
    OverlapRun run;
    mutate(run);
    EXPECT_EQ(error_of([&] { validate(run); }), message);
    FakeBackend backend;  // run_overlap validates before touching the device
    EXPECT_EQ(error_of([&] { (void)run_overlap(backend, run); }), message);
    EXPECT_EQ(backend.collective_calls, 0);
  }
  OverlapRun ok;
  ok.collectives = {CollectiveKind::kReduceScatter};
  ok.dtype = "fp16";
  EXPECT_NO_THROW(validate(ok));
  OneGpuBackend one;
  EXPECT_EQ(error_of([&] { (void)run_overlap(one, {}); }),
            "--gpus: overlap needs at least 2 GPUs, got 1: a collective over one rank moves no "
            "data");
  FakeBackend wrong;
  wrong.wrong_elements = 2;
  EXPECT_EQ(error_of([&] { (void)run_overlap(wrong, {}); }),
            "all_reduce at 268435456 B: 2 wrong elements");
}

TEST(HarnessTest, OverlapMeasurementsSetTheFittedCollectiveSms) {
  FakeBackend backend;
  NcclSweep sweep;
  sweep.max_bytes = 1024.0 * 1024 * 1024;
  const Measurements nccl = run_nccl(backend, sweep);
  const Measurements overlap = run_overlap(backend, {});
  // Through capsim.measurements/v1 and the strict reader, as `capsim calibrate fit` reads it.
  const Measurements back = read_measurements_json(measurements_to_json(overlap), "ovl.json");
  ASSERT_TRUE(back.overlap.has_value());
  EXPECT_EQ(back.overlap->sms_taken, 23);
  EXPECT_EQ(measurements_to_json(back), measurements_to_json(overlap));

  CalibrationInputs in;
  in.curves = nccl.collectives;
  const auto plain = fit_profile(in, {});
  EXPECT_EQ(plain->profile.collective_sms, 24);
  EXPECT_NE(std::find(plain->profile.provenance.begin(), plain->profile.provenance.end(),
                      "collective_sms 24: not measured (no capsim-calibrate overlap input); the "
                      "default, NCCL's channel count on HGX A100 and H100 (one CTA per channel)"),
            plain->profile.provenance.end());

  in.overlaps = {*back.overlap};
  const auto fitted = fit_profile(in, {});
  EXPECT_EQ(fitted->profile.collective_sms, 23);
  const auto& prov = fitted->profile.provenance;
  EXPECT_NE(std::find(prov.begin(), prov.end(),
                      "collective_sms 23: measured in situ by capsim-calibrate overlap (GEMM time "
                      "alone vs beside a running collective)"),
            prov.end());
  EXPECT_NE(std::find(prov.begin(), prov.end(),
                      "ovl.json: capsim-calibrate overlap, 23 of 108 SMs taken (median of 4 bf16 "
                      "GEMM x all_reduce/all_gather pairs; 256 MiB over 8 ranks)"),
            prov.end());

  // Two files: the median of their values; a file from a GPU of another SM count is an error.
  OverlapMeasurement other = *back.overlap;
  other.sms_taken = 30;
  other.source = "other.json";
  in.overlaps = {*back.overlap, other};
  EXPECT_EQ(fit_profile(in, {})->profile.collective_sms, 27);  // (23 + 30 + 1) / 2
  other.sms = 132;
  in.overlaps = {other};
  EXPECT_EQ(error_of([&] { (void)fit_profile(in, {}); }),
            "other.json:/overlap/sms: measured on a GPU with 132 SMs, but A100-SXM4-80GB has 108; "
            "measure collective_sms on the profile's GPU");
}

}  // namespace
}  // namespace capsim::calibrate::harness
