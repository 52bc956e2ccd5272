#include "models/intra_node_bandwidth.hpp"

#include <string>

#include <gtest/gtest.h>

#include "estimate/analytic_estimator.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

HardwareProfile two_scope_profile() {
  HardwareProfile p;
  p.collectives.push_back(
      {CollectiveKind::kAllReduce, false, {{CollectiveAlgorithm::kRing, 5e-6, 1e-6, 0.0, 100e9}}});
  p.collectives.push_back(
      {CollectiveKind::kAllReduce, true, {{CollectiveAlgorithm::kRing, 9e-6, 0.0, 2e-6, 40e9}}});
  return p;
}

TEST(IntraNodeBandwidthTest, ScalesOnlyIntraNodeBusBandwidth) {
  const HardwareProfile p = with_intra_node_bandwidth(two_scope_profile(), 600e9, 300e9);
  const AlgorithmParams& intra = p.collectives[0].algorithms[0];
  const AlgorithmParams& inter = p.collectives[1].algorithms[0];
  EXPECT_DOUBLE_EQ(intra.bus_bandwidth_bytes_per_s, 200e9);
  EXPECT_DOUBLE_EQ(intra.base_latency_s, 5e-6);
  EXPECT_DOUBLE_EQ(intra.intra_step_latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(inter.bus_bandwidth_bytes_per_s, 40e9);
}

TEST(IntraNodeBandwidthTest, EqualOrMissingFiguresLeaveTheProfileAlone) {
  for (const auto& [bandwidth, reference] : {std::pair{300e9, 300e9}, {0.0, 300e9}, {300e9, 0.0}}) {
    const HardwareProfile p = with_intra_node_bandwidth(two_scope_profile(), bandwidth, reference);
    EXPECT_EQ(p.collectives[0].algorithms[0].bus_bandwidth_bytes_per_s, 100e9);
  }
}

// The shipped GPT-3 scenario's TP all-reduces run inside a node: its intra_node.bandwidth must
// move their time, slower links giving a slower iteration.
TEST(IntraNodeBandwidthTest, ScenarioBandwidthReachesTheTensorParallelCollectives) {
  const std::string path =
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-selene-1024/scenario.json";
  const auto tp_time = [&](double nvlink_bytes_per_s) {
    Scenario s = io::load_scenario(path);
    s.cluster.intra_node_bandwidth_bytes_per_s = nvlink_bytes_per_s;
    const SimulationResult r = estimate::estimate_iteration(s, io::resolve_profile(s));
    return std::pair{r.breakdown.tp_comm_exposed_s, r.iteration_time_s};
  };
  const auto [tp_slow, slow] = tp_time(150e9);
  const auto [tp_catalog, catalog] = tp_time(300e9);
  const auto [tp_fast, fast] = tp_time(600e9);
  EXPECT_GT(tp_slow, tp_catalog);
  EXPECT_GT(tp_catalog, tp_fast);
  EXPECT_GT(slow, catalog);
  EXPECT_GT(catalog, fast);
}

}  // namespace
}  // namespace capsim
