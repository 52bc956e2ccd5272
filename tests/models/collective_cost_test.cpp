#include "models/collective_cost.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/datasheet_profile.hpp"

namespace capsim {
namespace {

ClusterSpec dgx_a100(int nodes) {
  ClusterSpec c;
  c.gpu = *builtin_catalog().find_gpu("A100-SXM4-80GB");
  c.gpus_per_node = 8;
  c.num_nodes = nodes;
  c.intra_node_bandwidth_bytes_per_s = 300e9;
  c.nics_per_node = 8;
  c.nic_bandwidth_bytes_per_s = 25e9;
  return c;
}

GroupShape group(int ranks, int per_node, double nic_per_node) {
  return {ranks, per_node, (ranks + per_node - 1) / per_node, nic_per_node};
}

TEST(CollectiveCostTest, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kSendRecv, 2), 1.0);
}

TEST(CollectiveCostTest, RingAllReduceLargeMessageIsBandwidthBound) {
  const AlgorithmParams ring{CollectiveAlgorithm::kRing, 8e-6, 3e-6, 20e-6, 230e9};
  const GroupShape g = group(8, 8, 0);
  const double bytes = 1e9;
  const double t = algorithm_time_s(ring, CollectiveKind::kAllReduce, bytes, g, 1.0);
  EXPECT_NEAR(t, 8e-6 + 14 * 3e-6 + bytes * 2 * 7 / 8 / 230e9, 1e-12);
}

// Ring steps 2(n-1) with 2(nodes-1) network hops; tree 2 log2(nodes) network hops.
TEST(CollectiveCostTest, LatencyStepCountsExtrapolateWithNodes) {
  const AlgorithmParams ring{CollectiveAlgorithm::kRing, 0.0, 1e-6, 10e-6, 1e30};
  const AlgorithmParams tree{CollectiveAlgorithm::kTree, 0.0, 1e-6, 10e-6, 1e30};
  for (int nodes : {2, 4, 16, 64}) {
    const GroupShape g = group(8 * nodes, 8, 200e9);
    const double n = 8.0 * nodes;
    EXPECT_NEAR(algorithm_time_s(ring, CollectiveKind::kAllReduce, 8, g, 1.0),
                (2 * (n - 1) - 2 * (nodes - 1)) * 1e-6 + 2 * (nodes - 1) * 10e-6, 1e-12);
    EXPECT_NEAR(algorithm_time_s(tree, CollectiveKind::kAllReduce, 8, g, 1.0),
                2 * (7 * 1e-6 + std::log2(nodes) * 10e-6), 1e-12);
  }
}

TEST(CollectiveCostTest, MoreNicBandwidthIsNeverSlower) {
  const ClusterSpec c = dgx_a100(4);
  const HardwareProfile p = datasheet_profile(c.gpu, c);
  double previous = 1e30;
  for (double nic = 12.5e9; nic <= 400e9; nic *= 2) {
    const double t = collective_time_s(p, CollectiveKind::kAllReduce, 1e9, group(32, 8, nic));
    EXPECT_LE(t, previous);
    previous = t;
  }
}

TEST(CollectiveCostTest, FastestAlgorithmWins) {
  const ClusterSpec c = dgx_a100(4);
  const HardwareProfile p = datasheet_profile(c.gpu, c);
  const GroupShape g = group(32, 8, 200e9);
  const CollectiveFit* fit = find_collective_fit(p, CollectiveKind::kAllReduce, true);
  ASSERT_NE(fit, nullptr);
  for (double bytes : {8.0, 1e6, 1e9}) {
    const double chosen = collective_time_s(p, CollectiveKind::kAllReduce, bytes, g);
    for (const auto& algo : fit->algorithms) {
      EXPECT_LE(chosen, algorithm_time_s(algo, CollectiveKind::kAllReduce, bytes, g,
                                         nic_share_scale(p, g)) +
                            1e-15);
    }
  }
}

TEST(CollectiveCostTest, SingleRankCostsNothing) {
  const ClusterSpec c = dgx_a100(1);
  const HardwareProfile p = datasheet_profile(c.gpu, c);
  EXPECT_EQ(collective_time_s(p, CollectiveKind::kAllReduce, 1e9, group(1, 1, 0)), 0.0);
}

TEST(CollectiveCostTest, AllGatherFallsBackToAllReduceLinks) {
  const ClusterSpec c = dgx_a100(1);
  const HardwareProfile p = datasheet_profile(c.gpu, c);
  const GroupShape g = group(8, 8, 0);
  // Same links, half the traffic of an all-reduce of the same buffer.
  const double ag = collective_time_s(p, CollectiveKind::kAllGather, 1e9, g);
  const double ar = collective_time_s(p, CollectiveKind::kAllReduce, 1e9, g);
  EXPECT_NEAR(ag / ar, 0.5, 0.05);
}

// An all-reduce fit lent to other collectives (the shipped profiles have no H100 all-gather or
// send/recv logs): NVLS serves all-gather and reduce-scatter at NCCL's bandwidth for them (half
// the all-reduce one x (ppn-1)/ppn, unconverted by n/(n-1): 460 x 0.5 x 7/8 x 7/8 on 8 GPUs)
// and never point-to-point or all-to-all.
TEST(CollectiveCostTest, NvlsLentByAllReduceFollowsNccl) {
  const AlgorithmParams ring{CollectiveAlgorithm::kRing, 10e-6, 1e-6, 0.0, 320e9};
  const AlgorithmParams nvls{CollectiveAlgorithm::kNvls, 20e-6, 5e-6, 0.0, 460e9};
  HardwareProfile with_nvls;
  with_nvls.collectives.push_back({CollectiveKind::kAllReduce, false, {ring, nvls}, 0.0});
  HardwareProfile ring_only;
  ring_only.collectives.push_back({CollectiveKind::kAllReduce, false, {ring}, 0.0});
  const GroupShape eight = group(8, 8, 0);
  const double bytes = 1e9;
  const AlgorithmParams half_nvls{CollectiveAlgorithm::kNvls, 20e-6, 5e-6, 0.0,
                                  460e9 * 0.5 * 7.0 / 8.0 * 7.0 / 8.0};
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    EXPECT_DOUBLE_EQ(collective_time_s(with_nvls, kind, bytes, eight),
                     std::min(algorithm_time_s(ring, kind, bytes, eight, 1.0),
                              algorithm_time_s(half_nvls, kind, bytes, eight, 1.0)));
  }
  EXPECT_DOUBLE_EQ(collective_time_s(with_nvls, CollectiveKind::kAllReduce, bytes, eight),
                   algorithm_time_s(nvls, CollectiveKind::kAllReduce, bytes, eight, 1.0));
  for (CollectiveKind kind : {CollectiveKind::kSendRecv, CollectiveKind::kAllToAll}) {
    const GroupShape g = kind == CollectiveKind::kSendRecv ? group(2, 2, 0) : eight;
    EXPECT_DOUBLE_EQ(collective_time_s(with_nvls, kind, bytes, g),
                     collective_time_s(ring_only, kind, bytes, g));
  }
}

// A 2-node all-reduce fit with tree regimes only, lent to all-gather: the trees (all-reduce
// only) are costed as rings held to the NICs' line rate, never as infinitely slow.
TEST(CollectiveCostTest, TreeOnlyFitLentToAllGatherStaysFinite) {
  const AlgorithmParams tree{CollectiveAlgorithm::kTree, 10e-6, 1e-6, 8e-6, 480e9};
  HardwareProfile p;
  p.reference_node_nic_bandwidth_bytes_per_s = 400e9;
  p.collectives.push_back({CollectiveKind::kAllReduce, true, {tree}, 0.0});
  const GroupShape two_nodes = group(16, 8, 400e9);
  const double bytes = 1e9;
  AlgorithmParams as_ring = tree;
  as_ring.algorithm = CollectiveAlgorithm::kRing;
  as_ring.bus_bandwidth_bytes_per_s = 400e9;
  EXPECT_DOUBLE_EQ(collective_time_s(p, CollectiveKind::kAllGather, bytes, two_nodes),
                   algorithm_time_s(as_ring, CollectiveKind::kAllGather, bytes, two_nodes, 1.0));
}

}  // namespace
}  // namespace capsim
