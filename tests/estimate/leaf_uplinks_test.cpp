#include "estimate/leaf_uplinks.hpp"

#include <gtest/gtest.h>

#include "models/collective_cost.hpp"
#include "models/datasheet_profile.hpp"

#include "estimate/iteration_model.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

// The test scenario (A100, 8 x 200 Gb/s per node) laid out as TP x PP x DP, 8 GPUs per node.
Scenario layout(int tp, int pp, int dp, int chunks = 1) {
  Scenario s = io::load_scenario(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
  s.parallelism.tensor = tp;
  s.parallelism.pipeline = pp;
  s.parallelism.data = dp;
  s.parallelism.virtual_pipeline_stages = chunks;
  s.parallelism.schedule = chunks > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
  s.parallelism.global_batch_size = 8 * dp * pp;
  s.cluster.num_nodes = tp * pp * dp / 8;
  return s;
}

Scenario oversubscribed(Scenario s, double factor, int nodes_per_leaf) {
  s.cluster.topology = Topology::kOversubscribed;
  s.cluster.oversubscription = factor;
  s.cluster.nodes_per_leaf = nodes_per_leaf;
  return s;
}

estimate::LeafLimitedGroups groups_of(const Scenario& s) {
  const HardwareProfile profile = datasheet_profile(s.cluster.gpu, s.cluster);
  return estimate::leaf_limited_groups(s, estimate::compute_iteration_costs(s, profile));
}

TEST(LeafUplinksTest, NonBlockingFabricKeepsTheGroups) {
  const Scenario s = layout(8, 2, 4);
  const HardwareProfile profile = datasheet_profile(s.cluster.gpu, s.cluster);
  const IterationCosts costs = estimate::compute_iteration_costs(s, profile);
  const estimate::LeafLimitedGroups g = estimate::leaf_limited_groups(s, costs);
  EXPECT_EQ(g.dp.nic_bandwidth_per_node_bytes_per_s,
            costs.dp_group.nic_bandwidth_per_node_bytes_per_s);
  EXPECT_EQ(g.pp_between_leaves.nic_bandwidth_per_node_bytes_per_s,
            costs.pp_link.nic_bandwidth_per_node_bytes_per_s);
  // Each stage fills its own nodes: both hops leave their node, priced as pp_link already is.
  EXPECT_TRUE(g.forward_crosses(0));
  EXPECT_TRUE(g.backward_crosses(1));
  EXPECT_EQ(g.pp_between_leaves.nodes, costs.pp_link.nodes);
}

// Without leaf uplinks a pipeline hop still leaves its node when its stages sit on different
// nodes: TP4 PP4 on two 8-GPU nodes keeps stages 0-1 and 2-3 together, and 1 -> 2 crosses.
TEST(LeafUplinksTest, NonBlockingFabricMarksTheHopsThatLeaveTheirNode) {
  const estimate::LeafLimitedGroups g = groups_of(layout(4, 4, 1));
  EXPECT_FALSE(g.forward_crosses(0));
  EXPECT_TRUE(g.forward_crosses(1));
  EXPECT_FALSE(g.forward_crosses(2));
  EXPECT_FALSE(g.backward_crosses(1));
  EXPECT_TRUE(g.backward_crosses(2));
  EXPECT_EQ(g.pp_inside_leaf.nodes, 1);
  EXPECT_EQ(g.pp_between_leaves.nodes, 2);
}

// One node per leaf: the whole node's traffic meets 1/f of its NIC bandwidth on the uplink.
TEST(LeafUplinksTest, OneNodePerLeafDividesTheRingBandwidthByTheFactor) {
  const Scenario plain = layout(8, 1, 4);
  const double full = groups_of(plain).dp.nic_bandwidth_per_node_bytes_per_s;
  for (const double factor : {2.0, 3.0, 8.0}) {
    const estimate::LeafLimitedGroups g = groups_of(oversubscribed(plain, factor, 1));
    EXPECT_DOUBLE_EQ(g.dp.nic_bandwidth_per_node_bytes_per_s, full / factor) << factor;
  }
}

// Two nodes per leaf at 2:1: one node of each leaf sends the ring across, and the uplink
// (2 nodes' NICs / 2) carries it at full speed.
TEST(LeafUplinksTest, TwoToOneLeafOfTwoNodesAbsorbsOneCrossingRing) {
  const Scenario plain = layout(8, 1, 4);
  const estimate::LeafLimitedGroups g = groups_of(oversubscribed(plain, 2.0, 2));
  EXPECT_DOUBLE_EQ(g.dp.nic_bandwidth_per_node_bytes_per_s,
                   groups_of(plain).dp.nic_bandwidth_per_node_bytes_per_s);
  // At 4:1 the same crossing gets half.
  const estimate::LeafLimitedGroups g4 = groups_of(oversubscribed(plain, 4.0, 2));
  EXPECT_DOUBLE_EQ(g4.dp.nic_bandwidth_per_node_bytes_per_s,
                   groups_of(plain).dp.nic_bandwidth_per_node_bytes_per_s / 2.0);
}

// TP8 x PP4 x DP1, two nodes per leaf: only the boundary between stages 1 and 2 leaves a leaf;
// interleaved, the last stage's sends to the first cross too.
TEST(LeafUplinksTest, PipelineHopsCrossOnlyBetweenLeaves) {
  const estimate::LeafLimitedGroups g = groups_of(oversubscribed(layout(8, 4, 1), 3.0, 2));
  EXPECT_FALSE(g.forward_crosses(0));
  EXPECT_TRUE(g.forward_crosses(1));
  EXPECT_TRUE(g.backward_crosses(2));
  EXPECT_FALSE(g.forward_crosses(2));
  EXPECT_FALSE(g.forward_crosses(3));  // the last stage has no next stage
  EXPECT_LT(g.pp_between_leaves.nic_bandwidth_per_node_bytes_per_s,
            g.pp_inside_leaf.nic_bandwidth_per_node_bytes_per_s);
  const estimate::LeafLimitedGroups interleaved =
      groups_of(oversubscribed(layout(8, 4, 1, 2), 3.0, 2));
  EXPECT_TRUE(interleaved.forward_crosses(3));
  EXPECT_TRUE(interleaved.backward_crosses(0));
}

// TP4 x PP8: two stages share a node, so most hops stay on NVLink; with one node per leaf the
// hop between nodes leaves its leaf and must be priced through the capped NICs, not NVLink.
TEST(LeafUplinksTest, HopBetweenLeavesLeavesItsNodeWhenStagesShareANode) {
  const Scenario s = oversubscribed(layout(4, 8, 1), 16.0, 1);
  const HardwareProfile profile = datasheet_profile(s.cluster.gpu, s.cluster);
  const estimate::LeafLimitedGroups g =
      estimate::leaf_limited_groups(s, estimate::compute_iteration_costs(s, profile));
  EXPECT_FALSE(g.forward_crosses(0));  // stages 0 and 1 share node 0
  EXPECT_TRUE(g.forward_crosses(1));
  EXPECT_EQ(g.pp_inside_leaf.nodes, 1);
  EXPECT_EQ(g.pp_between_leaves.nodes, 2);
  const double bytes = 64.0 * 1024 * 1024;
  EXPECT_GT(collective_time_s(profile, CollectiveKind::kSendRecv, bytes, g.pp_between_leaves),
            2.0 * collective_time_s(profile, CollectiveKind::kSendRecv, bytes, g.pp_inside_leaf));
}

// A leaf holding every node: nothing crosses.
TEST(LeafUplinksTest, LeafHoldingEveryNodeHasNoCrossing) {
  const Scenario plain = layout(8, 2, 4);
  const estimate::LeafLimitedGroups g = groups_of(oversubscribed(plain, 3.0, 8));
  EXPECT_DOUBLE_EQ(g.dp.nic_bandwidth_per_node_bytes_per_s,
                   groups_of(plain).dp.nic_bandwidth_per_node_bytes_per_s);
  EXPECT_FALSE(g.forward_crosses(0));
  EXPECT_FALSE(g.backward_crosses(1));
}

}  // namespace
}  // namespace capsim
