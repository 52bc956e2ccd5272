#include "models/op_cost.hpp"

#include <algorithm>
#include <string_view>

#include "models/gemm_cost.hpp"
#include "models/low_precision.hpp"

namespace capsim {

Precision op_precision(const Op& op, Precision precision) {
  if (!is_low_precision(precision))
    return precision;
  // Transformer Engine runs its low-precision recipes only in its linear layers: attention
  // (fused or the materialised score and value batched GEMMs) and the output layer stay 16-bit.
  const bool is_logits = op.kind == KernelKind::kGemm && std::string_view(op.name) == "logits";
  return (op.attention_core || op.kind == KernelKind::kAttention || is_logits) ? Precision::kBf16
                                                                               : precision;
}

double attention_kernel_seq_length(const ModelSpec& m, const Parallelism& p) {
  return static_cast<double>(m.seq_length) / static_cast<double>(std::max(p.context, 1));
}

namespace {

// FlashAttention written in Triton against FlashAttention-2 on A100: FlashAttention-2 is "around
// 1.3-1.5x faster than FlashAttention in Triton in the forward pass and around 2x faster in the
// backward pass" (Dao 2023, §4.1). The shipped Ampere profiles' attention figures are of that
// Triton class already (their provenance); later ones are FlashAttention-2's or newer, and both
// kernels run Ampere's instructions, so the Triton kernel keeps those ratios to them.
constexpr double kTritonForwardSpeed = 1.0 / 1.4;
constexpr double kTritonBackwardSpeed = 1.0 / 2.0;

// A figure given at head dimensions 64 and 128, linear between them and flat outside.
double at_head_dim(double at_64, double at_128, int head_dim) {
  const double x = std::clamp((head_dim - 64.0) / 64.0, 0.0, 1.0);
  return at_64 + (at_128 - at_64) * x;
}

// cuDNN's fused attention against FlashAttention-2 on H100 SXM5, bf16, at 2k-8k tokens (Shah et
// al. 2024, FlashAttention-3, figures 5 and 6): forward 412 vs 322 TFLOP/s at head dim 64 and
// 600 vs 370 (529 vs 333 causal) at 128; backward 395 vs 264 at 64 and 518 vs 318 at 128. The
// Hopper profiles' figures are FlashAttention-2's, so cuDNN runs at them times these ratios.
constexpr double kCudnnForwardSpeedHd64 = 1.28;
constexpr double kCudnnForwardSpeedHd128 = 1.60;
constexpr double kCudnnBackwardSpeedHd64 = 1.50;
constexpr double kCudnnBackwardSpeedHd128 = 1.63;

// cuDNN's fused attention forward in fp8 against bf16 on H100 SXM5, head dim 128, 4k tokens
// (Shah et al. 2024, FlashAttention-3, figures 5 and 7: 864 vs 609 TFLOP/s). No fp8 backward
// figure is published: the backward runs at the bf16 rate.
constexpr double kCudnnFp8ForwardSpeed = 864.0 / 609.0;

// The kernel's rate against the profile's attention figures. Other architectures have no
// published comparison: there the profile's figures stand for it (on Blackwell they are of the
// kernels its published runs used, cuDNN's among them).
double kernel_speed(AttentionKernel kernel, const GpuSpec& gpu, int head_dim, bool backward) {
  if (kernel == AttentionKernel::kTriton && gpu.architecture != "ampere")
    return backward ? kTritonBackwardSpeed : kTritonForwardSpeed;
  if (kernel == AttentionKernel::kCudnn && gpu.architecture == "hopper") {
    return backward ? at_head_dim(kCudnnBackwardSpeedHd64, kCudnnBackwardSpeedHd128, head_dim)
                    : at_head_dim(kCudnnForwardSpeedHd64, kCudnnForwardSpeedHd128, head_dim);
  }
  return 1.0;
}

// The tensor speed at a precision: fp4's rate is the datasheet's (HardwareProfile::tensor_speed).
double tensor_speed_at(const HardwareProfile& profile, Precision precision) {
  return precision == Precision::kNvfp4 ? 1.0 : profile.tensor_speed;
}

}  // namespace

double attention_efficiency(const AttentionParams& a, int head_dim, double seq_length,
                            bool backward) {
  const double efficiency =
      backward ? at_head_dim(a.backward_efficiency_hd64, a.backward_efficiency_hd128, head_dim)
               : at_head_dim(a.forward_efficiency_hd64, a.forward_efficiency_hd128, head_dim);
  return efficiency * seq_length / (seq_length + a.half_efficiency_seq_length);
}

double op_time_s(const Op& op, const HardwareProfile& profile, const GpuSpec& gpu,
                 Precision precision, double seq_length) {
  double t = 0.0;
  switch (op.kind) {
    case KernelKind::kGemm:
      t = op.rounds * gemm_time_s(profile.gemm, gpu, op_precision(op, precision), op.gemm,
                                  tensor_speed_at(profile, op_precision(op, precision)));
      break;
    case KernelKind::kAttention: {
      const bool backward = op.pass != Pass::kForward;
      const Precision at = op_precision(op, precision);
      const double peak = gpu.peak_flop_per_s(at) * tensor_speed_at(profile, at);
      const double fp8_speed = op.fp8_attention && !backward ? kCudnnFp8ForwardSpeed : 1.0;
      // A windowed layer's kernel runs as short as its window: few key blocks per query block.
      const double kernel_seq_length = op.attention_seq_length > 0.0
                                           ? std::min(op.attention_seq_length, seq_length)
                                           : seq_length;
      const double compute =
          op.flop /
          (peak *
           attention_efficiency(profile.attention, op.head_dim, kernel_seq_length, backward) *
           kernel_speed(op.attention_kernel, gpu, op.head_dim, backward) * fp8_speed);
      const double memory =
          op.bytes / (gpu.hbm_bandwidth_bytes_per_s * profile.gemm.memory_efficiency);
      t = profile.gemm.launch_overhead_s + std::max(compute, memory);
      break;
    }
    case KernelKind::kMemoryBound:
      t = memory_bound_time_s(profile.gemm, gpu, op.bytes) +
          (op.kernels - 1.0) * profile.gemm.launch_overhead_s;
      break;
  }
  return t / profile.software_efficiency;
}

}  // namespace capsim
