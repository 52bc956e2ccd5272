#pragma once

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/workload.hpp"

namespace capsim {

// Returns the precision a kernel runs at in a recipe of `precision`: fp8 recipes run the layer
// GEMMs in fp8 but keep the logits GEMM and FlashAttention in 16 bits (Transformer Engine's
// defaults).
[[nodiscard]] Precision op_precision(const Op& op, Precision precision);

// Returns FlashAttention's fraction of the 16-bit peak: the profile's figures by head dimension
// (linear between the 64 and 128 anchors; Dao 2023 reports lower utilisation at 64), ramping
// with the sequence length as s / (s + half_efficiency_seq_length).
[[nodiscard]] double attention_efficiency(const AttentionParams& attention, int head_dim,
                                          double seq_length, bool backward);

// Returns the sequence length one attention kernel call sees: with context parallelism each
// ring step runs a rank's s/c queries against one block of s/c keys (Megatron-Core's CP over
// Transformer Engine), so FlashAttention's efficiency ramps with s/c, not s.
[[nodiscard]] double attention_kernel_seq_length(const ModelSpec& model,
                                                 const Parallelism& parallelism);

// Returns one kernel's time (s) on `gpu` alone: GEMMs from the profile's GEMM model, attention
// from its FLOPs at the attention efficiency (or its bytes, if slower), memory-bound ops from
// their bytes; every kernel pays the launch term and is divided by software_efficiency.
[[nodiscard]] double op_time_s(const Op& op, const HardwareProfile& profile, const GpuSpec& gpu,
                               Precision precision, double seq_length);

}  // namespace capsim
