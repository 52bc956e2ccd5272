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

double attention_efficiency(const AttentionParams& a, int head_dim, double seq_length,
                            bool backward) {
  const double lo = backward ? a.backward_efficiency_hd64 : a.forward_efficiency_hd64;
  const double hi = backward ? a.backward_efficiency_hd128 : a.forward_efficiency_hd128;
  const double x = std::clamp((head_dim - 64.0) / 64.0, 0.0, 1.0);
  return (lo + (hi - lo) * x) * seq_length / (seq_length + a.half_efficiency_seq_length);
}

double op_time_s(const Op& op, const HardwareProfile& profile, const GpuSpec& gpu,
                 Precision precision, double seq_length) {
  double t = 0.0;
  switch (op.kind) {
    case KernelKind::kGemm:
      t = op.rounds * gemm_time_s(profile.gemm, gpu, op_precision(op, precision), op.gemm);
      break;
    case KernelKind::kAttention: {
      const bool backward = op.pass != Pass::kForward;
      const double peak = gpu.peak_flop_per_s(op_precision(op, precision));
      const double compute = op.flop / (peak * attention_efficiency(profile.attention, op.head_dim,
                                                                    seq_length, backward));
      const double memory =
          op.bytes / (gpu.hbm_bandwidth_bytes_per_s * profile.gemm.memory_efficiency);
      t = profile.gemm.launch_overhead_s + std::max(compute, memory);
      break;
    }
    case KernelKind::kMemoryBound:
      t = memory_bound_time_s(profile.gemm, gpu, op.bytes);
      break;
  }
  return t / profile.software_efficiency;
}

}  // namespace capsim
