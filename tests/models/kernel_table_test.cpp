#include "models/kernel_table.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/datasheet_profile.hpp"
#include "models/gemm_cost.hpp"
#include "models/op_cost.hpp"

#include "estimate/iteration_model.hpp"
#include "io/kernel_table_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

// One stage, one chunk, no recompute: the chunk holds every layer, the embedding and the head.
Scenario one_stage() {
  Scenario s = io::load_scenario(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
  s.parallelism.data *= s.parallelism.pipeline;
  s.parallelism.pipeline = 1;
  s.parallelism.virtual_pipeline_stages = 1;
  s.parallelism.schedule = Schedule::kOneFOneB;
  s.parallelism.recompute = Recompute::kNone;
  s.parallelism.stage_layers.clear();
  return s;
}

HardwareProfile profile_for(const Scenario& s) {
  return datasheet_profile(s.cluster.gpu, s.cluster);
}

// The table lists exactly what both engines cost: its rows add up to the chunk's compute.
TEST(KernelTableTest, RowsAddUpToTheChunkCompute) {
  const Scenario s = one_stage();
  const HardwareProfile profile = profile_for(s);
  const KernelTable table = kernel_table(s, profile);
  const IterationCosts costs = estimate::compute_iteration_costs(s, profile);
  const ChunkCosts& chunk = costs.stages.at(0).chunks.at(0);
  EXPECT_EQ(table.max_layers_per_stage, s.model.num_layers);
  double forward = 0.0;
  double backward_input = 0.0;
  double backward_weight = 0.0;
  for (const KernelRow& row : table.rows) {
    const double times = row.part == ModelPart::kLayer ? s.model.num_layers : 1.0;
    (row.op.pass == Pass::kForward         ? forward
     : row.op.pass == Pass::kBackwardInput ? backward_input
                                           : backward_weight) += times * row.time_s;
  }
  EXPECT_NEAR(forward, chunk.forward_compute_s, 1e-12 * forward);
  EXPECT_NEAR(backward_input, chunk.backward_input_s, 1e-12 * backward_input);
  EXPECT_NEAR(backward_weight, chunk.backward_weight_s, 1e-12 * backward_weight);
}

// Checks every GEMM and attention row's precision; returns how many materialised attention
// GEMM rows it saw.
int expect_fp8_only_in_linears(const Scenario& s) {
  int materialised = 0;
  const HardwareProfile profile = profile_for(s);
  const GpuSpec& gpu = s.cluster.gpu;
  for (const KernelRow& row : kernel_table(s, profile).rows) {
    const std::string_view name = row.op.name;
    const bool sixteen = name == "logits" || name == "attention_scores" ||
                         name == "attention_values" || row.op.kind == KernelKind::kAttention;
    if (row.op.kind == KernelKind::kMemoryBound)
      continue;
    materialised += name == "attention_scores" || name == "attention_values" ? 1 : 0;
    EXPECT_EQ(row.precision, sixteen ? Precision::kBf16 : Precision::kFp8) << name;
    EXPECT_DOUBLE_EQ(row.peak_flop_per_s, gpu.peak_flop_per_s(row.precision)) << name;
    if (row.op.kind == KernelKind::kGemm) {
      EXPECT_DOUBLE_EQ(row.time_s, gemm_time_s(profile.gemm, gpu, row.precision, row.op.gemm));
    }
  }
  return materialised;
}

// fp8 recipes keep the logits GEMM and attention in 16 bits, the materialised score and value
// GEMMs too; each GEMM row is the GEMM model's time at the precision it runs at, against that
// precision's peak.
TEST(KernelTableTest, Fp8KeepsLogitsAndAttentionIn16Bits) {
  for (const AttentionKernel attention :
       {AttentionKernel::kFlash, AttentionKernel::kMaterialized}) {
    Scenario s = one_stage();
    s.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
    s.parallelism.precision = Precision::kFp8;
    s.model.attention = attention;
    const int materialised = expect_fp8_only_in_linears(s);
    EXPECT_EQ(materialised > 0, attention == AttentionKernel::kMaterialized);
  }
}

// How many times faster than FlashAttention (the profile's figures) `kernel` runs one attention
// op of `head_dim` on `gpu_name`, launch cost aside.
double speed_against_flash(AttentionKernel kernel, const char* gpu_name, int head_dim, Pass pass) {
  Op op;
  op.kind = KernelKind::kAttention;
  op.flop = 1e13;
  op.head_dim = head_dim;
  op.pass = pass;
  const GpuSpec gpu = *builtin_catalog().find_gpu(gpu_name);
  HardwareProfile profile;
  profile.gemm.launch_overhead_s = 0.0;
  op.attention_kernel = AttentionKernel::kFlash;
  const double flash = op_time_s(op, profile, gpu, Precision::kBf16, 4096.0);
  op.attention_kernel = kernel;
  return flash / op_time_s(op, profile, gpu, Precision::kBf16, 4096.0);
}

// FlashAttention in Triton does FlashAttention's work at FlashAttention-2's forward rate / 1.4
// and backward rate / 2 (Dao 2023, §4.1) on Hopper; on Ampere, whose shipped figures are of the
// Triton class already, at the same rate.
TEST(KernelTableTest, TritonAttentionIsSlowerThanFlashAttention2OnHopperOnly) {
  for (const Pass pass : {Pass::kForward, Pass::kBackwardInput}) {
    EXPECT_NEAR(speed_against_flash(AttentionKernel::kTriton, "H100-SXM5-80GB", 128, pass),
                pass == Pass::kForward ? 1.0 / 1.4 : 1.0 / 2.0, 1e-12);
    EXPECT_NEAR(speed_against_flash(AttentionKernel::kTriton, "A100-SXM4-80GB", 128, pass), 1.0,
                1e-12);
  }
}

// cuDNN's fused attention does FlashAttention's work at FlashAttention-2's H100 rates times the
// ratios FlashAttention-3's paper measures (figures 5-6), interpolated in the head dimension; on
// other architectures at the profile's figures.
TEST(KernelTableTest, CudnnAttentionIsFasterThanFlashAttention2OnHopperOnly) {
  struct Case {
    const char* gpu;
    int head_dim;
    double forward;
    double backward;
  };
  for (const Case& c :
       {Case{"H100-SXM5-80GB", 128, 1.60, 1.63}, Case{"H100-SXM5-80GB", 64, 1.28, 1.50},
        Case{"H100-SXM5-80GB", 96, 1.44, 1.565}, Case{"A100-SXM4-80GB", 128, 1.0, 1.0},
        Case{"B200-SXM-180GB", 128, 1.0, 1.0}}) {
    for (const Pass pass : {Pass::kForward, Pass::kBackwardInput}) {
      EXPECT_NEAR(speed_against_flash(AttentionKernel::kCudnn, c.gpu, c.head_dim, pass),
                  pass == Pass::kForward ? c.forward : c.backward, 1e-12)
          << c.gpu << " head dim " << c.head_dim;
    }
  }
}

// A memory-bound op of several kernels pays the launch term once per kernel.
TEST(KernelTableTest, MemoryBoundOpPaysALaunchPerKernel) {
  const GpuSpec gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  HardwareProfile profile;
  Op op;
  op.kind = KernelKind::kMemoryBound;
  op.bytes = 1e8;
  const double one = op_time_s(op, profile, gpu, Precision::kFp8Cs, 4096.0);
  op.kernels = 48.0;
  EXPECT_NEAR(op_time_s(op, profile, gpu, Precision::kFp8Cs, 4096.0) - one,
              47.0 * profile.gemm.launch_overhead_s / profile.software_efficiency, 1e-15);
}

// fp8 attention runs cuDNN's forward at 864 / 609 of its bf16 rate (FlashAttention-3, figures 5
// and 7, head dim 128 at 4k tokens) and its backward at the bf16 rate, on every GPU.
TEST(KernelTableTest, Fp8AttentionSpeedsUpTheForwardOnly) {
  for (const char* gpu_name : {"H100-SXM5-80GB", "B200-SXM-180GB"}) {
    const GpuSpec gpu = *builtin_catalog().find_gpu(gpu_name);
    HardwareProfile profile;
    profile.gemm.launch_overhead_s = 0.0;
    for (const Pass pass : {Pass::kForward, Pass::kBackwardInput}) {
      Op op;
      op.kind = KernelKind::kAttention;
      op.flop = 1e13;
      op.head_dim = 128;
      op.pass = pass;
      op.attention_kernel = AttentionKernel::kCudnn;
      const double bf16 = op_time_s(op, profile, gpu, Precision::kMxfp8, 4096.0);
      op.fp8_attention = true;
      EXPECT_NEAR(bf16 / op_time_s(op, profile, gpu, Precision::kMxfp8, 4096.0),
                  pass == Pass::kForward ? 864.0 / 609.0 : 1.0, 1e-12)
          << gpu_name;
    }
  }
}

// The tensor speed divides the compute-bound part of an fp8 or 16-bit GEMM and of attention;
// memory-bound kernels, launch overhead and fp4 GEMMs keep their time.
TEST(KernelTableTest, TensorSpeedScalesTensorComputeOnly) {
  const GpuSpec gpu = *builtin_catalog().find_gpu("GB300-NVL-288GB");
  HardwareProfile profile;
  HardwareProfile fast = profile;
  fast.tensor_speed = 1.25;
  const double launch = profile.gemm.launch_overhead_s;
  Op gemm;
  gemm.kind = KernelKind::kGemm;
  gemm.gemm = {8192, 8192, 8192, 1};
  for (const Precision p : {Precision::kBf16, Precision::kMxfp8}) {
    EXPECT_NEAR(op_time_s(gemm, fast, gpu, p, 4096.0) - launch,
                (op_time_s(gemm, profile, gpu, p, 4096.0) - launch) / 1.25, 1e-15);
  }
  EXPECT_EQ(op_time_s(gemm, fast, gpu, Precision::kNvfp4, 4096.0),
            op_time_s(gemm, profile, gpu, Precision::kNvfp4, 4096.0));
  Op attention;
  attention.kind = KernelKind::kAttention;
  attention.flop = 1e13;
  attention.head_dim = 128;
  EXPECT_NEAR(op_time_s(attention, fast, gpu, Precision::kNvfp4, 4096.0) - launch,
              (op_time_s(attention, profile, gpu, Precision::kNvfp4, 4096.0) - launch) / 1.25,
              1e-15);
  Op norm;
  norm.kind = KernelKind::kMemoryBound;
  norm.bytes = 1e9;
  EXPECT_EQ(op_time_s(norm, fast, gpu, Precision::kBf16, 4096.0),
            op_time_s(norm, profile, gpu, Precision::kBf16, 4096.0));
}

// With context parallelism each attention call runs one ring step's s/c x s/c block, so the
// FlashAttention efficiency ramps with s/c: shorter blocks run less efficiently.
TEST(KernelTableTest, ContextParallelAttentionRampsWithTheRingBlock) {
  Scenario s = one_stage();
  s.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  s.model.seq_length = 4096;
  s.parallelism.context = 4;
  s.parallelism.data /= 4;
  s.parallelism.global_batch_size /= 4;
  EXPECT_DOUBLE_EQ(attention_kernel_seq_length(s.model, s.parallelism), 1024.0);
  const HardwareProfile profile = profile_for(s);
  const GpuSpec& gpu = s.cluster.gpu;
  int attention_rows = 0;
  for (const KernelRow& row : kernel_table(s, profile).rows) {
    if (row.op.kind != KernelKind::kAttention)
      continue;
    ++attention_rows;
    EXPECT_DOUBLE_EQ(row.time_s, op_time_s(row.op, profile, gpu, s.parallelism.precision, 1024.0));
    EXPECT_GT(row.time_s, op_time_s(row.op, profile, gpu, s.parallelism.precision, 4096.0));
  }
  EXPECT_EQ(attention_rows, 2);
}

// A row that stands for several kernels (a grouped linear's per-expert casts) says how many.
TEST(KernelTableTest, JsonRowsCountTheLaunchesOfMultiKernelRows) {
  KernelTable table;
  KernelRow row;
  row.op.kind = KernelKind::kMemoryBound;
  row.op.name = "expert_up_fp8_cast";
  row.op.bytes = 1e8;
  row.time_s = 1e-4;
  table.rows.push_back(row);
  row.op.kernels = 48.0;
  table.rows.push_back(row);
  const nlohmann::json rows = io::kernel_table_to_json(table).at("rows");
  EXPECT_FALSE(rows.at(0).contains("launches"));
  EXPECT_EQ(rows.at(1).at("launches").get<double>(), 48.0);
  EXPECT_NE(io::kernel_table_text(table).find("(48 kernels)"), std::string::npos);
}

TEST(KernelTableTest, JsonRowsCarryRatesAndTheTextTotals) {
  const Scenario s = one_stage();
  const KernelTable table = kernel_table(s, profile_for(s));
  const nlohmann::json j = io::kernel_table_to_json(table);
  ASSERT_EQ(j.at("rows").size(), table.rows.size());
  for (const auto& row : j.at("rows")) {
    EXPECT_GT(row.at("time_s").get<double>(), 0.0);
    if (row.at("kind") == "memory") {
      EXPECT_GT(row.at("gb_per_s").get<double>(), 0.0);
    } else {
      const double fraction = row.at("fraction_of_peak").get<double>();
      EXPECT_GT(fraction, 0.0);
      EXPECT_LT(fraction, 1.0);
    }
  }
  const std::string text = io::kernel_table_text(table);
  EXPECT_NE(text.find("layer     total: forward"), std::string::npos);
  EXPECT_NE(text.find("cross_entropy"), std::string::npos);
}

// A mixture-of-experts model lists each layer kind it has once, in the order the kinds first
// occur: dense leading layers, then MoE layers, then the MTP module; rows of a kind run once per
// layer of that kind.
TEST(KernelTableTest, ListsEveryLayerKindOfAMixtureOfExperts) {
  Scenario s = one_stage();
  s.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  s.model.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 512};
  s.model.moe->first_dense_layers = 1;
  s.model.mtp_layers = 1;
  const KernelTable table = kernel_table(s, profile_for(s));
  std::vector<ModelPart> parts;
  for (const KernelRow& row : table.rows) {
    if (parts.empty() || parts.back() != row.part)
      parts.push_back(row.part);
  }
  EXPECT_EQ(parts,
            (std::vector<ModelPart>{ModelPart::kLayer, ModelPart::kMoeLayer, ModelPart::kEmbedding,
                                    ModelPart::kHead, ModelPart::kMtpModule}));
  const auto has = [&](ModelPart part, std::string_view name) {
    return std::any_of(table.rows.begin(), table.rows.end(), [&](const KernelRow& row) {
      return row.part == part && name == row.op.name;
    });
  };
  EXPECT_TRUE(has(ModelPart::kLayer, "mlp_up"));
  EXPECT_FALSE(has(ModelPart::kLayer, "router"));
  EXPECT_TRUE(has(ModelPart::kMoeLayer, "router"));
  EXPECT_FALSE(has(ModelPart::kMoeLayer, "mlp_up"));
  EXPECT_TRUE(is_layer_part(ModelPart::kMoeLayer));
  EXPECT_FALSE(is_layer_part(ModelPart::kMtpModule));
  const std::string text = io::kernel_table_text(table);
  EXPECT_NE(text.find("moe_layer total: forward"), std::string::npos);
  EXPECT_NE(text.find("mtp       total: forward"), std::string::npos);
}

}  // namespace
}  // namespace capsim
