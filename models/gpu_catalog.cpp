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
// direction. A800 and H800 (NVIDIA A800 and H800 datasheets) are A100 80GB and H100 with NVLink
// cut to 400 GB/s both ways, 200 GB/s per direction; compute and memory as theirs.
// Blackwell, dense (without sparsity) per GPU. B200: NVIDIA HGX B200 / DGX B200 datasheets (FP4
// 9 PF, FP8 4.5 PF, BF16 2.25 PF, TF32 1.1 PF, 7.7 TB/s). B300: HGX B300 datasheet (8 GPUs: FP4
// 108 PF dense, FP8 72 PF, BF16 36 PF and TF32 18 PF sparse; FP64 10 TF) and NVIDIA's "Inside
// Blackwell Ultra" blog (dense FP4 1.5x B200's, FP64 cut to 1.25 TF per GPU, 8 TB/s). GB200 and
// GB300: the GB200 NVL72 and GB300 NVL72 datasheets over 72 GPUs (GB200: FP4 1,440 PF, FP8 720
// PF, BF16 360 PF, TF32 180 PF sparse, 576 TB/s; GB300: FP4 1,080 PF dense, the rest as GB200).
// 148 SMs on all four (CUDA device query). NVLink 5: 18 links, 1.8 TB/s per GPU both ways, and
// NVLS in the NVSwitch. HBM capacities as nvidia-smi reports them: B200 183359 MiB, B300 SXM6
// 275040 MiB, GB200 189471 MiB, GB300 284208 MiB.
const std::array<GpuSpec, 10>& gpu_table() {
  static const std::array<GpuSpec, 10> kGpus{{
      {"A100-SXM4-40GB", "ampere", 312 * kTera, 312 * kTera, 0.0, 156 * kTera, 40536 * kMiB,
       1555 * kGiga, 108, 3, 300 * kGiga, false},
      {"A100-SXM4-80GB", "ampere", 312 * kTera, 312 * kTera, 0.0, 156 * kTera, 81920 * kMiB,
       2039 * kGiga, 108, 3, 300 * kGiga, false},
      {"A800-SXM4-80GB", "ampere", 312 * kTera, 312 * kTera, 0.0, 156 * kTera, 81920 * kMiB,
       2039 * kGiga, 108, 3, 200 * kGiga, false},
      {"H100-SXM5-80GB", "hopper", 989 * kTera, 989 * kTera, 1979 * kTera, 494.5 * kTera,
       81559 * kMiB, 3350 * kGiga, 132, 4, 450 * kGiga, true},
      {"H800-SXM5-80GB", "hopper", 989 * kTera, 989 * kTera, 1979 * kTera, 494.5 * kTera,
       81559 * kMiB, 3350 * kGiga, 132, 4, 200 * kGiga, true},
      {"H200-SXM-141GB", "hopper", 989 * kTera, 989 * kTera, 1979 * kTera, 494.5 * kTera,
       143771 * kMiB, 4800 * kGiga, 132, 4, 450 * kGiga, true},
      {"B200-SXM-180GB", "blackwell", 2250 * kTera, 2250 * kTera, 4500 * kTera, 1100 * kTera,
       183359 * kMiB, 7700 * kGiga, 148, 5, 900 * kGiga, true, 9000 * kTera},
      {"B300-SXM-288GB", "blackwell", 2250 * kTera, 2250 * kTera, 4500 * kTera, 1125 * kTera,
       275040 * kMiB, 8000 * kGiga, 148, 5, 900 * kGiga, true, 13500 * kTera},
      {"GB200-NVL-186GB", "blackwell", 2500 * kTera, 2500 * kTera, 5000 * kTera, 1250 * kTera,
       189471 * kMiB, 8000 * kGiga, 148, 5, 900 * kGiga, true, 10000 * kTera},
      {"GB300-NVL-288GB", "blackwell", 2500 * kTera, 2500 * kTera, 5000 * kTera, 1250 * kTera,
       284208 * kMiB, 8000 * kGiga, 148, 5, 900 * kGiga, true, 15000 * kTera},
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
    case Precision::kFp8Cs:
    case Precision::kFp8Blockwise:
    case Precision::kMxfp8:
      return peak_fp8_flop_per_s > 0.0 ? peak_fp8_flop_per_s : peak_bf16_flop_per_s;
    case Precision::kNvfp4:
      return peak_fp4_flop_per_s > 0.0 ? peak_fp4_flop_per_s : peak_flop_per_s(Precision::kFp8);
    case Precision::kFp32:
      return peak_tf32_flop_per_s;
  }
  return peak_bf16_flop_per_s;
}

std::span<const GpuSpec> builtin_gpus() {
  return gpu_table();
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
  g.peak_fp4_flop_per_s *= share;
  return g;
}

}  // namespace capsim
