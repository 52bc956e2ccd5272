// NVLink domains that span nodes on the event engine: traffic between GPUs of one domain rides
// its NVLink switches, traffic between domains the NICs. Every TEST runs its own simulation in
// its own process (gtest_discover_tests); comparisons run one of the two in a forked child.
#include <string>

#include <gtest/gtest.h>

#include "sim/iteration_simulator.hpp"

#include "estimate/iteration_model.hpp"
#include "io/profile_io.hpp"
#include "tests/sim/sim_test_util.hpp"

namespace capsim::sim::nvlink_domain_sim_test {
namespace {

using test::make_costs;
using test::make_profile;
using test::make_scenario;

constexpr double kMs = 1e-3;

// TP 8 x PP 2 on nodes of 8: each stage is a node, and 50 MB of activations cross between
// them. Without a domain the hop takes the NICs (20 GB/s bus bandwidth: 2.5 ms); with both
// nodes in one 16-GPU domain it takes NVLink (200 GB/s: 0.25 ms). Iteration: F0 + hop + F1 +
// B1 + hop + B0 = 1 + h + 1 + 2 + h + 2 ms.
TEST(NvlinkDomainSimTest, PipelineHopInsideTheDomainRidesNvlink) {
  const Scenario apart = make_scenario(8, 2, 1, 1, Schedule::kOneFOneB);
  Scenario joined = apart;
  joined.cluster.nvlink_domain = 16;
  const IterationCosts costs = make_costs(apart, 1 * kMs, 2 * kMs, 0.0, 50e6, 0.0);
  const std::string child = test::run_in_child([&] {
    return test::format_double(simulate_iteration(apart, costs, make_profile()).iteration_time_s);
  });
  ASSERT_EQ(child.rfind("exception: ", 0), std::string::npos) << child;
  const SimulationResult r = simulate_iteration(joined, costs, make_profile());
  const double nvlink_hop_s = 50e6 / 200e9;
  const double nic_hop_s = 50e6 / 20e9;
  EXPECT_NEAR(r.iteration_time_s, 6 * kMs + 2 * nvlink_hop_s, 1e-9);
  EXPECT_NEAR(r.breakdown.pp_comm_exposed_s, 2 * nvlink_hop_s, 1e-9);
  EXPECT_NEAR(std::stod(child) - r.iteration_time_s, 2 * (nic_hop_s - nvlink_hop_s), 1e-9);
}

// TP 8 on trays of 4 GPUs: inside one 8-GPU domain its collectives ride NVLink (ring bus
// bandwidth 200 GB/s); without the domain the group straddles two nodes and its ring crosses the
// NICs (20 GB/s; each of its 4 ranks per node has its own 25 GB/s NIC). Both runs price the
// same bytes with no latency and no overlap, so the exposed TP time differs by exactly the
// ratio of the link figures, 10.
TEST(NvlinkDomainSimTest, TensorGroupStraddlingTwoDomainsPaysTheNicShare) {
  Scenario apart = make_scenario(8, 1, 1, 2, Schedule::kOneFOneB);
  apart.cluster.gpus_per_node = 4;
  apart.cluster.num_nodes = 2;
  apart.cluster.nics_per_node = 4;
  apart.cluster.has_inter_node = true;
  // All-reduces, none beside a GEMM: sequence parallelism's backward re-gather always runs
  // beside one, where only what exceeds the GEMM is exposed.
  apart.parallelism.sequence_parallel = false;
  apart.parallelism.tp_backward_overlap = false;
  Scenario joined = apart;
  joined.cluster.nvlink_domain = 8;
  HardwareProfile profile = io::resolve_profile(apart);
  profile.collectives = make_profile().collectives;
  profile.reference_node_nic_bandwidth_bytes_per_s = 0.0;
  const IterationCosts apart_costs = estimate::compute_iteration_costs(apart, profile);
  const IterationCosts joined_costs = estimate::compute_iteration_costs(joined, profile);
  EXPECT_EQ(apart_costs.tp_group.nodes, 2);
  EXPECT_EQ(joined_costs.tp_group.nodes, 1);
  EXPECT_EQ(joined_costs.tp_group.ranks_per_node, 8);
  const std::string child = test::run_in_child([&] {
    return test::format_double(
        simulate_iteration(apart, apart_costs, profile).breakdown.tp_comm_exposed_s);
  });
  ASSERT_EQ(child.rfind("exception: ", 0), std::string::npos) << child;
  const SimulationResult r = simulate_iteration(joined, joined_costs, profile);
  ASSERT_GT(r.breakdown.tp_comm_exposed_s, 0.0);
  EXPECT_NEAR(std::stod(child) / r.breakdown.tp_comm_exposed_s, 200e9 / 20e9, 1e-9);
}

}  // namespace
}  // namespace capsim::sim::nvlink_domain_sim_test
