#include "calibrate/harness/harness.hpp"

#include <string>

#include <gtest/gtest.h>

#include "calibrate/profile_fit.hpp"
#include "models/collective_cost.hpp"
#include "models/io/input_error.hpp"
#include "models/io/json_reader.hpp"

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
  GemmTiming time_gemm(const std::string& /*dtype*/, const GemmShape& shape, int /*warmup*/,
                       int repeats) override {
    GemmTiming t;
    const double base = shape.flop() / 250e12;
    for (int i = 0; i < repeats; ++i)
      t.times_s.push_back(i == 0 ? 10 * base : base);
    t.checked = 64;
    return t;
  }
  int collective_calls = 0;
  int last_warmup = 0;
  int last_iters = 0;
  long long wrong_elements = 0;
};

TEST(HarnessTest, SizeArgumentsAre1024Based) {
  EXPECT_DOUBLE_EQ(parse_size_arg("-b", "8"), 8.0);
  EXPECT_DOUBLE_EQ(parse_size_arg("-b", "128K"), 131072.0);
  EXPECT_DOUBLE_EQ(parse_size_arg("-e", "8G"), 8589934592.0);
  try {
    (void)parse_size_arg("-e", "8GB");
    FAIL();
  } catch (const InputError& e) {
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
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--collectives: unknown collective \"allreduce\"; expected all or a list of "
              "all_reduce, all_gather, reduce_scatter, alltoall, broadcast, send_recv");
  }
  NcclSweep s;
  s.factor = 1.0;
  try {
    validate(s);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--stepfactor: must be greater than 1");
  }
  GemmSweep g;
  g.shapes = gemm_grid();
  g.dtypes = {"fp8_e4m3"};
  try {
    validate(g, false);
    FAIL();
  } catch (const InputError& e) {
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

TEST(HarnessTest, StatisticsAndBandwidthConventions) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 2.0, 3.0}), 2.5);
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
  EXPECT_EQ(fit->profile.gpu, "A100-SXM4-80GB");
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

TEST(HarnessTest, GemmRunTakesTheMedianOfRepeats) {
  FakeBackend backend;
  GemmSweep s;
  s.shapes = {{4096, 4096, 4096, 1}};
  const Measurements m = run_gemm(backend, s);
  ASSERT_EQ(m.gemms.size(), 1U);
  EXPECT_NEAR(m.gemms[0].flop_per_s, 250e12, 1e6);
  EXPECT_FALSE(gemm_grid().empty());
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

}  // namespace
}  // namespace capsim::calibrate::harness
