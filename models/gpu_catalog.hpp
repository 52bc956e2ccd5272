#pragma once

#include <span>
#include <string>

namespace capsim {

// Training precisions (Parallelism::precision) and the formats kernels run at. kFp8 is Transformer
// Engine's delayed-scaling fp8; the low-precision recipes are described in
// models/low_precision.hpp.
enum class Precision { kFp16, kBf16, kFp8, kFp32, kFp8Cs, kFp8Blockwise, kMxfp8, kNvfp4 };

// Datasheet figures of one GPU model, SI units (bytes, bytes/s, FLOP/s). Immutable value.
struct GpuSpec {
  std::string name;
  std::string architecture;  // "ampere", "hopper", "blackwell"
  double peak_fp16_flop_per_s;
  double peak_bf16_flop_per_s;
  double peak_fp8_flop_per_s;  // 0 when the GPU has no fp8 tensor cores
  double peak_tf32_flop_per_s;
  double hbm_capacity_bytes;
  double hbm_bandwidth_bytes_per_s;
  int num_sms;
  int nvlink_generation;
  double nvlink_bandwidth_bytes_per_s;  // per GPU, per direction
  bool has_nvls;                        // NVLink SHARP in the NVSwitch (Hopper, Blackwell)
  double peak_fp4_flop_per_s = 0.0;     // dense FP4 tensor cores (Blackwell); 0 when absent

  // Returns the dense tensor-core peak for a precision: the fp8 recipes run at the fp8 peak
  // (bf16 without fp8 tensor cores), nvfp4 at the fp4 peak (the fp8 one without fp4).
  [[nodiscard]] double peak_flop_per_s(Precision precision) const;

  [[nodiscard]] bool operator==(const GpuSpec& other) const = default;
};

// The same GPU with `taken` SMs held by communication kernels: fewer SMs per wave and a
// proportionally lower tensor-core peak; HBM bandwidth is unchanged.
[[nodiscard]] GpuSpec without_sms(const GpuSpec& gpu, int taken);

// Returns the built-in GPUs, in catalog order (capsim::Catalog adds the ones inputs define).
[[nodiscard]] std::span<const GpuSpec> builtin_gpus();
// Whether `name` is a built-in GPU (outputs name those; defined GPUs are written in full).
[[nodiscard]] bool is_builtin_gpu(const std::string& name);

}  // namespace capsim
