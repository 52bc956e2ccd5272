#pragma once

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Returns a profile derived from datasheets and NCCL's own latency tables, for clusters no
// measured profile matches. Its efficiencies are the typical measured ratios cited in
// ../shared/reference/hardware_facts.md, not fits; is_datasheet_default is set.
[[nodiscard]] HardwareProfile datasheet_profile(const GpuSpec& gpu, const ClusterSpec& cluster);

// Returns FlashAttention-2 efficiencies published for the GPU's architecture (Dao 2023: A100
// forward up to 73% and backward up to 63% of peak at head dim 128; H100 without
// Hopper-specific kernels up to 335 TFLOP/s fwd+bwd, ~34% of peak). Not fitted: no attention
// measurements ship with capsim.
[[nodiscard]] AttentionParams published_attention_params(const GpuSpec& gpu);

}  // namespace capsim
