#include "models/leaf_crossings.hpp"

#include <gtest/gtest.h>

namespace capsim {
namespace {

RankLayout layout(int tp, int dpc, int pp, int chunks = 1) {
  RankLayout l;
  l.tp = tp;
  l.dpc = dpc;
  l.pp = pp;
  l.chunks = chunks;
  l.gpus_per_node = 8;
  return l;
}

// TP8 x DP4: one ring over nodes 0-3; with two nodes per leaf only the edges 1->2 and 3->0
// leave a leaf, so each leaf has one node (8 GPUs) sending out and one receiving.
TEST(LeafCrossingsTest, RingCrossesOnlyAtLeafBoundaries) {
  const LeafCrossings c(layout(8, 4, 1), 2, true);
  EXPECT_TRUE(c.dp_ring_crosses(0));
  EXPECT_EQ(c.max_dp_crossing_gpus_per_leaf(), 8);
  EXPECT_EQ(c.max_pp_crossing_gpus_per_leaf(), 0);
  EXPECT_FALSE(c.both_classes_cross());
  EXPECT_EQ(c.leaf_of_gpu(15), 0);
  EXPECT_EQ(c.leaf_of_gpu(16), 1);
}

TEST(LeafCrossingsTest, LeafHoldingTheWholeRingHasNoCrossing) {
  const LeafCrossings c(layout(8, 4, 1), 4, true);
  EXPECT_FALSE(c.dp_ring_crosses(0));
  EXPECT_EQ(c.max_dp_crossing_gpus_per_leaf(), 0);
}

// One node per leaf: every GPU of a node sends to the next node (the worst case).
TEST(LeafCrossingsTest, OneNodePerLeafMakesEveryGpuCross) {
  const LeafCrossings c(layout(8, 4, 1), 1, true);
  EXPECT_EQ(c.max_dp_crossing_gpus_per_leaf(), 8);
}

// TP8 x DP2 x PP2 on four nodes, two per leaf: stage 0 fills leaf 0 and stage 1 leaf 1, so every
// PP send crosses (16 GPUs per leaf) and each stage's DP ring stays inside its leaf.
TEST(LeafCrossingsTest, PipelineBetweenLeavesRingsInside) {
  const LeafCrossings c(layout(8, 2, 2), 2, true);
  EXPECT_TRUE(c.pp_crosses(0, 1));
  EXPECT_TRUE(c.pp_crosses(1, 0));
  EXPECT_FALSE(c.dp_ring_crosses(0));
  EXPECT_FALSE(c.dp_ring_crosses(1));
  EXPECT_EQ(c.max_pp_crossing_gpus_per_leaf(), 16);
  EXPECT_EQ(c.max_dp_crossing_gpus_per_leaf(), 0);
  EXPECT_FALSE(c.both_classes_cross());
}

// TP8 x PP4 with two nodes per leaf: 0->1 and 2->3 stay inside a leaf, 1->2 crosses; the
// interleaved schedule also sends from the last stage (leaf 1) back to the first (leaf 0).
TEST(LeafCrossingsTest, PipelineCrossesBetweenLeavesOnly) {
  const LeafCrossings plain(layout(8, 1, 4), 2, false);
  EXPECT_FALSE(plain.pp_crosses(0, 1));
  EXPECT_TRUE(plain.pp_crosses(1, 2));
  EXPECT_FALSE(plain.pp_crosses(2, 3));
  EXPECT_EQ(plain.max_pp_crossing_gpus_per_leaf(), 8);
  const LeafCrossings interleaved(layout(8, 1, 4, 2), 2, false);
  EXPECT_TRUE(interleaved.pp_crosses(3, 0));
  EXPECT_EQ(interleaved.max_pp_crossing_gpus_per_leaf(), 16);
}

// The DP ring does not count when its flows stay on NVLink (dp_through_nics false).
TEST(LeafCrossingsTest, RingInsideANodeNeverCrosses) {
  const LeafCrossings c(layout(8, 4, 1), 1, false);
  EXPECT_FALSE(c.dp_ring_crosses(0));
  EXPECT_EQ(c.max_dp_crossing_gpus_per_leaf(), 0);
}

// TP8 x DP4 x PP2 with two nodes per leaf: every PP send crosses (16 GPUs per leaf), each
// stage's ring crosses once per leaf (8 GPUs): each class is counted on its own.
TEST(LeafCrossingsTest, ClassesAreCountedApart) {
  const LeafCrossings c(layout(8, 4, 2), 2, true);
  EXPECT_TRUE(c.pp_crosses(0, 1));
  EXPECT_TRUE(c.dp_ring_crosses(0));
  EXPECT_EQ(c.max_pp_crossing_gpus_per_leaf(), 16);
  EXPECT_EQ(c.max_dp_crossing_gpus_per_leaf(), 8);
  EXPECT_TRUE(c.both_classes_cross());
}

// Context parallelism: the CP ranks of one TP rank are consecutive in the data-parallel index.
// TP8 x CP2 puts each ring's two ranks on two nodes: with one node per leaf every GPU sends
// across (8 per leaf), with two per leaf none does. TP4 x CP2 keeps each ring in its node.
TEST(LeafCrossingsTest, ContextParallelRingsCrossWhereTheirRanksSitApart) {
  EXPECT_EQ(max_cp_crossing_gpus_per_leaf(layout(8, 2, 1), 2, 1), 8);
  EXPECT_EQ(max_cp_crossing_gpus_per_leaf(layout(8, 2, 1), 2, 2), 0);
  EXPECT_EQ(max_cp_crossing_gpus_per_leaf(layout(4, 4, 1), 2, 1), 0);
  // TP8 x CP4 x DP2 over 8 nodes, two per leaf: each ring spans four nodes (two leaves); its
  // edges 1->2 and 3->0 cross, so one node of each leaf sends out and one receives.
  EXPECT_EQ(max_cp_crossing_gpus_per_leaf(layout(8, 8, 1), 4, 2), 8);
}

}  // namespace
}  // namespace capsim
