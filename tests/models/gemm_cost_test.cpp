#include "models/gemm_cost.hpp"

#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

namespace capsim {
namespace {

const GpuSpec& a100() {
  return *builtin_catalog().find_gpu("A100-SXM4-80GB");
}

TEST(GemmCostTest, LargeAlignedGemmApproachesMaxEfficiency) {
  GemmParams params;
  const double eta = gemm_efficiency(params, a100(), Precision::kBf16, {8192, 8192, 8192, 1});
  EXPECT_GT(eta, 0.9 * params.max_efficiency);
  EXPECT_LE(eta, params.max_efficiency);
}

TEST(GemmCostTest, SmallGemmsAreInefficient) {
  GemmParams params;
  EXPECT_LT(gemm_efficiency(params, a100(), Precision::kBf16, {512, 512, 512, 1}),
            0.5 * gemm_efficiency(params, a100(), Precision::kBf16, {4096, 4096, 4096, 1}));
}

// fp8 GEMMs use their own ceiling when the profile has one; other precisions keep max_efficiency.
TEST(GemmCostTest, Fp8UsesItsOwnCeiling) {
  GemmParams params;
  const GpuSpec& h100 = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  const GemmShape s{8192, 8192, 8192, 1};
  const double shared = gemm_efficiency(params, h100, Precision::kFp8, s);
  EXPECT_DOUBLE_EQ(shared, gemm_efficiency(params, h100, Precision::kBf16, s));
  params.fp8_max_efficiency = params.max_efficiency / 2.0;
  EXPECT_DOUBLE_EQ(gemm_efficiency(params, h100, Precision::kFp8, s), shared / 2.0);
  EXPECT_DOUBLE_EQ(gemm_efficiency(params, h100, Precision::kBf16, s), shared);
}

// One more wave of tiles than the GPU holds costs a whole wave (wave quantization):
// 108 SMs x one 256x128 tile each is a full wave; one tile more halves utilisation.
TEST(GemmCostTest, WaveQuantization) {
  GemmParams params;
  const double full =
      gemm_efficiency(params, a100(), Precision::kBf16, {256.0 * 108, 128, 4096, 1});
  const double spill =
      gemm_efficiency(params, a100(), Precision::kBf16, {256.0 * 109, 128, 4096, 1});
  EXPECT_LT(spill, 0.9 * full);
}

// K = 10922 (8/3 x 4096, not a multiple of 8) runs ~31% slower than 10944 on H100
// (docs/design/gemm-efficiency.md §4); the model penalises the misaligned shape.
TEST(GemmCostTest, MisalignedDimensionIsSlower) {
  GemmParams params;
  const GpuSpec& h100 = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  const double aligned = gemm_time_s(params, h100, Precision::kBf16, {4096, 4096, 10944, 4});
  const double misaligned = gemm_time_s(params, h100, Precision::kBf16, {4096, 4096, 10922, 4});
  EXPECT_GT(misaligned / aligned, 1.2);
}

// Alignment is in bytes: a dimension that is a multiple of 8 elements but not of 16 is aligned
// to 16 bytes in bf16 and not in fp8, where cuBLASLt wants 16 elements.
TEST(GemmCostTest, AlignmentCountsBytesNotElements) {
  GemmParams params;
  params.misaligned_64 = 0.9;
  params.misaligned_8 = 0.7;
  params.fp8_max_efficiency = params.max_efficiency;
  const GpuSpec& h100 = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  const GemmShape aligned{4096, 4096, 11008, 1};  // 11008 = 86 x 128
  const GemmShape eights{4096, 4096, 10952, 1};   // 10952 = 1369 x 8, not a multiple of 16
  const auto ratio = [&](Precision p) {
    return gemm_efficiency(params, h100, p, eights) / gemm_efficiency(params, h100, p, aligned);
  };
  // The K efficiency differs by 56 k_half / K^2 between the two shapes: 1e-3 covers it.
  EXPECT_NEAR(ratio(Precision::kBf16), 0.9, 1e-3);  // 16-byte aligned, not 128-byte
  EXPECT_NEAR(ratio(Precision::kFp8), 0.7, 1e-3);   // 8 bytes: below cuBLASLt's fp8 minimum
}

TEST(GemmCostTest, MoreWorkNeverTakesLessTime) {
  GemmParams params;
  for (double m = 64; m <= 16384; m *= 2) {
    const double t1 = gemm_time_s(params, a100(), Precision::kBf16, {m, 4096, 4096, 1});
    const double t2 = gemm_time_s(params, a100(), Precision::kBf16, {2 * m, 4096, 4096, 1});
    EXPECT_LE(t1, t2) << "m=" << m;
  }
}

TEST(GemmCostTest, SkinnyGemmIsMemoryBound) {
  GemmParams params;
  const GemmShape skinny{1, 8192, 8192, 1};
  const double bytes = (8192.0 * 8192 + 8192 + 8192) * 2;
  const double t = gemm_time_s(params, a100(), Precision::kBf16, skinny);
  const double memory_s = params.launch_overhead_s +
                          bytes / (a100().hbm_bandwidth_bytes_per_s * params.memory_efficiency);
  // A GEMV-like shape is bounded below by its weight traffic and stays close to it.
  EXPECT_GE(t, memory_s);
  EXPECT_LT(t, 1.2 * memory_s);
}

TEST(GemmCostTest, Fp8UsesFp8Peak) {
  GemmParams params;
  const GpuSpec& h100 = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  const GemmShape s{8192, 8192, 8192, 1};
  EXPECT_LT(gemm_time_s(params, h100, Precision::kFp8, s),
            0.6 * gemm_time_s(params, h100, Precision::kBf16, s));
}

// Each thread keeps the tile utilisation of the shapes it has seen (512 entries): a shape found
// there after thousands of others (evictions, shared slots) and on other SM counts gives the
// bits it gets on a fresh thread.
TEST(GemmCostTest, KeptShapesGiveTheSameBits) {
  GemmParams params;
  const GpuSpec shared = without_sms(a100(), 20);
  const std::vector<GemmShape> probes{
      {8192, 7168, 2048, 1}, {2048, 896, 7168, 1}, {2048, 2048, 128, 14}, {100, 3, 7, 3}};
  const auto efficiencies = [&] {
    std::vector<double> out;
    for (const GemmShape& s : probes) {
      out.push_back(gemm_efficiency(params, a100(), Precision::kBf16, s));
      out.push_back(gemm_efficiency(params, shared, Precision::kBf16, s));
    }
    return out;
  };
  std::vector<double> fresh;
  std::thread([&] { fresh = efficiencies(); }).join();
  EXPECT_EQ(efficiencies(), fresh);
  std::mt19937 rng(301);
  std::uniform_int_distribution<int> dim(1, 20000);
  for (int i = 0; i < 5000; ++i) {
    const GemmShape s{1.0 * dim(rng), 1.0 * dim(rng), 64, 1.0 + i % 3};
    EXPECT_GT(gemm_efficiency(params, i % 2 ? shared : a100(), Precision::kBf16, s), 0.0);
  }
  EXPECT_EQ(efficiencies(), fresh);
  EXPECT_NE(fresh[0], fresh[1]);  // fewer SMs: another utilisation
}

}  // namespace
}  // namespace capsim
