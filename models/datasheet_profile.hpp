#pragma once

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Returns a profile derived from datasheets and NCCL's own latency tables, for clusters no
// measured profile matches. Its efficiencies are the typical measured ratios cited in
// ../shared/reference/hardware_facts.md, not fits; is_datasheet_default is set.
[[nodiscard]] HardwareProfile datasheet_profile(const GpuSpec& gpu, const ClusterSpec& cluster);

// Returns the published FlashAttention efficiencies shipped profiles use for the GPU's
// architecture: FlashAttention-1/Triton class on Ampere (the kernels of the published A100 runs),
// FlashAttention-2 on Hopper (Dao 2023). Not fitted: no attention measurements ship with capsim.
[[nodiscard]] AttentionParams published_attention_params(const GpuSpec& gpu);

}  // namespace capsim
