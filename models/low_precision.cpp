#include "models/low_precision.hpp"

#include <algorithm>

#include "models/gemm_cost.hpp"
#include "models/parallelism.hpp"

namespace capsim {
namespace {

// Transformer Engine's block-scaled formats run on Blackwell's tcgen05 block-scaled MMA, which
// applies the E8M0 / E4M3 block scales inside the tensor core (PTX ISA, "block scaling").
bool has_block_scaled_mma(const GpuSpec& gpu) {
  return gpu.architecture == "blackwell";
}

// Whether each scale depends on the whole tensor, so that the cast waits for a full amax pass.
bool needs_tensor_amax(Precision precision) {
  return precision == Precision::kFp8Cs || precision == Precision::kNvfp4;
}

// The six M = 4096 dense shapes of DeepGEMM's README (commit a6d97a1, February 2025; H800) run
// 1.1, 1.0, 1.0, 1.2, 1.1 and 1.1x (mean 1.083x) faster than "an internally and carefully
// optimized implementation based on CUTLASS 3.6", the grouped-scaling kernel kind frameworks
// use for blockwise fp8 on Hopper; DeepGEMM's own rate is taken as the per-tensor fp8 rate.
constexpr double kHopperBlockwiseRate = 1.0 / ((1.1 + 1.0 + 1.0 + 1.2 + 1.1 + 1.1) / 6.0);

}  // namespace

bool is_fp8_recipe(Precision precision) {
  switch (precision) {
    case Precision::kFp8:
    case Precision::kFp8Cs:
    case Precision::kFp8Blockwise:
    case Precision::kMxfp8:
      return true;
    case Precision::kFp16:
    case Precision::kBf16:
    case Precision::kFp32:
    case Precision::kNvfp4:
      return false;
  }
  return false;
}

bool is_low_precision(Precision precision) {
  return is_fp8_recipe(precision) || precision == Precision::kNvfp4;
}

double quantized_activation_bytes(Precision precision) {
  switch (precision) {
    case Precision::kFp8Blockwise:
      return 1.0 + 4.0 / 128.0;  // one fp32 scale per 1x128 tile
    case Precision::kMxfp8:
      return 1.0 + 1.0 / 32.0;  // one E8M0 scale per 32 elements
    case Precision::kNvfp4:
      return 0.5 + 1.0 / 16.0;  // 4-bit values, one E4M3 scale per 16 elements
    case Precision::kFp8:
    case Precision::kFp8Cs:
    case Precision::kFp16:
    case Precision::kBf16:
    case Precision::kFp32:
      return element_bytes(precision);
  }
  return element_bytes(precision);
}

double quantized_weight_bytes(Precision precision) {
  if (precision == Precision::kFp8Blockwise)
    return 1.0 + 4.0 / (128.0 * 128.0);  // one fp32 scale per 128x128 block
  return quantized_activation_bytes(precision);
}

double cast_bytes_per_element(Precision precision, CastBy by, CastOf of) {
  const double q = quantized_activation_bytes(precision);
  const double own = 2.0 + 2.0 * q;
  if (needs_tensor_amax(precision))
    return 2.0 + own;
  if (by == CastBy::kOwnKernel)
    return own;
  return of == CastOf::kInput ? std::max(3.0 * q - 2.0, 0.0) : std::max(2.0 * (q - 1.0), 0.0);
}

double split_quantize_kernels(Precision precision, double splits) {
  switch (precision) {
    case Precision::kFp8Cs:
      return 3.0 * splits;
    case Precision::kFp8Blockwise:
    case Precision::kMxfp8:
      return splits;
    case Precision::kFp8:
    case Precision::kNvfp4:
    case Precision::kFp16:
    case Precision::kBf16:
    case Precision::kFp32:
      return 1.0;
  }
  return 1.0;
}

double scaling_rate_factor(Precision precision, const GpuSpec& gpu) {
  if (precision == Precision::kFp8Blockwise && !has_block_scaled_mma(gpu))
    return kHopperBlockwiseRate;
  return 1.0;
}

std::string precision_support_problem(Precision precision, const GpuSpec& gpu) {
  if (!is_low_precision(precision))
    return "";
  const std::string name = std::string("precision \"") + to_string(precision) + "\"";
  if (gpu.peak_fp8_flop_per_s <= 0.0)
    return name + " needs a GPU with fp8 tensor cores; " + gpu.name + " has none";
  if ((precision == Precision::kMxfp8 || precision == Precision::kNvfp4) &&
      !has_block_scaled_mma(gpu)) {
    return name + " needs tensor cores with hardware block scaling (Blackwell); " + gpu.name +
           " is " + gpu.architecture;
  }
  if (precision == Precision::kNvfp4 && gpu.peak_fp4_flop_per_s <= 0.0)
    return name + " needs a GPU with fp4 tensor cores; " + gpu.name + " has no peak_fp4";
  return "";
}

}  // namespace capsim
