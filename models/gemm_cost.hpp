#pragma once

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"

namespace capsim {

// C[M x N] = A[M x K] x B[K x N], `batch` independent products (cuBLAS convention).
struct GemmShape {
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
  double batch = 1.0;
  [[nodiscard]] double flop() const { return 2.0 * m * n * k * batch; }
};

// Returns the fraction of the GPU's dense peak at `precision` a GEMM reaches (before launch
// overhead and the memory-bound limit): ceiling x best tile/wave utilisation x K/(K + k_half) x
// alignment x the recipe's scaling_rate_factor, the ceiling being max_efficiency (the
// low-precision recipes: fp8_max_efficiency when set). Tile and wave
// quantization per NVIDIA's "Matrix Multiplication Background" guide. Each thread keeps the
// tile utilisation of the shapes it saw last (values unchanged), so calls are thread-safe.
[[nodiscard]] double gemm_efficiency(const GemmParams& params, const GpuSpec& gpu,
                                     Precision precision, const GemmShape& shape);

// Returns the GEMM's time in seconds: launch + max(compute at that efficiency, operand and
// result traffic at the profile's share of HBM bandwidth). `tensor_speed` multiplies the compute
// rate (HardwareProfile::tensor_speed).
[[nodiscard]] double gemm_time_s(const GemmParams& params, const GpuSpec& gpu, Precision precision,
                                 const GemmShape& shape, double tensor_speed = 1.0);

// Returns the time (s) of a memory-bound kernel moving `bytes` through HBM (norms, activations,
// dropout, residual adds, optimizer steps): launch + bytes / (HBM bandwidth x efficiency).
[[nodiscard]] double memory_bound_time_s(const GemmParams& params, const GpuSpec& gpu,
                                         double bytes);

// Returns the element size in bytes of GEMM operands at a precision (fp8 recipes: 1, nvfp4:
// 0.5, fp32: 4, else 2), scale factors aside.
[[nodiscard]] double element_bytes(Precision precision);

}  // namespace capsim
