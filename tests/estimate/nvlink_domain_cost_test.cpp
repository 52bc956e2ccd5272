// The analytic costs of NVLink domains that span nodes (cluster.nvlink_domain): a domain takes
// the node's place for every group, and a group between domains is no faster than inside one.
#include <string>

#include <gtest/gtest.h>

#include "models/collective_cost.hpp"
#include "models/datasheet_profile.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "io/scenario_io.hpp"

namespace capsim::nvlink_domain_cost_test {
namespace {

// GPT 13B, TP 4 x PP 2 x DP 4 on 32 A100s, one 25 GB/s NIC per GPU.
Scenario base_scenario() {
  return io::load_scenario(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
}

Scenario on_nodes_of(int gpus_per_node, int nvlink_domain) {
  Scenario s = base_scenario();
  s.cluster.gpus_per_node = gpus_per_node;
  s.cluster.num_nodes = 32 / gpus_per_node;
  s.cluster.nics_per_node = gpus_per_node;
  s.cluster.nvlink_domain = nvlink_domain;
  return s;
}

// Naming the node as the domain changes nothing.
TEST(NvlinkDomainCostTest, DomainOfOneNodeIsTheNode) {
  const Scenario plain = base_scenario();
  Scenario named = plain;
  named.cluster.nvlink_domain = named.cluster.gpus_per_node;
  const HardwareProfile profile = datasheet_profile(plain.cluster.gpu, plain.cluster);
  const IterationCosts a = estimate::compute_iteration_costs(plain, profile);
  const IterationCosts b = estimate::compute_iteration_costs(named, profile);
  EXPECT_EQ(a.tp_group, b.tp_group);
  EXPECT_EQ(a.dp_group, b.dp_group);
  EXPECT_EQ(estimate::estimate_iteration(plain, a, profile).iteration_time_s,
            estimate::estimate_iteration(named, b, profile).iteration_time_s);
}

// Trays of 2 GPUs joined into domains of 4, each GPU with its own NIC, cost exactly what nodes
// of 4 GPUs with 4 NICs cost: TP 4 rides NVLink, DP (one rank per domain) the NICs at one
// GPU's share, and the PP hop leaves the domain.
TEST(NvlinkDomainCostTest, DomainOfTwoTraysCostsAsOneNodeOfTheirGpus) {
  const Scenario node = on_nodes_of(4, 0);
  const Scenario trays = on_nodes_of(2, 4);
  const HardwareProfile profile = datasheet_profile(node.cluster.gpu, node.cluster);
  const IterationCosts a = estimate::compute_iteration_costs(node, profile);
  const IterationCosts b = estimate::compute_iteration_costs(trays, profile);
  EXPECT_EQ(b.tp_group.nodes, 1);
  EXPECT_EQ(b.tp_group.ranks_per_node, 4);
  EXPECT_EQ(b.dp_group.nodes, a.dp_group.nodes);
  EXPECT_DOUBLE_EQ(b.dp_group.nic_bandwidth_per_node_bytes_per_s,
                   a.dp_group.nic_bandwidth_per_node_bytes_per_s);
  EXPECT_EQ(b.pp_link.nodes, 2);
  EXPECT_DOUBLE_EQ(b.stages[0].chunks[0].forward_tp_comm_s,
                   a.stages[0].chunks[0].forward_tp_comm_s);
  EXPECT_DOUBLE_EQ(estimate::estimate_iteration(trays, b, profile).iteration_time_s,
                   estimate::estimate_iteration(node, a, profile).iteration_time_s);
}

// Without the domain the same trays put every TP group across two nodes: slower.
TEST(NvlinkDomainCostTest, TensorGroupAcrossTraysWithoutTheDomainCrossesTheNics) {
  const Scenario apart = on_nodes_of(2, 0);
  const Scenario joined = on_nodes_of(2, 4);
  const HardwareProfile profile = datasheet_profile(apart.cluster.gpu, apart.cluster);
  const IterationCosts a = estimate::compute_iteration_costs(apart, profile);
  const IterationCosts b = estimate::compute_iteration_costs(joined, profile);
  EXPECT_EQ(a.tp_group.nodes, 2);
  EXPECT_GT(a.stages[0].chunks[0].forward_tp_comm_s, b.stages[0].chunks[0].forward_tp_comm_s);
}

// 144 ranks in two racks of 72 with a NIC share far above NVLink: the inter-domain all-reduce
// still runs through each rack's NVLink, so it is no faster than the all-reduce inside one rack
// of 144 ranks' worth of NVLink; without that bound the NICs' share alone would set it.
TEST(NvlinkDomainCostTest, CollectiveBetweenDomainsIsNoFasterThanInsideOne) {
  const Scenario s = base_scenario();
  const HardwareProfile profile = datasheet_profile(s.cluster.gpu, s.cluster);
  GroupShape racks{144, 72, 2, 1e15};
  const double nic_only = collective_time_s(profile, CollectiveKind::kAllReduce, 1e9, racks);
  racks.multi_node_nvlink = true;
  const double bounded = collective_time_s(profile, CollectiveKind::kAllReduce, 1e9, racks);
  const GroupShape one_domain{144, 144, 1, 1e15};
  const double inside = collective_time_s(profile, CollectiveKind::kAllReduce, 1e9, one_domain);
  EXPECT_LT(nic_only, inside);
  EXPECT_DOUBLE_EQ(bounded, inside);
}

}  // namespace
}  // namespace capsim::nvlink_domain_cost_test
