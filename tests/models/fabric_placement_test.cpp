// The placement policies of shared-fabric jobs (models/fabric_placement.hpp).
#include "models/fabric_placement.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace capsim {
namespace {

// 16 nodes under 4 leaves of 4 (2:1 oversubscribed), one node per NVLink domain.
ClusterSpec four_leaves() {
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.num_nodes = 16;
  c.topology = Topology::kOversubscribed;
  c.oversubscription = 2.0;
  c.nodes_per_leaf = 4;
  return c;
}

PlacementRequest asking(PlacementPolicy policy, int nodes, std::uint64_t seed = 1) {
  PlacementRequest r;
  r.policy = policy;
  r.num_nodes = nodes;
  r.seed = seed;
  return r;
}

TEST(FabricPlacementTest, PackedTakesTheLowestFreeNodesAfterExplicitLists) {
  PlacementRequest fixed;
  fixed.policy = PlacementPolicy::kExplicit;
  fixed.nodes = {1, 2};
  const PlacementOutcome out =
      place_jobs(four_leaves(), {asking(PlacementPolicy::kPacked, 3), fixed});
  ASSERT_TRUE(out.problems.empty());
  EXPECT_EQ(out.nodes[0], (std::vector<int>{0, 3, 4}));
  EXPECT_EQ(out.nodes[1], (std::vector<int>{1, 2}));
}

TEST(FabricPlacementTest, SpreadTakesOneNodePerLeafInTurn) {
  const PlacementOutcome out = place_jobs(four_leaves(), {asking(PlacementPolicy::kSpread, 6)});
  ASSERT_TRUE(out.problems.empty());
  EXPECT_EQ(out.nodes[0], (std::vector<int>{0, 4, 8, 12, 1, 5}));
}

TEST(FabricPlacementTest, LeafAlignedPicksTheFullestLeafThatHoldsTheJob) {
  // Leaf 0 keeps 1 free node, leaf 1 keeps 2, leaves 2 and 3 all 4: a 2-node job fits leaf 1.
  PlacementRequest fixed;
  fixed.policy = PlacementPolicy::kExplicit;
  fixed.nodes = {0, 1, 2, 4, 5};
  const PlacementOutcome out = place_jobs(
      four_leaves(),
      {fixed, asking(PlacementPolicy::kLeafAligned, 2), asking(PlacementPolicy::kLeafAligned, 6)});
  ASSERT_TRUE(out.problems.empty());
  EXPECT_EQ(out.nodes[1], (std::vector<int>{6, 7}));
  // No leaf holds 6: whole leaves, the one with the most free nodes first.
  EXPECT_EQ(out.nodes[2], (std::vector<int>{8, 9, 10, 11, 12, 13}));
}

// Rail groups 0 and 1 keep 3 and 1 free nodes, groups 2 and 3 all 4. A 5-node job takes the
// whole group 2 and its last node from group 1 (the fullest that holds it), so group 3 stays
// whole for a 4-node job; leaf-aligned (most free first) would split group 3 instead.
TEST(FabricPlacementTest, RailAlignedKeepsRailGroupsWhole) {
  ClusterSpec rails = four_leaves();
  rails.topology = Topology::kRailOptimized;
  PlacementRequest fixed;
  fixed.policy = PlacementPolicy::kExplicit;
  fixed.nodes = {0, 4, 5, 6};
  const PlacementOutcome out = place_jobs(
      rails, {fixed, asking(PlacementPolicy::kRailAligned, 5),
              asking(PlacementPolicy::kRailAligned, 4), asking(PlacementPolicy::kRailAligned, 2)});
  ASSERT_TRUE(out.problems.empty());
  EXPECT_EQ(out.nodes[1], (std::vector<int>{7, 8, 9, 10, 11}));
  EXPECT_EQ(out.nodes[2], (std::vector<int>{12, 13, 14, 15}));
  EXPECT_EQ(out.nodes[3], (std::vector<int>{1, 2}));  // a job that fits one group: best fit
  const PlacementOutcome leaf = place_jobs(rails, {fixed, asking(PlacementPolicy::kLeafAligned, 5),
                                                   asking(PlacementPolicy::kLeafAligned, 4)});
  EXPECT_EQ(leaf.nodes[1], (std::vector<int>{8, 9, 10, 11, 12}));
  std::set<int> groups;
  for (const int node : leaf.nodes[2])
    groups.insert(node / 4);
  EXPECT_GT(groups.size(), 1u) << "no group is left whole for the 4-node job";
}

// Without rail groups (a non-blocking fabric) rail-aligned is packed.
TEST(FabricPlacementTest, RailAlignedOnANonBlockingFabricIsPacked) {
  ClusterSpec flat = four_leaves();
  flat.topology = Topology::kFatTree;
  flat.oversubscription = 1.0;
  const PlacementOutcome out = place_jobs(flat, {asking(PlacementPolicy::kRailAligned, 3)});
  ASSERT_TRUE(out.problems.empty());
  EXPECT_EQ(out.nodes[0], (std::vector<int>{0, 1, 2}));
}

TEST(FabricPlacementTest, RandomFragmentedIsSeededAndDistinct) {
  const auto place = [](std::uint64_t seed) {
    return place_jobs(four_leaves(), {asking(PlacementPolicy::kRandomFragmented, 5, seed)})
        .nodes[0];
  };
  EXPECT_EQ(place(7), place(7));
  std::set<std::vector<int>> seen;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<int> nodes = place(seed);
    EXPECT_EQ(std::set<int>(nodes.begin(), nodes.end()).size(), 5u);
    EXPECT_TRUE(std::is_sorted(nodes.begin(), nodes.end()));
    EXPECT_LT(nodes.back(), 16);
    seen.insert(nodes);
  }
  EXPECT_GT(seen.size(), 1u) << "the seed changes the placement";
}

TEST(FabricPlacementTest, JobsTakeWholeNvlinkDomains) {
  ClusterSpec c;
  c.gpus_per_node = 4;
  c.nvlink_domain = 72;  // 18 nodes per rack
  c.num_nodes = 36;
  const PlacementOutcome out =
      place_jobs(c, {asking(PlacementPolicy::kPacked, 16), asking(PlacementPolicy::kPacked, 2),
                     asking(PlacementPolicy::kPacked, 1)});
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_EQ(out.problems[0].first, 2u);
  EXPECT_EQ(out.nodes[0].front(), 0);
  EXPECT_EQ(out.nodes[1], (std::vector<int>{18, 19}));  // the second rack, not nodes 16-17
}

TEST(FabricPlacementTest, PolicyNamesRoundTrip) {
  for (const PlacementPolicy p :
       {PlacementPolicy::kPacked, PlacementPolicy::kSpread, PlacementPolicy::kLeafAligned,
        PlacementPolicy::kRailAligned, PlacementPolicy::kRandomFragmented})
    EXPECT_EQ(placement_policy_from_string(to_string(p)), p);
  EXPECT_FALSE(placement_policy_from_string("explicit").has_value());
}

}  // namespace
}  // namespace capsim
