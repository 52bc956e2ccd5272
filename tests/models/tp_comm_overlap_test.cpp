// Transformer Engine's comm-GEMM overlap of the sequence-parallel collectives
// (models/tp_comm_overlap.hpp): what it hides, and laws it keeps.
#include "models/tp_comm_overlap.hpp"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/datasheet_profile.hpp"
#include "models/memory_model.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "io/units.hpp"

namespace capsim {
namespace {

Scenario tp4_sp_scenario() {  // GPT 13B, TP4 PP2 DP4 with SP on A100
  return io::load_scenario(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
}

SimulationResult estimate(const Scenario& s) {
  return estimate::estimate_iteration(s, datasheet_profile(s.cluster.gpu, s.cluster));
}

TEST(TpCommOverlapTest, HidesPartOfTheTensorParallelTime) {
  Scenario s = tp4_sp_scenario();
  const SimulationResult serial = estimate(s);
  s.parallelism.tp_comm_overlap = true;
  const SimulationResult overlapped = estimate(s);
  EXPECT_LT(overlapped.iteration_time_s, serial.iteration_time_s);
  EXPECT_LT(overlapped.breakdown.tp_comm_exposed_s, 0.8 * serial.breakdown.tp_comm_exposed_s);
  // The last pipelined split, the SMs the scatters and bulk gathers take from their GEMMs, and
  // the embedding's and head's collectives (outside TE's layers) stay exposed.
  EXPECT_GT(overlapped.breakdown.tp_comm_exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(overlapped.breakdown.compute_s, serial.breakdown.compute_s);
}

TEST(TpCommOverlapTest, AFasterTensorParallelLinkIsNeverSlower) {
  double previous = 0.0;
  double slowest = 0.0;
  for (const char* bandwidth : {"50GBps", "100GBps", "300GBps", "600GBps", "1200GBps"}) {
    Scenario s = tp4_sp_scenario();
    s.parallelism.tp_comm_overlap = true;
    s.cluster.intra_node_bandwidth_bytes_per_s = *io::units::parse_bandwidth_bytes_per_s(bandwidth);
    const double t = estimate(s).breakdown.tp_comm_exposed_s;
    if (previous > 0.0) {
      EXPECT_LE(t, previous * (1 + 1e-12)) << bandwidth;
    }
    previous = t;
    slowest = std::max(slowest, t);
  }
  EXPECT_LT(previous, 0.5 * slowest);  // the bandwidth mattered
}

// On a slow link nothing hides the collectives' excess over their GEMMs: the overlapped time
// approaches the serial one from below.
TEST(TpCommOverlapTest, OnASlowLinkTheCollectivesDominate) {
  Scenario s = tp4_sp_scenario();
  s.cluster.intra_node_bandwidth_bytes_per_s = *io::units::parse_bandwidth_bytes_per_s("2GBps");
  const double serial = estimate(s).breakdown.tp_comm_exposed_s;
  s.parallelism.tp_comm_overlap = true;
  const double overlapped = estimate(s).breakdown.tp_comm_exposed_s;
  EXPECT_LT(overlapped, serial);
  EXPECT_GT(overlapped, 0.9 * serial);
}

// One micro-batch's tokens x h per buffer: six all-gather buffers (fp8 under fp8) and four
// reduce-scatter buffers in 16 bits, on every stage.
TEST(TpCommOverlapTest, MemoryCountsTheUserbuffers) {
  for (Precision precision : {Precision::kBf16, Precision::kFp8}) {
    Scenario s = tp4_sp_scenario();
    s.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
    s.parallelism.precision = precision;
    const GpuSpec& gpu = s.cluster.gpu;
    const MemoryEstimate serial = estimate_memory(s.model, s.parallelism, gpu);
    s.parallelism.tp_comm_overlap = true;
    const MemoryEstimate overlapped = estimate_memory(s.model, s.parallelism, gpu);
    const double tokens_by_h = 2048.0 * 5120.0;
    const double expected = tokens_by_h * (precision == Precision::kFp8 ? 6.0 + 8.0 : 20.0);
    ASSERT_EQ(serial.stages.size(), overlapped.stages.size());
    for (size_t i = 0; i < serial.stages.size(); ++i) {
      EXPECT_DOUBLE_EQ(
          overlapped.stages[i].communication_bytes - serial.stages[i].communication_bytes,
          expected);
    }
  }
}

TEST(TpCommOverlapTest, NothingWithoutTensorParallelism) {
  const Scenario s = tp4_sp_scenario();
  const HardwareProfile profile = datasheet_profile(s.cluster.gpu, s.cluster);
  GroupShape one;
  const LayerComm c =
      tp_overlapped_layer_comm(lower_layer(s.model, s.parallelism), profile, s.cluster.gpu,
                               Precision::kBf16, 2048.0, one, 1e6, 1e6);
  EXPECT_EQ(c.forward_s, 0.0);
  EXPECT_EQ(c.backward_s, 0.0);
}

TEST(TpCommOverlapTest, WithoutSmsLowersThePeakInProportion) {
  const GpuSpec& a100 = *builtin_catalog().find_gpu("A100-SXM4-80GB");
  const GpuSpec g = without_sms(a100, kUserbufferSms);
  EXPECT_EQ(g.num_sms, a100.num_sms - 16);
  EXPECT_DOUBLE_EQ(g.peak_bf16_flop_per_s, a100.peak_bf16_flop_per_s * 92.0 / 108.0);
  EXPECT_EQ(without_sms(a100, 1000).num_sms, 1);
}

TEST(TpCommOverlapTest, ScenarioKeyRoundTrips) {
  Scenario s = tp4_sp_scenario();
  s.parallelism.tp_comm_overlap = true;
  const nlohmann::json j = io::scenario_to_json(s);
  EXPECT_TRUE(j.at("parallelism").at("tp_comm_overlap").get<bool>());
  io::JsonReader reader(j, "<round trip>");
  const Scenario back = io::read_scenario(reader, true);
  EXPECT_TRUE(back.parallelism.tp_comm_overlap);
  EXPECT_FALSE(
      io::scenario_to_json(tp4_sp_scenario()).at("parallelism").contains("tp_comm_overlap"));
}

}  // namespace
}  // namespace capsim
