#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace capsim {

enum class Precision { kFp16, kBf16, kFp8, kFp32 };

// Datasheet figures of one GPU model, SI units (bytes, bytes/s, FLOP/s). Immutable value.
struct GpuSpec {
  std::string name;
  std::string architecture;  // "ampere", "hopper"
  double peak_fp16_flop_per_s;
  double peak_bf16_flop_per_s;
  double peak_fp8_flop_per_s;  // 0 when the GPU has no fp8 tensor cores
  double peak_tf32_flop_per_s;
  double hbm_capacity_bytes;
  double hbm_bandwidth_bytes_per_s;
  int num_sms;
  int nvlink_generation;
  double nvlink_bandwidth_bytes_per_s;  // per GPU, per direction
  bool has_nvls;                        // NVLink SHARP in the NVSwitch (Hopper)

  // Returns the dense tensor-core peak for a precision (fp8 falls back to bf16 without fp8).
  [[nodiscard]] double peak_flop_per_s(Precision precision) const;

  [[nodiscard]] bool operator==(const GpuSpec& other) const = default;
};

// The same GPU with `taken` SMs held by communication kernels: fewer SMs per wave and a
// proportionally lower tensor-core peak; HBM bandwidth is unchanged.
[[nodiscard]] GpuSpec without_sms(const GpuSpec& gpu, int taken);

// Returns the catalog entry (built in or defined) or nullptr when `name` is unknown. The
// pointer stays valid for the life of the process.
[[nodiscard]] const GpuSpec* find_gpu(const std::string& name);
// Returns every catalog name, built in and defined, sorted, for error messages.
[[nodiscard]] std::vector<std::string> gpu_names();

// The most GPUs one process may define beside the built-in ones.
inline constexpr size_t kMaxDefinedGpus = 64;

// Adds a GPU the built-in catalog lacks (new hardware, described by its datasheet figures in a
// scenario, profile or plan) for the rest of the process: find_gpu and gpu_names know it from
// then on. Defining a name again with identical figures changes nothing. Returns an empty
// string on success, else why not: a built-in name, a name defined with other figures, or more
// than kMaxDefinedGpus. Thread-safe; find_gpu may run at the same time.
[[nodiscard]] std::string define_gpu(const GpuSpec& gpu);
// Whether `name` is a built-in entry (outputs name those; defined GPUs are written in full).
[[nodiscard]] bool is_builtin_gpu(const std::string& name);

}  // namespace capsim
