// The Blackwell catalog entries and the low-precision recipes: their rates, the bytes their
// casts move and store, and which GPUs run them.
#include "models/low_precision.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/byte_units.hpp"
#include "models/catalog.hpp"
#include "models/gemm_cost.hpp"
#include "models/memory_model.hpp"
#include "models/parallelism.hpp"
#include "models/workload.hpp"

namespace capsim {
namespace {

const GpuSpec& gpu(const std::string& name) {
  const GpuSpec* g = builtin_catalog().find_gpu(name);
  EXPECT_NE(g, nullptr) << name;
  return *g;
}

constexpr Precision kRecipes[] = {Precision::kFp8, Precision::kFp8Cs, Precision::kFp8Blockwise,
                                  Precision::kMxfp8, Precision::kNvfp4};

TEST(BlackwellCatalogTest, DatasheetFiguresPerGpu) {
  const GpuSpec& b200 = gpu("B200-SXM-180GB");
  EXPECT_EQ(b200.architecture, "blackwell");
  EXPECT_DOUBLE_EQ(b200.peak_bf16_flop_per_s, 2250e12);
  EXPECT_DOUBLE_EQ(b200.peak_fp8_flop_per_s, 4500e12);
  EXPECT_DOUBLE_EQ(b200.peak_fp4_flop_per_s, 9000e12);
  EXPECT_DOUBLE_EQ(b200.peak_tf32_flop_per_s, 1100e12);
  EXPECT_DOUBLE_EQ(b200.hbm_capacity_bytes, 183359 * kMiB);
  EXPECT_DOUBLE_EQ(b200.hbm_bandwidth_bytes_per_s, 7.7e12);
  const GpuSpec& b300 = gpu("B300-SXM-288GB");
  EXPECT_DOUBLE_EQ(b300.peak_fp4_flop_per_s, 13500e12);  // Blackwell Ultra: 1.5x B200's fp4
  EXPECT_DOUBLE_EQ(b300.peak_fp8_flop_per_s, b200.peak_fp8_flop_per_s);
  EXPECT_DOUBLE_EQ(b300.hbm_capacity_bytes, 275040 * kMiB);
  const GpuSpec& gb200 = gpu("GB200-NVL-186GB");
  EXPECT_DOUBLE_EQ(gb200.peak_bf16_flop_per_s, 2500e12);
  EXPECT_DOUBLE_EQ(gb200.peak_fp8_flop_per_s, 5000e12);
  EXPECT_DOUBLE_EQ(gb200.peak_fp4_flop_per_s, 10000e12);
  EXPECT_DOUBLE_EQ(gb200.hbm_capacity_bytes, 189471 * kMiB);
  const GpuSpec& gb300 = gpu("GB300-NVL-288GB");
  EXPECT_DOUBLE_EQ(gb300.peak_fp4_flop_per_s, 15000e12);
  EXPECT_DOUBLE_EQ(gb300.hbm_capacity_bytes, 284208 * kMiB);
  for (const GpuSpec* g : {&b200, &b300, &gb200, &gb300}) {
    EXPECT_EQ(g->num_sms, 148) << g->name;
    EXPECT_EQ(g->nvlink_generation, 5) << g->name;
    EXPECT_DOUBLE_EQ(g->nvlink_bandwidth_bytes_per_s, 900e9) << g->name;  // 1.8 TB/s both ways
    EXPECT_TRUE(g->has_nvls) << g->name;
  }
  EXPECT_EQ(gpu("H100-SXM5-80GB").peak_fp4_flop_per_s, 0.0);
}

TEST(BlackwellCatalogTest, EachRecipeRunsAtItsTensorCoreRate) {
  const GpuSpec& b200 = gpu("B200-SXM-180GB");
  for (Precision p :
       {Precision::kFp8, Precision::kFp8Cs, Precision::kFp8Blockwise, Precision::kMxfp8})
    EXPECT_DOUBLE_EQ(b200.peak_flop_per_s(p), 4500e12) << to_string(p);
  EXPECT_DOUBLE_EQ(b200.peak_flop_per_s(Precision::kNvfp4), 9000e12);
  // Without fp4 tensor cores nvfp4 falls back to the fp8 rate, without fp8 to the bf16 one.
  EXPECT_DOUBLE_EQ(gpu("H100-SXM5-80GB").peak_flop_per_s(Precision::kNvfp4), 1979e12);
  EXPECT_DOUBLE_EQ(gpu("A100-SXM4-80GB").peak_flop_per_s(Precision::kMxfp8), 312e12);
  // Communication SMs take their share of the fp4 peak too.
  EXPECT_DOUBLE_EQ(without_sms(b200, 74).peak_fp4_flop_per_s, 4500e12);
}

TEST(LowPrecisionTest, RecipeNamesRoundTrip) {
  for (Precision p : kRecipes) {
    EXPECT_TRUE(is_low_precision(p));
    ASSERT_TRUE(precision_from_string(to_string(p)).has_value()) << to_string(p);
    EXPECT_EQ(*precision_from_string(to_string(p)), p);
  }
  EXPECT_EQ(std::string(to_string(Precision::kFp8Cs)), "fp8-cs");
  EXPECT_EQ(std::string(to_string(Precision::kFp8Blockwise)), "fp8-blockwise");
  EXPECT_FALSE(is_fp8_recipe(Precision::kNvfp4));
  EXPECT_TRUE(is_fp8_recipe(Precision::kMxfp8));
  for (Precision p : {Precision::kFp16, Precision::kBf16, Precision::kFp32})
    EXPECT_FALSE(is_low_precision(p));
}

TEST(LowPrecisionTest, QuantizedBytesCountTheScaleFactors) {
  EXPECT_DOUBLE_EQ(quantized_activation_bytes(Precision::kFp8), 1.0);
  EXPECT_DOUBLE_EQ(quantized_activation_bytes(Precision::kFp8Cs), 1.0);
  EXPECT_DOUBLE_EQ(quantized_activation_bytes(Precision::kFp8Blockwise), 1.03125);
  EXPECT_DOUBLE_EQ(quantized_weight_bytes(Precision::kFp8Blockwise), 1.0 + 4.0 / 16384.0);
  EXPECT_DOUBLE_EQ(quantized_activation_bytes(Precision::kMxfp8), 1.03125);
  EXPECT_DOUBLE_EQ(quantized_activation_bytes(Precision::kNvfp4), 0.5625);
  EXPECT_DOUBLE_EQ(quantized_weight_bytes(Precision::kNvfp4), 0.5625);
  EXPECT_DOUBLE_EQ(quantized_activation_bytes(Precision::kBf16), 2.0);
}

TEST(LowPrecisionTest, CastBytesPerElement) {
  using enum CastBy;
  using enum CastOf;
  // Delayed scaling: the figures the fp8 model always used (cast-transpose 4, fused 1 and 0).
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kFp8, kOwnKernel, kInput), 4.0);
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kFp8, kProducer, kInput), 1.0);
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kFp8, kOwnKernel, kGradient), 4.0);
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kFp8, kProducer, kGradient), 0.0);
  // Current scaling: no fused producer, and one more read of the bf16 tensor for its amax.
  for (CastBy by : {kOwnKernel, kProducer}) {
    for (CastOf of : {kInput, kGradient}) {
      EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kFp8Cs, by, of), 6.0);
      EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kNvfp4, by, of), 4.0 + 2.0 * 0.5625);
    }
  }
  // Block scales: read 2, write two copies of 1 + 1/32.
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kMxfp8, kOwnKernel, kInput), 4.0625);
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kMxfp8, kProducer, kInput), 1.09375);
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kMxfp8, kProducer, kGradient), 0.0625);
  EXPECT_DOUBLE_EQ(cast_bytes_per_element(Precision::kFp8Blockwise, kOwnKernel, kGradient), 4.0625);
}

// A Llama-like layer on one GPU, to read the cast kernels and stored bytes off.
ModelSpec llama_layer() {
  ModelSpec m;
  m.name = "cast-test";
  m.num_layers = 4;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 14336;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 4096;
  m.vocab_size = 128256;
  return m;
}

double op_bytes(const std::vector<Op>& ops, const std::string& name, Pass pass) {
  for (const Op& op : ops) {
    if (op.name == name && op.pass == pass)
      return op.bytes;
  }
  return -1.0;
}

// Each recipe's cast kernels move its bytes per element of the cast tensor: the projection's
// input (tokens x h, own kernel) forward and its output gradient backward.
TEST(LowPrecisionTest, LayerCastKernelsMoveTheRecipesBytes) {
  const ModelSpec m = llama_layer();
  const double elements = 4096.0 * 4096.0;  // tokens x h, TP 1
  for (Precision p : kRecipes) {
    Parallelism par;
    par.precision = p;
    const std::vector<Op> ops = lower_layer(m, par);
    EXPECT_DOUBLE_EQ(op_bytes(ops, "attn_proj_fp8_cast", Pass::kForward),
                     elements * cast_bytes_per_element(p, CastBy::kOwnKernel, CastOf::kInput))
        << to_string(p);
    EXPECT_DOUBLE_EQ(op_bytes(ops, "attn_proj_fp8_cast", Pass::kBackwardInput),
                     elements * cast_bytes_per_element(p, CastBy::kOwnKernel, CastOf::kGradient))
        << to_string(p);
    // The 16-bit kernels around the GEMMs do not change with the recipe.
    Parallelism bf16;
    EXPECT_DOUBLE_EQ(op_bytes(ops, "norm1", Pass::kForward),
                     op_bytes(lower_layer(m, bf16), "norm1", Pass::kForward));
  }
  Parallelism bf16;
  EXPECT_LT(op_bytes(lower_layer(m, bf16), "attn_proj_fp8_cast", Pass::kForward), 0.0);
}

// Saved activations: the recipes that store more per quantized element store more, never more
// than bf16.
TEST(LowPrecisionTest, StoredActivationsFollowTheQuantizedSize) {
  const ModelSpec m = llama_layer();
  const auto bytes = [&](Precision p) {
    Parallelism par;
    par.precision = p;
    return activation_bytes_per_layer(m, par);
  };
  EXPECT_DOUBLE_EQ(bytes(Precision::kFp8Cs), bytes(Precision::kFp8));
  EXPECT_GT(bytes(Precision::kMxfp8), bytes(Precision::kFp8));
  EXPECT_DOUBLE_EQ(bytes(Precision::kMxfp8), bytes(Precision::kFp8Blockwise));
  EXPECT_LT(bytes(Precision::kNvfp4), bytes(Precision::kFp8));
  EXPECT_LT(bytes(Precision::kMxfp8), bytes(Precision::kBf16));
}

TEST(LowPrecisionTest, BlockwiseIsSlowerOnHopperOnly) {
  const GpuSpec& h100 = gpu("H100-SXM5-80GB");
  const GpuSpec& b200 = gpu("B200-SXM-180GB");
  EXPECT_NEAR(scaling_rate_factor(Precision::kFp8Blockwise, h100), 6.0 / 6.5, 1e-12);
  EXPECT_EQ(scaling_rate_factor(Precision::kFp8Blockwise, b200), 1.0);
  EXPECT_EQ(scaling_rate_factor(Precision::kFp8Cs, h100), 1.0);
  const GemmParams params;
  const GemmShape s{8192, 8192, 8192, 1};
  EXPECT_DOUBLE_EQ(gemm_efficiency(params, h100, Precision::kFp8Blockwise, s),
                   gemm_efficiency(params, h100, Precision::kFp8, s) * 6.0 / 6.5);
  EXPECT_DOUBLE_EQ(gemm_efficiency(params, b200, Precision::kFp8Blockwise, s),
                   gemm_efficiency(params, b200, Precision::kMxfp8, s));
  // nvfp4 runs at the fp4 rate: a large GEMM takes about half the mxfp8 time on B200.
  EXPECT_LT(gemm_time_s(params, b200, Precision::kNvfp4, s),
            0.55 * gemm_time_s(params, b200, Precision::kMxfp8, s));
}

TEST(LowPrecisionTest, WhichGpusRunWhichRecipe) {
  const GpuSpec& a100 = gpu("A100-SXM4-80GB");
  const GpuSpec& h100 = gpu("H100-SXM5-80GB");
  const GpuSpec& b200 = gpu("B200-SXM-180GB");
  for (Precision p : kRecipes)
    EXPECT_EQ(precision_support_problem(p, b200), "") << to_string(p);
  for (Precision p : {Precision::kFp8, Precision::kFp8Cs, Precision::kFp8Blockwise})
    EXPECT_EQ(precision_support_problem(p, h100), "") << to_string(p);
  EXPECT_EQ(precision_support_problem(Precision::kFp8Cs, a100),
            "precision \"fp8-cs\" needs a GPU with fp8 tensor cores; A100-SXM4-80GB has none");
  EXPECT_EQ(precision_support_problem(Precision::kMxfp8, h100),
            "precision \"mxfp8\" needs tensor cores with hardware block scaling (Blackwell); "
            "H100-SXM5-80GB is hopper");
  GpuSpec no_fp4 = b200;
  no_fp4.name = "NoFp4";
  no_fp4.peak_fp4_flop_per_s = 0.0;
  EXPECT_EQ(precision_support_problem(Precision::kNvfp4, no_fp4),
            "precision \"nvfp4\" needs a GPU with fp4 tensor cores; NoFp4 has no peak_fp4");
  EXPECT_EQ(precision_support_problem(Precision::kBf16, a100), "");
}

// tex.split_quantize: delayed fp8 and nvfp4 quantize all splits in one fused kernel, fp8-cs
// launches amax, scale and cast per split, fp8-blockwise and mxfp8 one cast per split.
TEST(LowPrecisionTest, SplitQuantizationLaunchesPerSplitKernels) {
  EXPECT_EQ(split_quantize_kernels(Precision::kFp8, 16.0), 1.0);
  EXPECT_EQ(split_quantize_kernels(Precision::kNvfp4, 16.0), 1.0);
  EXPECT_EQ(split_quantize_kernels(Precision::kFp8Cs, 16.0), 48.0);
  EXPECT_EQ(split_quantize_kernels(Precision::kFp8Blockwise, 4.0), 4.0);
  EXPECT_EQ(split_quantize_kernels(Precision::kMxfp8, 4.0), 4.0);
}

}  // namespace
}  // namespace capsim
