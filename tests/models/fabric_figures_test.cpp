#include "models/fabric_figures.hpp"

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/collective_cost.hpp"
#include "models/datasheet_profile.hpp"

namespace capsim {
namespace {

// 16 H100 nodes, 8 x 200 Gb/s NICs each, on `fabric`.
ClusterSpec cluster_on(Fabric fabric) {
  ClusterSpec c;
  c.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  c.num_nodes = 16;
  c.intra_node_bandwidth_bytes_per_s = 450e9;
  c.has_inter_node = true;
  c.inter_node_fabric = fabric;
  c.nics_per_node = 8;
  c.nic_bandwidth_bytes_per_s = 25e9;
  return c;
}

// One all-reduce across all 128 GPUs, costed by the datasheet model of `fabric`.
double all_reduce_s(Fabric fabric, double bytes) {
  const ClusterSpec c = cluster_on(fabric);
  const HardwareProfile p = datasheet_profile(c.gpu, c);
  const GroupShape group{c.num_gpus(), c.gpus_per_node, c.num_nodes,
                         c.node_nic_bandwidth_bytes_per_s(), false};
  return collective_time_s(p, CollectiveKind::kAllReduce, bytes, group);
}

TEST(FabricFiguresTest, NamesRoundTrip) {
  for (Fabric f : {Fabric::kOmniPath, Fabric::kSlingshot, Fabric::kTcpx, Fabric::kTcpxo})
    EXPECT_EQ(fabric_from_string(to_string(f)), f);
  EXPECT_STREQ(to_string(Fabric::kOmniPath), "omni-path");
  EXPECT_STREQ(to_string(Fabric::kSlingshot), "slingshot");
  EXPECT_STREQ(to_string(Fabric::kTcpx), "tcpx");
  EXPECT_STREQ(to_string(Fabric::kTcpxo), "tcpxo");
}

TEST(FabricFiguresTest, FiguresAreTheCitedOnes) {
  EXPECT_DOUBLE_EQ(fabric_figures(Fabric::kTcpx).ring_bus_bandwidth_fraction, 0.895);
  EXPECT_DOUBLE_EQ(fabric_figures(Fabric::kTcpxo).ring_bus_bandwidth_fraction, 0.90);
  EXPECT_DOUBLE_EQ(fabric_figures(Fabric::kTcpx).net_step_extra_latency_s, 860e-6);
  EXPECT_DOUBLE_EQ(fabric_figures(Fabric::kTcpxo).net_step_extra_latency_s, 49e-6);
  EXPECT_DOUBLE_EQ(fabric_figures(Fabric::kEfa).net_step_extra_latency_s, 75e-6);
  EXPECT_DOUBLE_EQ(fabric_figures(Fabric::kInfiniband).ring_bus_bandwidth_fraction, 0.92);
}

TEST(FabricFiguresTest, TcpxIsSlowerThanTcpxoAtTheSameNics) {
  for (double bytes : {1e3, 1e6, 1e9})
    EXPECT_GT(all_reduce_s(Fabric::kTcpx, bytes), all_reduce_s(Fabric::kTcpxo, bytes)) << bytes;
}

TEST(FabricFiguresTest, GoogleTcpTransportsAreSlowerThanRdma) {
  for (double bytes : {1e3, 1e9}) {
    EXPECT_GT(all_reduce_s(Fabric::kTcpxo, bytes), all_reduce_s(Fabric::kInfiniband, bytes));
    EXPECT_GT(all_reduce_s(Fabric::kTcpx, bytes), all_reduce_s(Fabric::kEfa, bytes));
  }
  // Small messages: TCPXO's 49 us per network step undercuts EFA's 75 us plugin latency.
  EXPECT_LT(all_reduce_s(Fabric::kTcpxo, 1e3), all_reduce_s(Fabric::kEfa, 1e3));
}

TEST(FabricFiguresTest, OmniPathAndSlingshotCostAsInfiniband) {
  for (double bytes : {1e3, 1e9}) {
    EXPECT_DOUBLE_EQ(all_reduce_s(Fabric::kOmniPath, bytes),
                     all_reduce_s(Fabric::kInfiniband, bytes));
    EXPECT_DOUBLE_EQ(all_reduce_s(Fabric::kSlingshot, bytes),
                     all_reduce_s(Fabric::kInfiniband, bytes));
  }
}

TEST(FabricFiguresTest, LargeAllReduceFollowsTheBandwidthFraction) {
  // The bandwidth term alone: the time 8 GB more takes, free of the latency terms.
  const auto slope = [](Fabric f) { return all_reduce_s(f, 16e9) - all_reduce_s(f, 8e9); };
  EXPECT_NEAR(slope(Fabric::kTcpx) / slope(Fabric::kInfiniband), 0.92 / 0.895, 1e-9);
  EXPECT_NEAR(slope(Fabric::kTcpxo) / slope(Fabric::kInfiniband), 0.92 / 0.90, 1e-9);
}

}  // namespace
}  // namespace capsim
