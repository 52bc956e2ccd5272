#pragma once

#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Returns a profile derived from datasheets and NCCL's own latency tables, for clusters no
// measured profile matches. Its efficiencies are the typical measured ratios cited in
// docs/design/hardware-facts.md §1-2, not fits; is_datasheet_default is set.
[[nodiscard]] HardwareProfile datasheet_profile(const GpuSpec& gpu, const ClusterSpec& cluster);

// Returns the datasheet model's inter-node fits for the cluster's fabric and NICs: all-reduce
// (ring and tree) and send/recv; other collectives borrow from them as from fitted ones.
[[nodiscard]] std::vector<CollectiveFit> datasheet_inter_node_fits(const ClusterSpec& cluster);

// Returns `family`, a profile measured on the same GPU family over another fabric, with its
// inter-node fits replaced by the datasheet model's for `cluster`. Kernels, the in-situ factor
// and NVLink collectives belong to the GPU and the training stack, not to the network, so a
// fabric without a shipped measurement keeps them (H100 + RoCE costs its GEMMs like H100 + IB).
[[nodiscard]] HardwareProfile with_datasheet_network(HardwareProfile family,
                                                     const ClusterSpec& cluster);

// Returns the published FlashAttention efficiencies shipped profiles use for the GPU's
// architecture: FlashAttention-1/Triton class on Ampere (the kernels of the published A100 runs),
// FlashAttention-2 on Hopper (Dao 2023). Not fitted: no attention measurements ship with capsim.
[[nodiscard]] AttentionParams published_attention_params(const GpuSpec& gpu);

}  // namespace capsim
