#pragma once

#include <string>

#include "models/gpu_catalog.hpp"

namespace capsim {

// Transformer Engine's low-precision recipes: the linear layers' GEMMs take quantized inputs
// while attention, the logits GEMM and the residual stream stay in 16 bits.
//   fp8            delayed scaling: one fp32 scale per tensor from the amax history
//   fp8-cs         current scaling: one scale per tensor from this tensor's amax
//   fp8-blockwise  DeepSeek-V3 §3.3.2: 1x128 activation tiles, 128x128 weight blocks, fp32 scales
//   mxfp8          OCP MX: 1x32 blocks with E8M0 (1 B) scales, Blackwell block-scaled MMA
//   nvfp4          E2M1 values in 16-element blocks with E4M3 (1 B) scales and a per-tensor fp32
//                  scale, Blackwell block-scaled MMA
// Returns whether `precision` is one of them.
[[nodiscard]] bool is_low_precision(Precision precision);
// Returns whether `precision` is one of the fp8 recipes (1-byte elements).
[[nodiscard]] bool is_fp8_recipe(Precision precision);

// HBM bytes per element of an activation or gradient quantized by the recipe, its scale
// factors included (fp8 1, fp8-blockwise 1 + 4/128, mxfp8 1 + 1/32, nvfp4 0.5 + 1/16); a
// per-tensor scale adds nothing per element. Other precisions: their element size.
[[nodiscard]] double quantized_activation_bytes(Precision precision);
// The same for a GEMM weight: fp8-blockwise keeps one fp32 scale per 128x128 block.
[[nodiscard]] double quantized_weight_bytes(Precision precision);

// Who casts a GEMM input to the recipe's format: a cast kernel of its own, or the kernel that
// produces the tensor (a norm writing fp8, an activation writing fp8, a fused activation
// backward), which only the recipes with local or delayed scales allow.
enum class CastBy { kOwnKernel, kProducer };
// Whether the tensor cast is a GEMM input of the forward pass or an output gradient.
enum class CastOf { kInput, kGradient };

// Returns the HBM bytes per tensor element the casts of one GEMM operand move beyond the
// 16-bit model, REQUIRES is_low_precision(precision). Each operand is needed twice, for the
// GEMM and (transposed, or quantized along the other axis) for the other GEMM of the pair; q
// is quantized_activation_bytes:
//   own kernel          read 2, write 2q                                      2 + 2q
//   producer, input     writes one copy for its 16-bit output, a transpose
//                       pass reads and writes it                              3q - 2
//   producer, gradient  the fused activation backward writes both copies      2(q - 1)
// fp8 (q = 1) gives 4, 1 and 0. fp8-cs and nvfp4 need the whole tensor's amax before the first
// element is written, so no producer can cast and every cast first reads the tensor once more
// for the amax: 4 + 2q.
[[nodiscard]] double cast_bytes_per_element(Precision precision, CastBy by, CastOf of);

// Returns how many kernels Transformer Engine's GroupedLinear launches to quantize one operand
// split into `splits` per-expert parts (tex.split_quantize, transformer_engine/pytorch/csrc/
// extensions/cast.cpp): one fused multi-tensor cast-transpose for delayed-scaling fp8
// (nvte_multi_cast_transpose) and a fused nvfp4 split quantization; otherwise each split is
// quantized on its own: an amax, a scale and a cast kernel for fp8-cs
// (Float8CurrentScalingQuantizer::quantize_impl), one cast for fp8-blockwise and mxfp8.
[[nodiscard]] double split_quantize_kernels(Precision precision, double splits);

// Returns the fraction of the GPU's fp8 tensor-core rate the recipe's GEMMs keep for their
// scaling alone: 1, except fp8-blockwise on Hopper, whose tensor cores take one scale per
// tensor, so the per-block scales are applied by CUDA cores in the GEMM's main loop.
[[nodiscard]] double scaling_rate_factor(Precision precision, const GpuSpec& gpu);

// Returns why `gpu` cannot train at `precision`, or an empty string: the fp8 recipes need fp8
// tensor cores; mxfp8 and nvfp4 need hardware block scaling (Blackwell); nvfp4 its fp4 peak.
[[nodiscard]] std::string precision_support_problem(Precision precision, const GpuSpec& gpu);

}  // namespace capsim
