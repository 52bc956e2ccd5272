#include "models/gpu_catalog.hpp"

#include <algorithm>
#include <array>

#include "models/byte_units.hpp"

namespace capsim {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// Sources: NVIDIA A100 and H100/H200 datasheets as restated in
// docs/design/hardware-facts.md §1 and §5 (ml-engineering accelerator tables).
// HBM capacities are the totals nvidia-smi reports, in MiB, as published nvidia-smi outputs
// show them: A100-SXM4-40GB 40536 MiB (39.6 GiB), A100-SXM4-80GB 81920 MiB (80 GiB), H100 80GB
// HBM3 81559 MiB (79.6 GiB), H200 143771 MiB (140.4 GiB, not the
// marketed 141e9 bytes). The CUDA context and library workspaces come out of them (the
// memory model's reserve). NVLink: A100 12 links x 25 GB/s, H100/H200 18 links x 25 GB/s per
// direction.
const std::array<GpuSpec, 4>& catalog() {
  static const std::array<GpuSpec, 4> kGpus{{
      {"A100-SXM4-40GB", "ampere", 312 * kTera, 312 * kTera, 0.0, 156 * kTera, 40536 * kMiB,
       1555 * kGiga, 108, 3, 300 * kGiga, false},
      {"A100-SXM4-80GB", "ampere", 312 * kTera, 312 * kTera, 0.0, 156 * kTera, 81920 * kMiB,
       2039 * kGiga, 108, 3, 300 * kGiga, false},
      {"H100-SXM5-80GB", "hopper", 989 * kTera, 989 * kTera, 1979 * kTera, 494.5 * kTera,
       81559 * kMiB, 3350 * kGiga, 132, 4, 450 * kGiga, true},
      {"H200-SXM-141GB", "hopper", 989 * kTera, 989 * kTera, 1979 * kTera, 494.5 * kTera,
       143771 * kMiB, 4800 * kGiga, 132, 4, 450 * kGiga, true},
  }};
  return kGpus;
}

}  // namespace

double GpuSpec::peak_flop_per_s(Precision precision) const {
  switch (precision) {
    case Precision::kFp16:
      return peak_fp16_flop_per_s;
    case Precision::kBf16:
      return peak_bf16_flop_per_s;
    case Precision::kFp8:
      return peak_fp8_flop_per_s > 0.0 ? peak_fp8_flop_per_s : peak_bf16_flop_per_s;
    case Precision::kFp32:
      return peak_tf32_flop_per_s;
  }
  return peak_bf16_flop_per_s;
}

std::span<const GpuSpec> builtin_gpus() {
  return catalog();
}

bool is_builtin_gpu(const std::string& name) {
  const std::span<const GpuSpec> gpus = builtin_gpus();
  return std::any_of(gpus.begin(), gpus.end(), [&](const GpuSpec& g) { return g.name == name; });
}

GpuSpec without_sms(const GpuSpec& gpu, int taken) {
  GpuSpec g = gpu;
  g.num_sms = std::max(1, gpu.num_sms - taken);
  const double share = static_cast<double>(g.num_sms) / static_cast<double>(gpu.num_sms);
  g.peak_fp16_flop_per_s *= share;
  g.peak_bf16_flop_per_s *= share;
  g.peak_fp8_flop_per_s *= share;
  g.peak_tf32_flop_per_s *= share;
  return g;
}

}  // namespace capsim
