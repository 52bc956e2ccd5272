#include "models/fabric_figures.hpp"

#include "models/time_units.hpp"

namespace capsim {
namespace {

// InfiniBand, RoCE and Ethernet: ring busbw ~0.92 of the node's aggregate NIC bandwidth (OCI
// 191.8 of 200 GB/s; docs/design/hardware-facts.md §2), tree ~0.45; the IB verbs transport
// reports no extra latency to NCCL (docs/design/nccl-cost-model.md §8).
constexpr double kRdmaRing = 0.92;
constexpr double kRdmaTree = 0.45;
constexpr FabricFigures kRdma{0.0, kRdmaRing, kRdmaTree};

// Scales the RDMA tree fraction to a fabric whose ring reaches `ring` instead of kRdmaRing.
constexpr double tree_for(double ring) {
  return kRdmaTree * ring / kRdmaRing;
}

// Google TCPX (A3, a3-highgpu-8g): Google's published two-node all_reduce_perf on A3 reaches
// 89.54 GB/s busbw at 8 GiB over 4 x 200 Gb/s = 100 GB/s of GPU NICs (GoogleCloudPlatform/
// ai-infra-cluster-provisioning, sample_workloads/nccltest/a3/README.md; NIC count and rate:
// Google Cloud "Networking and GPU machines"). Below line rate, so read as a ring busbw.
constexpr double kTcpxRing = 0.895;
// Not published as such: derived from the same run's smallest message (1 MiB, 1788.7 us) with
// NCCL's 2-node tree latency (6.8 + 2 x (7 x 0.6 + 5) us) and bandwidth term (43.7 us) removed,
// halved over the tree's 2 NET steps: (1788.7 - 25.2 - 43.7) / 2 = 860 us per NET step.
constexpr double kTcpxExtraLatencyS = 860 * kUs;

// Google TCPXO (A3 Mega, a3-megagpu-8g, 8 x 200 Gb/s = 200 GB/s of GPU NICs per Google Cloud
// "Networking and GPU machines"): a public two-node all_reduce_perf reaches 338.82 GB/s busbw at
// 8 GiB (lessizzmore/create-a3mega-ztan-fork, ztan-NCCL-test-result). Above line rate, so a
// 2-node tree, whose busbw tops out at 2(n-1)/n x NIC = 1.875 x 200 GB/s: 338.82 / 375 = 0.90.
constexpr double kTcpxoRing = 0.90;
// Same run's 8-byte all-reduce, 123.5 us, less the 2-node tree's 25.2 us, over 2 NET steps.
constexpr double kTcpxoExtraLatencyS = 49 * kUs;

}  // namespace

FabricFigures fabric_figures(Fabric fabric) {
  switch (fabric) {
    case Fabric::kNvSwitch:
    case Fabric::kInfiniband:
    case Fabric::kRoce:
    case Fabric::kEthernet:
      return kRdma;
    case Fabric::kEfa:
      // aws-ofi-nccl reports 75 us per NET step on p4d/p4de/p5 (docs/design/nccl-cost-model.md
      // §8); bandwidth as RDMA.
      return {75 * kUs, kRdmaRing, kRdmaTree};
    case Fabric::kOmniPath:
      // No NCCL measurement over Omni-Path is published. OPA's link transfer packet carries
      // 16 x 64 data bits in 1056 bits (Birrittella et al., Hot Interconnects 2015), 0.970 of
      // the 100 Gb/s line, the same as EDR InfiniBand's 64b/66b coding; NCCL reaches the HFI
      // through its verbs transport, as on InfiniBand. So the InfiniBand figures carry over.
      return kRdma;
    case Fabric::kSlingshot:
      // No NCCL measurement over Slingshot-11 is published. Its 200 Gb/s Cassini NICs are RDMA
      // NICs whose "HPC Ethernet" framing has less per-packet overhead than RoCE's Ethernet
      // (De Sensi et al., SC20), so the RoCE figures are a floor and are used.
      return kRdma;
    case Fabric::kTcpx:
      return {kTcpxExtraLatencyS, kTcpxRing, tree_for(kTcpxRing)};
    case Fabric::kTcpxo:
      return {kTcpxoExtraLatencyS, kTcpxoRing, tree_for(kTcpxoRing)};
  }
  return kRdma;
}

}  // namespace capsim
