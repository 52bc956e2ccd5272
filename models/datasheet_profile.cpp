#include "models/datasheet_profile.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "models/fabric_figures.hpp"
#include "models/time_units.hpp"

namespace capsim {
namespace {

// NCCL hardware latencies (docs/design/nccl-cost-model.md §2a-2b, current values): Ring LL
// base 6.6 us, NVLink step 0.6 us; Simple base 8.4 us, NVLink step 3.4 us, NET step 14 us; Tree
// LL base 6.8 us, NET step 5 us. Each fabric's transport adds its own latency per NET step
// (models/fabric_figures.cpp).

}  // namespace

AttentionParams published_attention_params(const GpuSpec& gpu) {
  AttentionParams a;
  if (gpu.architecture == "hopper") {
    // FlashAttention-2 on H100 (Dao 2023, figure 7): ~335 TFLOP/s fwd+bwd at head dim 128 of
    // the 989 TFLOP/s peak, lower at 64.
    a.forward_efficiency_hd128 = 0.38;
    a.forward_efficiency_hd64 = 0.33;
    a.backward_efficiency_hd128 = 0.32;
    a.backward_efficiency_hd64 = 0.27;
  } else if (gpu.architecture == "ampere") {
    // Ampere: the published A100 training record (2021-2023) predates FlashAttention-2, so the
    // shipped figure is the FlashAttention-1 / Triton-FA class measured on A100 in Dao 2023,
    // figure 4 (~100-140 TFLOP/s fwd+bwd at head dim 128, causal, read off the figure, +-10%).
    // FlashAttention-2 itself reaches ~0.68 forward / ~0.56 backward (the struct defaults):
    // put those in a profile's "attention" block for stacks that use it.
    a.forward_efficiency_hd128 = 0.45;
    a.forward_efficiency_hd64 = 0.38;
    a.backward_efficiency_hd128 = 0.36;
    a.backward_efficiency_hd64 = 0.30;
  }
  // Other architectures (hardware described in an input) keep FlashAttention-2's fractions of
  // the A100 peak, the struct defaults: no attention figure for them ships with capsim.
  return a;
}

std::vector<CollectiveFit> datasheet_inter_node_fits(const ClusterSpec& cluster) {
  // Ring busbw and tree busbw as the fabric's fractions of the node's aggregate NIC bandwidth,
  // tree for small messages. Point-to-point across nodes: one GPU's share of the NICs.
  const double nic = cluster.node_nic_bandwidth_bytes_per_s();
  const FabricFigures figures = fabric_figures(cluster.inter_node_fabric);
  const double net_step = 14 * kUs + figures.net_step_extra_latency_s;
  const double ring_bw = figures.ring_bus_bandwidth_fraction * nic;
  CollectiveFit all_reduce{CollectiveKind::kAllReduce, true, {}, 0.0};
  all_reduce.algorithms.push_back(
      {CollectiveAlgorithm::kRing, 8.4 * kUs, 3.4 * kUs, net_step, ring_bw});
  all_reduce.algorithms.push_back({CollectiveAlgorithm::kTree, 6.8 * kUs, 0.6 * kUs,
                                   5 * kUs + figures.net_step_extra_latency_s,
                                   figures.tree_bus_bandwidth_fraction * nic});
  CollectiveFit send_recv{CollectiveKind::kSendRecv,
                          true,
                          {{CollectiveAlgorithm::kRing, 8 * kUs, 0.0, net_step, ring_bw}},
                          0.0};
  return {all_reduce, send_recv};
}

HardwareProfile datasheet_profile(const GpuSpec& gpu, const ClusterSpec& cluster) {
  HardwareProfile p;
  p.name = "datasheet:" + gpu.name + "+" + to_string(cluster.inter_node_fabric);
  p.gpu = gpu;
  p.fabric = to_string(cluster.inter_node_fabric);
  p.is_datasheet_default = true;
  p.provenance = {"derived from datasheets and NCCL tuning tables; not fitted to measurements"};
  // MAMF best-shape efficiency: A100 ~0.87, H100 ~0.80 (docs/design/gemm-efficiency.md §1);
  // transformer shapes rarely reach the best shape, so the datasheet profile starts a little lower.
  p.gemm.max_efficiency = gpu.architecture == "ampere" ? 0.82 : 0.75;
  p.reference_node_nic_bandwidth_bytes_per_s = cluster.node_nic_bandwidth_bytes_per_s();
  p.attention = published_attention_params(gpu);

  // Intra-node all-reduce: measured 8-GPU busbw plateau is ~0.77 of NVLink per-direction
  // bandwidth on A100 (230/300 GB/s) and NVLS reaches ~1.06x on H100 (476/450 GB/s);
  // docs/design/hardware-facts.md §1.
  const double nvlink = cluster.intra_node_bandwidth_bytes_per_s;
  CollectiveFit intra{CollectiveKind::kAllReduce, false, {}, 0.0};
  intra.algorithms.push_back(
      {CollectiveAlgorithm::kRing, 6.6 * kUs, 0.6 * kUs, 0.0, std::min(0.5 * nvlink, 87.7e9)});
  intra.algorithms.push_back(
      {CollectiveAlgorithm::kRing, 8.4 * kUs, 3.4 * kUs, 0.0, 0.77 * nvlink});
  if (gpu.has_nvls) {
    intra.algorithms.push_back({CollectiveAlgorithm::kNvls, 0.0, 25 * kUs, 0.0, 1.06 * nvlink});
  }
  p.collectives.push_back(intra);

  // Point-to-point: one NVLink peer reaches ~0.65 of NVLink (195 of 300 GB/s, liplus log).
  p.collectives.push_back({CollectiveKind::kSendRecv,
                           false,
                           {{CollectiveAlgorithm::kRing, 8 * kUs, 0.0, 0.0, 0.65 * nvlink}},
                           0.0});
  for (CollectiveFit& fit : datasheet_inter_node_fits(cluster))
    p.collectives.push_back(std::move(fit));
  return p;
}

HardwareProfile with_datasheet_network(HardwareProfile family, const ClusterSpec& cluster) {
  const std::string fabric = to_string(cluster.inter_node_fabric);
  family.provenance.push_back("inter-node collectives: the datasheet model for " + fabric +
                              " (no " + fabric +
                              " measurement of this GPU family ships); "
                              "kernels, in-situ factor and intra-node fits: " +
                              family.name);
  family.name += "+datasheet-" + fabric;
  family.fabric = fabric;
  family.has_datasheet_network = true;
  family.reference_node_nic_bandwidth_bytes_per_s = cluster.node_nic_bandwidth_bytes_per_s();
  std::erase_if(family.collectives, [](const CollectiveFit& f) { return f.inter_node; });
  // Curve names come from calibrate/collective_fit.cpp: "<collective> inter_node <ranks> ...".
  std::erase_if(family.fit_quality, [](const FitRecord& r) {
    return r.curve.find(" inter_node ") != std::string::npos;
  });
  for (CollectiveFit& fit : datasheet_inter_node_fits(cluster))
    family.collectives.push_back(std::move(fit));
  return family;
}

}  // namespace capsim
