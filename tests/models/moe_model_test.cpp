#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "models/all_to_all_cost.hpp"
#include "models/catalog.hpp"
#include "models/low_precision.hpp"
#include "models/memory_model.hpp"
#include "models/op_cost.hpp"
#include "models/parameter_count.hpp"
#include "models/recompute_modules.hpp"
#include "models/workload.hpp"

#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "DeepSeek-V3";
  m.num_layers = 61;
  m.hidden_size = 7168;
  m.num_attention_heads = 128;
  m.num_kv_heads = 128;
  m.ffn_hidden_size = 18432;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 4096;
  m.vocab_size = 129280;
  m.mla = MlaSpec{1536, 512, 128, 64, 128};
  m.moe = MoeSpec{256, 8, 2048, 2048, 3, 1.0, RouterScore::kSigmoid, 0.0};
  m.mtp_layers = 1;
  return m;
}

ModelSpec qwen3_235b() {
  ModelSpec m;
  m.name = "Qwen3-235B-A22B";
  m.num_layers = 94;
  m.hidden_size = 4096;
  m.num_attention_heads = 64;
  m.num_kv_heads = 4;
  m.explicit_head_dim = 128;
  m.ffn_hidden_size = 12288;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 4096;
  m.vocab_size = 151936;
  m.moe = MoeSpec{128, 8, 1536, 0, 0, 1.0, RouterScore::kSoftmax, 0.0};
  return m;
}

ModelSpec mixtral_8x7b() {
  ModelSpec m;
  m.name = "Mixtral-8x7B";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 14336;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 4096;
  m.vocab_size = 32000;
  m.moe = MoeSpec{8, 2, 14336, 0, 0, 1.0, RouterScore::kSoftmax, 0.0};
  return m;
}

// Llama 4 Maverick: experts on every other layer (transformers' interleave_moe_layer_step 2),
// 128 routed of 8192 with top-1 and a shared one, dense layers of 16384.
ModelSpec llama4_maverick() {
  ModelSpec m;
  m.name = "Llama-4-Maverick";
  m.num_layers = 48;
  m.hidden_size = 5120;
  m.num_attention_heads = 40;
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 16384;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 8192;
  m.vocab_size = 202048;
  m.moe = MoeSpec{128, 1, 8192, 8192, 0, 1.0, RouterScore::kSigmoid, 0.0};
  m.moe->layer_interval = 2;
  return m;
}

// A MoE layer's tensors outside its routed experts (MLA's projections and latent norms, the
// router, the shared expert) add up to its dense parameters, per rank.
TEST(MoeParameters, LayerTensorsSumToTheDenseParametersOfTheLayer) {
  const ModelSpec m = deepseek_v3();
  const std::vector<double> tensors = layer_parameter_tensors_per_rank(m, 2, true);
  double total = 0.0;
  for (const double t : tensors)
    total += t;
  EXPECT_EQ(tensors.size(), 12U);  // 2 norms, 7 of MLA (output included), router, shared up, down
  EXPECT_DOUBLE_EQ(total, moe_layer_dense_parameters_per_rank(m, 2));
}

// DeepSeek-V3 report: 671B total parameters, 37B activated per token (MTP module excluded).
TEST(MoeParameters, DeepSeekV3TotalAndActive) {
  EXPECT_NEAR(total_parameters(deepseek_v3()) / 1e9, 671.0, 1.0);
  EXPECT_NEAR(active_parameters(deepseek_v3()) / 1e9, 37.5, 1.0);
}

// Qwen3-235B-A22B model card: 235B total, 22B activated.
TEST(MoeParameters, Qwen3TotalAndActive) {
  EXPECT_NEAR(total_parameters(qwen3_235b()) / 1e9, 235.1, 0.5);
  EXPECT_NEAR(active_parameters(qwen3_235b()) / 1e9, 22.2, 0.3);
}

// Meta's Llama 4 model card: Maverick has 400B total and 17B active parameters. With experts on
// every layer the same dimensions would hold 784B.
TEST(MoeParameters, Llama4MaverickTotalAndActive) {
  EXPECT_NEAR(total_parameters(llama4_maverick()) / 1e9, 400.0, 2.0);
  EXPECT_NEAR(active_parameters(llama4_maverick()) / 1e9, 17.0, 0.5);
}

// Mistral's Mixtral 8x7B: 46.7B total, 12.9B active.
TEST(MoeParameters, MixtralTotalAndActive) {
  EXPECT_NEAR(total_parameters(mixtral_8x7b()) / 1e9, 46.7, 0.05);
  EXPECT_NEAR(active_parameters(mixtral_8x7b()) / 1e9, 12.9, 0.05);
}

// Megatron-Bridge's performance summary (26.02.01 container, Qwen3-235B-A22B on 256 H100, FP8
// current scaling) prints 1611 tokens/s/GPU and 238 model TFLOP/s/GPU; its DeepSeek-V3 row on
// 1024 H100 (25.09) 1297 tokens/s/GPU and 338 TFLOP/s/GPU. The model FLOPs per token recompute
// the printed TFLOP/s from the printed tokens/s to the table's rounding.
TEST(MoeFlops, RecomputesPublishedModelTflops) {
  EXPECT_NEAR(1611.0 * model_flop_per_token(qwen3_235b()) / 1e12, 238.0, 1.0);
  EXPECT_NEAR(1297.0 * model_flop_per_token(deepseek_v3()) / 1e12, 338.0, 1.0);
}

TEST(MoeLowering, GroupedGemmsRunTheRoutedTokensOfTheLocalExperts) {
  const ModelSpec m = qwen3_235b();
  Parallelism p;
  p.tensor = 2;
  p.sequence_parallel = true;
  p.expert = 32;
  p.expert_tensor = 1;
  const std::vector<Op> ops = lower_layer(m, p, LayerKind{true, false});
  double expert_flop = 0.0;
  for (const Op& op : ops) {
    if (is_gemm(op, "expert_up", Pass::kForward) || is_gemm(op, "expert_down", Pass::kForward))
      expert_flop += op.flop;
  }
  // 4096 tokens / TP 2 on this rank, each routed to 8 experts of 3 x h x 1536 weights.
  EXPECT_DOUBLE_EQ(expert_flop, 2.0 * 2048.0 * 8.0 * 3.0 * 4096.0 * 1536.0);
  EXPECT_DOUBLE_EQ(routed_rows(m, p), 2048.0 * 8.0);
  p.expert_tensor = 2;
  EXPECT_DOUBLE_EQ(routed_rows(m, p), 2048.0 * 8.0 * 2.0);
}

TEST(MoeLowering, WindowedLayersAttendFewerKeys) {
  ModelSpec m = qwen3_235b();
  m.window_attention = WindowAttention{128, 2};
  Parallelism p;
  const auto attention_flop = [&](LayerKind kind) {
    for (const Op& op : lower_layer(m, p, kind)) {
      if (op.kind == KernelKind::kAttention && op.pass == Pass::kForward)
        return op.flop;
    }
    return 0.0;
  };
  EXPECT_TRUE(layer_kind(m, 0).windowed);
  EXPECT_FALSE(layer_kind(m, 1).windowed);
  const double ratio = attention_flop({true, true}) / attention_flop({true, false});
  EXPECT_NEAR(ratio, (128.0 - 128.0 * 128.0 / 8192.0) / 2048.0, 1e-12);
}

// A windowed layer's attention kernel runs as short as its window: its efficiency is that of the
// causal sequence whose queries see as many keys on average (2 x 126 here), so a FLOP costs more
// than in a full layer.
TEST(MoeLowering, WindowedAttentionRunsAtItsWindowsEfficiency) {
  Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                 "/scenarios/qwen3-235b-h100/scenario.json");
  s.model.window_attention = WindowAttention{128, 2};
  const HardwareProfile profile = io::resolve_profile(s);
  const GpuSpec& gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  const double seq = attention_kernel_seq_length(s.model, s.parallelism);
  const auto attention = [&](LayerKind kind) {
    for (const Op& op : lower_layer(s.model, s.parallelism, kind)) {
      if (op.kind == KernelKind::kAttention && op.pass == Pass::kForward)
        return op;
    }
    return Op{};
  };
  const Op windowed = attention({true, true});
  const Op full = attention({true, false});
  EXPECT_DOUBLE_EQ(windowed.attention_seq_length, 2.0 * windowed_keys(s.model));
  EXPECT_EQ(full.attention_seq_length, 0.0);
  const auto per_flop_s = [&](const Op& op) {
    return (op_time_s(op, profile, gpu, s.parallelism.precision, seq) *
                profile.software_efficiency -
            profile.gemm.launch_overhead_s) /
           op.flop;
  };
  const double half = profile.attention.half_efficiency_seq_length;
  const double keys = 2.0 * windowed_keys(s.model);
  EXPECT_NEAR(per_flop_s(windowed) / per_flop_s(full),
              (seq / (seq + half)) / (keys / (keys + half)), 1e-9);
}

// Routed experts' weights shard over EP x ETP; their optimizer state over expert data
// parallelism (the distributed optimizer), not over the DP group.
TEST(MoeMemory, ExpertStatesShardOverExpertParallelismAndExpertData) {
  const ModelSpec m = qwen3_235b();
  Parallelism p;
  p.data = 16;
  p.expert = 8;
  p.zero_stage = 1;
  p.global_batch_size = 16;
  const GpuSpec gpu{};
  const StageMemory ep8 = estimate_memory(m, p, gpu).stages.front();
  p.expert = 16;
  const StageMemory ep16 = estimate_memory(m, p, gpu).stages.front();
  const double experts = 94.0 * expert_parameters(m);
  EXPECT_NEAR(ep8.weights_bytes - ep16.weights_bytes, experts * (1.0 / 8 - 1.0 / 16) * 2.0,
              1e-6 * ep8.weights_bytes);
  // Expert data parallelism: 16 / 8 = 2 ranks, then 1; Adam's 12 B per parameter.
  EXPECT_NEAR(ep8.optimizer_bytes - ep16.optimizer_bytes, experts * (1.0 / 8 / 2 - 1.0 / 16) * 12.0,
              1e-6 * ep8.optimizer_bytes);
}

// One stage of bf16 data and expert parallelism, one micro-batch per data rank.
Parallelism bf16_expert_layout(int data, int expert) {
  Parallelism p;
  p.data = data;
  p.expert = expert;
  p.global_batch_size = data;
  p.precision = Precision::kBf16;
  return p;
}

// The memory of the first stage of `m` laid out as `p`.
StageMemory first_stage(const ModelSpec& m, const Parallelism& p) {
  return estimate_memory(m, p, GpuSpec{}).stages.front();
}

// Memory-efficient permutation applies the probabilities in the experts' activation, so the
// experts' bf16 output (routed rows x h) is not kept per MoE layer and micro-batch.
TEST(MoeMemory, MemoryEfficientPermutationKeepsNoExpertOutput) {
  const ModelSpec m = qwen3_235b();
  Parallelism p = bf16_expert_layout(16, 8);
  const StageMemory efficient = first_stage(m, p);
  p.memory_efficient_permutation = false;
  const StageMemory classic = first_stage(m, p);
  ASSERT_EQ(efficient.micro_batches_in_flight, 1);
  EXPECT_NEAR(classic.activations_bytes - efficient.activations_bytes,
              94.0 * routed_rows(m, p) * 4096.0 * 2.0, 1e-9 * classic.activations_bytes);
}

// activation_input_fp8 keeps SwiGLU's 2f-wide input in 1 B instead of 2: the experts' on the
// routed rows, the shared expert's and the dense layers' on the tokens.
TEST(MoeMemory, Fp8ActivationInputHalvesTheSwigluInput) {
  const ModelSpec m = deepseek_v3();
  Parallelism p = bf16_expert_layout(64, 64);
  const StageMemory bf16 = first_stage(m, p);
  p.activation_input_fp8 = true;
  const StageMemory fp8 = first_stage(m, p);
  const double tokens = 4096.0;
  const double moe_layers = 58.0 + 1.0;  // the MTP layer is a MoE layer too
  const double expected =
      moe_layers * (routed_rows(m, p) + tokens) * 2.0 * 2048.0 + 3.0 * tokens * 2.0 * 18432.0;
  EXPECT_NEAR(bf16.activations_bytes - fp8.activations_bytes, expected,
              1e-9 * bf16.activations_bytes);
}

// An MTP module keeps a MoE layer's activations, its two normed inputs and its projection's
// 2h-wide input per micro-batch, and a second loss beside the head's.
TEST(MoeMemory, MtpModuleStoresALayerAndALossWithTheHead) {
  ModelSpec m = deepseek_v3();
  m.mtp_layers = 0;
  const Parallelism p = bf16_expert_layout(64, 64);
  const StageMemory none = first_stage(m, p);
  m.num_layers = 62;
  const StageMemory deeper = first_stage(m, p);
  m.num_layers = 61;
  m.mtp_layers = 1;
  const StageMemory mtp = first_stage(m, p);
  const double moe_layer = deeper.activations_bytes - none.activations_bytes;
  EXPECT_NEAR(mtp.activations_bytes - none.activations_bytes,
              moe_layer + 4.0 * 2.0 * 4096.0 * 7168.0, 1e-9 * mtp.activations_bytes);
  // The head's per-micro-batch part: the final norm's input and output and the fp32 softmax.
  const double head = 2.0 * 2.0 * 4096.0 * 7168.0 + 4.0 * 4096.0 * 129280.0;
  EXPECT_NEAR(mtp.embedding_logits_bytes - none.embedding_logits_bytes, head,
              1e-9 * mtp.embedding_logits_bytes);
}

// Megatron-Core's MoE report (arXiv 2603.07685, Table 3, §4.1.2 and Table 4) breaks down the
// memory per GPU of DeepSeek-V3 in bf16 at PP4 x VPP4 x EP64 on 256 GPUs: 199.5 GB in all, 131.0 GB
// of activations; memory-efficient permutation saves 26.3 GB, recomputing the MLA up-projections
// 30.4 GB and the norms 8.2 GB. The layout's other degrees are the ones the report leaves implied
// (TP1, DP64, micro-batch 1, fp32 moments as its 32.1 GB of optimizer state imply, no
// recompute); the worst stage is checked within the stated tolerances.
TEST(MoeMemory, DeepSeekV3NearTheMegatronCoreReportsBreakdown) {
  const ModelSpec m = deepseek_v3();
  Parallelism p = bf16_expert_layout(64, 64);
  p.pipeline = 4;
  p.virtual_pipeline_stages = 4;
  p.schedule = Schedule::kInterleaved;
  p.stage_layers = {15, 16, 16, 14};
  p.global_batch_size = 8192;
  p.recompute = Recompute::kNone;
  p.zero_stage = 1;
  const auto worst = [&](const Parallelism& layout) {
    return estimate_memory(m, layout, GpuSpec{}).stages.at(1);
  };
  const StageMemory efficient = worst(p);
  EXPECT_NEAR(efficient.total_bytes() / 199.5e9, 1.0, 0.05);
  EXPECT_NEAR(efficient.activations_bytes / 131.0e9, 1.0, 0.05);
  Parallelism classic = p;
  classic.memory_efficient_permutation = false;
  EXPECT_NEAR((worst(classic).activations_bytes - efficient.activations_bytes) / 26.3e9, 1.0, 0.25);
  p.recompute = Recompute::kSelective;
  p.recompute_modules = kRecomputeMlaUpProjection;
  EXPECT_NEAR((efficient.activations_bytes - worst(p).activations_bytes) / 30.4e9, 1.0, 0.2);
  p.recompute_modules = kRecomputeLayernorm;
  EXPECT_NEAR((efficient.activations_bytes - worst(p).activations_bytes) / 8.2e9, 1.0, 0.05);
}

// The bytes of the ops named `name` in `pass` of one MoE layer of `m` under `p`.
double op_bytes(const ModelSpec& m, const Parallelism& p, std::string_view name, Pass pass) {
  double bytes = 0.0;
  for (const Op& op : lower_layer(m, p, LayerKind{true, false})) {
    if (name == op.name && op.pass == pass)
      bytes += op.bytes;
  }
  return bytes;
}

// The fp8 store is a cast kernel of its own each way: read 2 B and write 1 B per element
// forward, the reverse backward; without the flag there is none.
TEST(MoeLowering, Fp8ActivationInputCastsTheSwigluInputEachWay) {
  const ModelSpec m = qwen3_235b();
  Parallelism p;
  p.expert = 8;
  const auto cast_bytes = [&](Pass pass) {
    return op_bytes(m, p, "expert_activation_input_fp8", pass);
  };
  EXPECT_EQ(cast_bytes(Pass::kForward), 0.0);
  p.activation_input_fp8 = true;
  const double elements = routed_rows(m, p) * 2.0 * 1536.0;
  EXPECT_DOUBLE_EQ(cast_bytes(Pass::kForward), elements * 3.0);
  EXPECT_DOUBLE_EQ(cast_bytes(Pass::kBackwardInput), elements * 3.0);
}

// Megatron-Core's all-to-all dispatcher sorts the received rows by local expert and back: two
// passes over every routed row each way; DeepEP's dispatcher and a rank of one expert do not.
TEST(MoeLowering, AllToAllDispatcherSortsTheReceivedRowsByLocalExpert) {
  const ModelSpec m = qwen3_235b();
  Parallelism p;
  p.expert = 8;
  const auto sort_bytes = [&](Pass pass) {
    return op_bytes(m, p, "sort_chunks", pass) + op_bytes(m, p, "unsort_chunks", pass);
  };
  const double rows = routed_rows(m, p);
  const double row_bytes = 4096.0 * 2.0;
  EXPECT_DOUBLE_EQ(sort_bytes(Pass::kForward),
                   2.0 * rows * (row_bytes + 4.0) + 2.0 * rows * row_bytes);
  EXPECT_DOUBLE_EQ(sort_bytes(Pass::kBackwardInput), sort_bytes(Pass::kForward));
  p.token_dispatcher = TokenDispatcher::kDeepEp;
  EXPECT_EQ(sort_bytes(Pass::kForward), 0.0);
  p.token_dispatcher = TokenDispatcher::kAllToAll;
  p.expert = 128;
  EXPECT_EQ(sort_bytes(Pass::kForward), 0.0);
}

// GPT-OSS's clamp of the activation's inputs runs as PyTorch ops: two clamps of a half each and
// the concatenation, 8 reads and writes per element of a half forward, twice that backward.
TEST(MoeLowering, ActivationClampAddsItsMemoryPasses) {
  ModelSpec m = qwen3_235b();
  Parallelism p;
  p.expert = 8;
  EXPECT_EQ(op_bytes(m, p, "expert_activation_clamp", Pass::kForward), 0.0);
  m.moe->activation_clamp = 7.0;
  const double half = routed_rows(m, p) * 1536.0;
  EXPECT_DOUBLE_EQ(op_bytes(m, p, "expert_activation_clamp", Pass::kForward), 8.0 * half * 2.0);
  EXPECT_DOUBLE_EQ(op_bytes(m, p, "expert_activation_clamp", Pass::kBackwardInput),
                   16.0 * half * 2.0);
  // Replayed with the activation by moe_act recompute.
  for (const Op& op : lower_layer(m, p, LayerKind{true, false})) {
    if (std::string_view(op.name) == "expert_activation_clamp") {
      EXPECT_NE(op.recompute_modules & kRecomputeMoeActivation, 0U);
    }
  }
}

// The second expert linear's bias, added with the routing probability expert by expert: 6 reads
// and writes per output element forward, 8 backward.
TEST(MoeLowering, LinearBiasAddsTheSecondBiasPerExpert) {
  ModelSpec m = qwen3_235b();
  Parallelism p;
  p.expert = 8;
  EXPECT_EQ(op_bytes(m, p, "expert_down_bias", Pass::kForward), 0.0);
  m.moe->linear_bias = true;
  const double out = routed_rows(m, p) * 4096.0;
  EXPECT_DOUBLE_EQ(op_bytes(m, p, "expert_down_bias", Pass::kForward), 6.0 * out * 2.0);
  EXPECT_DOUBLE_EQ(op_bytes(m, p, "expert_down_bias", Pass::kBackwardInput), 8.0 * out * 2.0);
}

// Transformer Engine's fused grouped MLP: each linear one grouped GEMM over the rank's experts
// (one round, the experts its batch), each expert's rows padded to 256; the activation and its
// clamp, the second linear's bias and the cast of its input run in the GEMMs' epilogues, and
// padded buffers (rank_capacity_factor) leave the computed rows as routed.
TEST(MoeLowering, FusedGroupedMlpRunsOneGroupedGemmPerLinearWithTheActivationFused) {
  ModelSpec m = qwen3_235b();
  m.moe->activation_clamp = 7.0;
  m.moe->linear_bias = true;
  m.moe->fused_grouped_mlp = true;
  m.moe->rank_capacity_factor = 1.5;
  Parallelism p;
  p.precision = Precision::kMxfp8;
  p.expert = 32;  // 4 local experts
  const std::vector<Op> ops = lower_layer(m, p, LayerKind{true, false});
  int grouped = 0;
  for (const Op& op : ops) {
    const std::string_view name = op.name;
    EXPECT_NE(name, "expert_activation");
    EXPECT_NE(name, "expert_activation_clamp");
    EXPECT_NE(name, "expert_down_bias");
    if (name == "expert_up" || name == "expert_down") {
      ++grouped;
      EXPECT_EQ(op.rounds, 1.0);
      EXPECT_EQ(op.gemm.batch, 4.0);
      EXPECT_DOUBLE_EQ(op.flop, op.gemm.flop());
    }
    if (is_gemm(op, "expert_up", Pass::kForward)) {
      // 4096 tokens x top-8 over the 4 local experts, not the 1.5x the buffers hold.
      EXPECT_EQ(op.gemm.m, 4096.0 * 8.0 / 4.0);
      EXPECT_EQ(op.gemm.n, 2.0 * 1536.0);
    }
  }
  EXPECT_EQ(grouped, 6);  // forward, data and weight gradient of each linear
  // The first input and the second's gradient are cast as the unfused linears cast them; the
  // second input and the first's gradient by the GEMMs' epilogues, where the unfused linears
  // cast them in kernels of their own.
  ModelSpec unfused = m;
  unfused.moe->fused_grouped_mlp = false;
  unfused.moe->rank_capacity_factor = 0.0;
  EXPECT_DOUBLE_EQ(op_bytes(m, p, "expert_up_fp8_cast", Pass::kForward),
                   op_bytes(unfused, p, "expert_up_fp8_cast", Pass::kForward));
  EXPECT_DOUBLE_EQ(op_bytes(m, p, "expert_down_fp8_cast", Pass::kBackwardInput),
                   op_bytes(unfused, p, "expert_down_fp8_cast", Pass::kBackwardInput));
  EXPECT_LT(op_bytes(m, p, "expert_down_fp8_cast", Pass::kForward),
            op_bytes(unfused, p, "expert_down_fp8_cast", Pass::kForward));
  EXPECT_LT(op_bytes(m, p, "expert_up_fp8_cast", Pass::kBackwardInput),
            op_bytes(unfused, p, "expert_up_fp8_cast", Pass::kBackwardInput));
  EXPECT_GT(op_bytes(m, p, "expert_up_fp8_cast", Pass::kForward), 0.0);
  // One local expert's 1000 x 8 rows pad to the kernels' 256-row tiles: 8,192.
  p.expert = 128;
  m.seq_length = 1000;
  for (const Op& op : lower_layer(m, p, LayerKind{true, false})) {
    if (is_gemm(op, "expert_down", Pass::kForward)) {
      EXPECT_EQ(op.gemm.m, 8192.0);
    }
  }
}

// Transformer Engine quantizes a grouped linear's operands expert by expert: an amax, a scale
// and a cast kernel per expert under fp8-cs, one cast per expert under fp8-blockwise, one
// fused multi-tensor cast under delayed fp8; the fused grouped MLP casts each operand once.
TEST(MoeLowering, GroupedLinearCastsLaunchPerExpertKernels) {
  const auto cast_kernels = [](const ModelSpec& m, const Parallelism& p) {
    std::vector<double> kernels;
    for (const Op& op : lower_layer(m, p, LayerKind{true, false})) {
      const std::string_view name = op.name;
      if (name == "expert_up_fp8_cast" || name == "expert_down_fp8_cast")
        kernels.push_back(op.kernels);
    }
    return kernels;
  };
  ModelSpec m = qwen3_235b();
  Parallelism p;
  p.expert = 8;  // 16 local experts
  struct Case {
    Precision precision;
    size_t casts;
    double kernels;
  };
  for (const Case& c : {Case{Precision::kFp8Cs, 4, 48.0}, Case{Precision::kFp8Blockwise, 4, 16.0},
                        Case{Precision::kFp8, 4, 1.0}}) {
    p.precision = c.precision;
    const std::vector<double> kernels = cast_kernels(m, p);
    EXPECT_EQ(kernels.size(), c.casts) << to_string(c.precision);
    for (const double k : kernels)
      EXPECT_EQ(k, c.kernels) << to_string(c.precision);
  }
  p.precision = Precision::kMxfp8;
  m.moe->fused_grouped_mlp = true;
  const std::vector<double> fused = cast_kernels(m, p);
  EXPECT_FALSE(fused.empty());
  for (const double k : fused)
    EXPECT_EQ(k, 1.0);
}

// Unfused rotary embeddings move 12 and 17 times each query and key element where the fused
// kernel moves 2 and 4, on grouped-query and on MLA's rotary parts.
TEST(MoeLowering, UnfusedRopeMovesSixTimesTheFusedTraffic) {
  for (ModelSpec m : {qwen3_235b(), deepseek_v3()}) {
    Parallelism p;
    const double fused = op_bytes(m, p, "rope", Pass::kForward);
    const double fused_backward = op_bytes(m, p, "rope", Pass::kBackwardInput);
    ASSERT_GT(fused, 0.0);
    m.rope_fusion = false;
    EXPECT_DOUBLE_EQ(op_bytes(m, p, "rope", Pass::kForward), 6.0 * fused) << m.name;
    EXPECT_DOUBLE_EQ(op_bytes(m, p, "rope", Pass::kBackwardInput), 4.25 * fused_backward) << m.name;
  }
}

TEST(AllToAll, DeepEpSendsEachTokenOncePerNodeAndRank) {
  MoeSpec moe;
  moe.num_experts = 256;
  moe.top_k = 8;
  EXPECT_DOUBLE_EQ(expert_block_hit_probability(moe, 1), 1.0);
  // 8 blocks of 32 experts: a block is missed when all 8 distinct experts fall in the other 224.
  double miss = 1.0;
  for (int i = 0; i < 8; ++i)
    miss *= (224.0 - i) / (256.0 - i);
  EXPECT_NEAR(expert_block_hit_probability(moe, 8), 1.0 - miss, 1e-12);
  GroupShape ep;
  ep.ranks = 64;
  ep.ranks_per_node = 8;
  ep.nodes = 8;
  const DeepEpShares ungrouped = deepep_shares(moe, ep);
  EXPECT_NEAR(ungrouped.remote_node, 1.0 - miss, 1e-12);
  // One expert per rank: no two copies share a rank.
  moe.num_experts = 64;
  EXPECT_NEAR(deepep_shares(moe, ep).rank, 1.0, 1e-12);
}

// DeepSeek-V3's router (8 groups, the best 4 per token) sends a token to at most 4 of 8 nodes
// when each node holds one group: 4 x 8 / 8 = 4 nodes of 8 copies, a share of 1/2.
TEST(AllToAll, GroupLimitedRoutingReachesAtMostTheGroupsNodes) {
  MoeSpec moe;
  moe.num_experts = 256;
  moe.top_k = 8;
  moe.router_groups = 8;
  moe.router_group_top_k = 4;
  EXPECT_NEAR(expert_block_hit_probability(moe, 8), 0.5, 1e-12);
  GroupShape ep;
  ep.ranks = 64;
  ep.ranks_per_node = 8;
  ep.nodes = 8;
  EXPECT_NEAR(deepep_shares(moe, ep).remote_node, 0.5, 1e-12);
  // Two nodes of four groups each: only a token whose 4 groups all lie on the other node misses.
  EXPECT_NEAR(expert_block_hit_probability(moe, 2), 1.0 - 1.0 / 70.0, 1e-12);
  // A rank inside a group: the group is picked half the time, then 2 of its 32 experts.
  const double in_group = 1.0 - (28.0 / 32.0) * (27.0 / 31.0);
  EXPECT_NEAR(expert_block_hit_probability(moe, 64), 0.5 * in_group, 1e-12);
  // Fewer groups picked never reach more blocks.
  for (int units : {2, 4, 8, 16, 64, 256}) {
    MoeSpec wider = moe;
    wider.router_group_top_k = 8;
    EXPECT_LE(expert_block_hit_probability(moe, units),
              expert_block_hit_probability(wider, units) + 1e-12)
        << units;
  }
}

// DeepEP's NVLink share runs at the cluster's NVLink bandwidth (H800's 200 GB/s per direction,
// or any cluster.intra_node.bandwidth), not the catalog H100's: inside one node it takes 450/200
// as long.
TEST(AllToAll, DeepEpInsideANodeRunsAtTheClustersNvlink) {
  Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                 "/scenarios/deepseek-v3-h100/scenario.json");
  const HardwareProfile profile = io::resolve_profile(s);
  GroupShape ep;
  ep.ranks = 8;
  ep.ranks_per_node = 8;
  ep.nodes = 1;
  MoeSpec uniform;
  uniform.num_experts = 256;
  uniform.top_k = 8;
  const double bytes = 4096.0 * 8.0 * 7168.0 * 2.0;
  const auto time_s = [&](double nvlink) {
    s.cluster.intra_node_bandwidth_bytes_per_s = nvlink;
    return all_to_all_time_s(profile, s.cluster, TokenDispatcher::kDeepEp, bytes, ep,
                             deepep_shares(uniform, ep));
  };
  EXPECT_NEAR(time_s(200e9) / time_s(450e9), 450.0 / 200.0, 1e-9);
}

// NVIDIA's Megatron Core MoE report (arXiv 2603.07685, Table 7) measures one dispatch on H100
// with hidden size 7168, 4,096 tokens per rank and 256 experts top-8 at EP8 to EP64. The NCCL
// all-to-all model (NVLink and network shares in sequence) lands within 6% of each; DeepEP's
// (fitted to DeepEP's own H800 figures, routing uniform) within 30% of HybridEP's.
TEST(AllToAll, DispatchTimesNearTheMegatronCoreReportsH100Figures) {
  const Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                       "/scenarios/deepseek-v3-h100/scenario.json");
  const HardwareProfile profile = io::resolve_profile(s);
  const double bytes = 4096.0 * 8.0 * 7168.0 * 2.0;
  struct Published {
    int ranks;
    TokenDispatcher dispatcher;
    double seconds;
  };
  for (const Published p : {Published{64, TokenDispatcher::kAllToAll, 9164e-6},
                            Published{32, TokenDispatcher::kAllToAll, 8059e-6},
                            Published{16, TokenDispatcher::kAllToAll, 5774e-6},
                            Published{8, TokenDispatcher::kAllToAll, 1265e-6},
                            Published{32, TokenDispatcher::kDeepEp, 3064e-6},
                            Published{8, TokenDispatcher::kDeepEp, 661e-6},
                            Published{64, TokenDispatcher::kDeepEp, 4626e-6},
                            Published{16, TokenDispatcher::kDeepEp, 1485e-6}}) {
    GroupShape ep;
    ep.ranks = p.ranks;
    ep.ranks_per_node = s.cluster.gpus_per_node;
    ep.nodes = p.ranks / s.cluster.gpus_per_node;
    ep.nic_bandwidth_per_node_bytes_per_s = s.cluster.node_nic_bandwidth_bytes_per_s();
    MoeSpec uniform;
    uniform.num_experts = 256;
    uniform.top_k = 8;
    const double t =
        all_to_all_time_s(profile, s.cluster, p.dispatcher, bytes, ep, deepep_shares(uniform, ep));
    EXPECT_NEAR(t / p.seconds, 1.0, p.dispatcher == TokenDispatcher::kAllToAll ? 0.06 : 0.3)
        << to_string(p.dispatcher) << " EP" << p.ranks << ": " << t * 1e6 << " us";
  }
}

}  // namespace
}  // namespace capsim
