// The layout rules as a pure function: each rule's pointer and message, their order, every
// problem of a layout with several, and the message-free rule set agreeing with them.
#include "estimate/layout_rules.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace capsim::estimate {
namespace {

ModelSpec model() {
  ModelSpec m;
  m.num_layers = 24;
  m.hidden_size = 2048;
  m.num_attention_heads = 16;
  m.num_kv_heads = 16;
  m.ffn_hidden_size = 8192;
  m.seq_length = 2048;
  m.vocab_size = 51200;
  return m;
}

// The same model with eight experts of width 1536 in every layer but the first.
ModelSpec moe_model() {
  ModelSpec m = model();
  m.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 1536, .first_dense_layers = 1};
  return m;
}

// Nodes of 8 GPUs (two unless told) with or without fp8 tensor cores; nothing else of the GPU
// matters to the rules.
ClusterSpec cluster(bool fp8 = false, int num_nodes = 2) {
  ClusterSpec c;
  c.gpu.name = "A100-SXM4-80GB";
  c.gpu.architecture = "ampere";
  c.gpu.peak_fp8_flop_per_s = fp8 ? 1e15 : 0.0;
  c.gpus_per_node = 8;
  c.num_nodes = num_nodes;
  return c;
}

// TP 8 x PP 2 on 16 GPUs, 8 micro-batches: breaks no rule.
Parallelism valid() {
  Parallelism p;
  p.tensor = 8;
  p.pipeline = 2;
  p.data = 1;
  p.global_batch_size = 8;
  return p;
}

// TP 2 x PP 2 x DP 4 on 16 GPUs with EP 4 (expert tensor 2, the default): each stage's 8 GPUs
// fold into 4 x 2 expert ranks. Breaks no rule of moe_model().
Parallelism moe_valid() {
  Parallelism p;
  p.tensor = 2;
  p.pipeline = 2;
  p.data = 4;
  p.sequence_parallel = true;
  p.expert = 4;
  p.global_batch_size = 8;
  return p;
}

// moe_valid() interleaved over 2 virtual stages with the all-to-all overlap.
Parallelism a2a_overlap_valid() {
  Parallelism p = moe_valid();
  p.schedule = Schedule::kInterleaved;
  p.virtual_pipeline_stages = 2;
  p.moe_a2a_overlap = true;
  return p;
}

std::vector<LayoutProblem> problems(const Parallelism& p, const ModelSpec& m = model(),
                                    bool fp8 = false, int num_nodes = 2) {
  return layout_problems(m, cluster(fp8, num_nodes), p);
}

TEST(LayoutRulesTest, ValidLayoutHasNoProblem) {
  EXPECT_TRUE(problems(valid()).empty());
  EXPECT_TRUE(broken_layout_rules(model(), cluster(false), valid()).empty());
  EXPECT_TRUE(problems(moe_valid(), moe_model()).empty());
  EXPECT_TRUE(problems(a2a_overlap_valid(), moe_model()).empty());
}

// Transformer Engine's fused grouped MLP runs on Blackwell in mxfp8 or nvfp4 with expert tensor
// parallelism 1: each missing condition is the rule's one problem, pointing at the model's key.
TEST(LayoutRulesTest, FusedGroupedMlpNeedsBlackwellBlockScalingAndNoExpertTensor) {
  ModelSpec m = moe_model();
  m.moe->fused_grouped_mlp = true;
  ClusterSpec c = cluster(true);
  c.gpu.name = "B200-SXM-180GB";
  c.gpu.architecture = "blackwell";
  Parallelism p = moe_valid();
  p.expert_tensor = 1;
  p.precision = Precision::kMxfp8;
  EXPECT_TRUE(layout_problems(m, c, p).empty());
  const auto expect_only = [&](const std::string& problem) {
    const std::vector<LayoutProblem> found = layout_problems(m, c, p);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].rule, LayoutRule::kFusedGroupedMlp);
    EXPECT_EQ(found[0].pointer, "/model/moe/fused_grouped_mlp");
    EXPECT_EQ(found[0].message,
              "moe.fused_grouped_mlp (Transformer Engine's CuTe DSL grouped MLP) " + problem);
  };
  p.expert_tensor = 2;
  expect_only("needs expert_tensor 1, got 2");
  p.expert_tensor = 1;
  p.precision = Precision::kFp8Cs;
  expect_only("quantizes in mxfp8 or nvfp4; precision is \"fp8-cs\"");
  p.precision = Precision::kMxfp8;
  c.gpu.name = "H100-SXM5-80GB";
  c.gpu.architecture = "hopper";
  EXPECT_TRUE(broken_layout_rules(m, c, p).contains(LayoutRule::kFusedGroupedMlp));
  p.precision = Precision::kBf16;
  expect_only("runs on Blackwell GPUs only; cluster.gpu H100-SXM5-80GB is hopper");
}

// DualPipeV's stage 0 may hold a single layer (its chunk 1 then holds the head alone, as a
// Megatron split's loss chunk may); every other stage needs a layer in each of its two chunks.
TEST(LayoutRulesTest, DualPipeVLetsTheHeadChunkStandAlone) {
  Parallelism p = valid();
  p.schedule = Schedule::kDualPipeV;
  p.virtual_pipeline_stages = 2;
  EXPECT_TRUE(problems(p).empty());
  p.stage_layers = {1, 23};
  EXPECT_TRUE(problems(p).empty());
  p.stage_layers = {23, 1};
  const std::vector<LayoutProblem> found = problems(p);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].pointer, "/parallelism/stage_layers/1");
  p.schedule = Schedule::kInterleaved;
  p.stage_layers = {1, 23};
  EXPECT_EQ(problems(p).size(), 1u);
}

struct RuleCase {
  const char* name;
  Parallelism parallelism;
  ModelSpec model;
  LayoutRule rule;
  const char* pointer;
  const char* message;
  int num_nodes = 2;
};

// Each mixture-of-experts rule broken alone, from moe_valid() or a2a_overlap_valid().
std::vector<RuleCase> moe_rule_cases() {
  std::vector<RuleCase> out;
  const auto add = [&](const char* name, Parallelism base, auto change, LayoutRule rule,
                       const char* pointer, const char* message, int num_nodes = 2) {
    RuleCase c{name, base, moe_model(), rule, pointer, message, num_nodes};
    change(c.parallelism, c.model);
    out.push_back(c);
  };
  add(
      "RecomputeModuleMla", moe_valid(),
      [](Parallelism& p, ModelSpec&) {
        p.recompute = Recompute::kSelective;
        p.recompute_modules = kRecomputeCoreAttention | kRecomputeMlaUpProjection;
      },
      LayoutRule::kRecomputeModulePresent, "/parallelism/recompute_modules",
      "recompute_modules names \"mla_up_proj\", but the model has no latent attention "
      "(model.mla)");
  add(
      "RecomputeModuleSharedExperts", moe_valid(),
      [](Parallelism& p, ModelSpec&) {
        p.recompute = Recompute::kSelective;
        p.recompute_modules = kRecomputeSharedExperts;
      },
      LayoutRule::kRecomputeModulePresent, "/parallelism/recompute_modules",
      "recompute_modules names \"shared_experts\", but the model has no shared expert "
      "(moe.shared_expert_ffn_hidden_size)");
  add(
      "RecomputeModuleMlpWithoutDenseLayers", moe_valid(),
      [](Parallelism& p, ModelSpec& m) {
        m.moe->first_dense_layers = 0;
        p.recompute = Recompute::kSelective;
        p.recompute_modules = kRecomputeMlp;
      },
      LayoutRule::kRecomputeModulePresent, "/parallelism/recompute_modules",
      "recompute_modules names \"mlp\", but the model has no dense MLP layers (every layer is a "
      "mixture of experts)");
  add(
      "SharedExpertTensor", moe_valid(),
      [](Parallelism&, ModelSpec& m) { m.moe->shared_expert_ffn_hidden_size = 1025; },
      LayoutRule::kTensorSplit, "/parallelism/tensor",
      "moe.shared_expert_ffn_hidden_size (1025) is not divisible by tensor (2)");
  add(
      "ExpertSplit", moe_valid(), [](Parallelism&, ModelSpec& m) { m.moe->num_experts = 6; },
      LayoutRule::kExpertSplit, "/parallelism/expert",
      "moe.num_experts (6) is not divisible by expert (4): every expert-parallel rank holds as "
      "many experts");
  add(
      "ExpertTensorSplitByDefault", moe_valid(),
      [](Parallelism&, ModelSpec& m) { m.moe->ffn_hidden_size = 1535; },
      LayoutRule::kExpertTensorSplit, "/parallelism/tensor",
      "moe.ffn_hidden_size (1535) is not divisible by expert_tensor (2, the default: tensor)");
  add(
      "ExpertTensorSplit", moe_valid(),
      [](Parallelism& p, ModelSpec& m) {
        p.expert = 2;
        p.expert_tensor = 4;
        m.moe->ffn_hidden_size = 1538;
      },
      LayoutRule::kExpertTensorSplit, "/parallelism/expert_tensor",
      "moe.ffn_hidden_size (1538) is not divisible by expert_tensor (4)");
  add(
      "ExpertFolding", moe_valid(), [](Parallelism& p, ModelSpec&) { p.expert = 8; },
      LayoutRule::kExpertFolding, "/parallelism/expert",
      "expert (8) x expert_tensor (2, the default: tensor) = 16 does not divide tensor x context "
      "x data (8): the expert layers fold onto each stage's GPUs");
  add(
      "ExpertTensorTilesNodes", moe_valid(),
      [](Parallelism& p, ModelSpec&) {
        p.tensor = 1;
        p.pipeline = 1;
        p.data = 24;
        p.sequence_parallel = false;
        p.global_batch_size = 24;
        p.expert = 8;
        p.expert_tensor = 3;
      },
      LayoutRule::kExpertTensorTilesNodes, "/parallelism/expert_tensor",
      "expert_tensor (3) must divide gpus_per_node (8) or be a multiple of it", /*num_nodes=*/3);
  add(
      "ExpertNeedsSequenceParallel", moe_valid(),
      [](Parallelism& p, ModelSpec&) { p.sequence_parallel = false; },
      LayoutRule::kExpertNeedsSequenceParallel, "/parallelism/sequence_parallel",
      "expert (4) with tensor (2) needs sequence_parallel true (Megatron-Core: \"When using "
      "expert parallelism and tensor parallelism, sequence parallelism must be used\")");
  add(
      "ExpertPrecision", moe_valid(),
      [](Parallelism& p, ModelSpec&) { p.precision = Precision::kFp16; },
      LayoutRule::kExpertPrecision, "/parallelism/precision",
      "expert (4) does not train in precision \"fp16\" (Megatron-LM: \"Expert parallelism is "
      "not supported with fp16 training\"); use \"bf16\"");
  add(
      "DeepEpNeedsExpertRanks", moe_valid(),
      [](Parallelism& p, ModelSpec&) {
        p.expert = 1;
        p.expert_tensor = 1;
        p.token_dispatcher = TokenDispatcher::kDeepEp;
      },
      LayoutRule::kDeepEpNeedsExpertRanks, "/parallelism/token_dispatcher",
      "token_dispatcher \"deepep\" exchanges tokens between expert ranks; it needs expert x "
      "expert_tensor > 1 (Megatron-Core: \"Flex token dispatcher requires TPxEP > 1\")");
  add(
      "A2aOverlapNeedsExpert", a2a_overlap_valid(),
      [](Parallelism& p, ModelSpec&) { p.expert = 1; }, LayoutRule::kA2aOverlapNeedsExpert,
      "/parallelism/moe_a2a_overlap",
      "moe_a2a_overlap hides the expert-parallel all-to-alls; it needs expert > 1");
  add(
      "A2aOverlapDispatcher", a2a_overlap_valid(),
      [](Parallelism& p, ModelSpec&) { p.token_dispatcher = TokenDispatcher::kAllGather; },
      LayoutRule::kA2aOverlapDispatcher, "/parallelism/token_dispatcher",
      "moe_a2a_overlap needs token_dispatcher \"alltoall\" or \"deepep\", not \"allgather\"");
  add(
      "A2aOverlapRecompute", a2a_overlap_valid(),
      [](Parallelism& p, ModelSpec&) { p.recompute = Recompute::kFull; },
      LayoutRule::kA2aOverlapRecompute, "/parallelism/recompute",
      "moe_a2a_overlap does not run with recompute \"full\" (Megatron-Core: \"disable full "
      "recomputation when enabling overlap_moe_expert_parallel_comm\")");
  add(
      "A2aOverlapNeedsInterleaving", moe_valid(),
      [](Parallelism& p, ModelSpec&) { p.moe_a2a_overlap = true; },
      LayoutRule::kA2aOverlapNeedsInterleaving, "/parallelism/virtual_pipeline_stages",
      "moe_a2a_overlap with pipeline (2) overlaps the micro-batches of interleaved virtual "
      "stages; it needs virtual_pipeline_stages > 1 (or schedule \"dualpipev\")");
  add(
      "FusedGroupedMlp", moe_valid(),
      [](Parallelism&, ModelSpec& m) { m.moe->fused_grouped_mlp = true; },
      LayoutRule::kFusedGroupedMlp, "/model/moe/fused_grouped_mlp",
      "moe.fused_grouped_mlp (Transformer Engine's CuTe DSL grouped MLP) runs on Blackwell GPUs "
      "only; cluster.gpu A100-SXM4-80GB is ampere");
  add(
      "A2aOverlapMtp", a2a_overlap_valid(), [](Parallelism&, ModelSpec& m) { m.mtp_layers = 2; },
      LayoutRule::kA2aOverlapMtp, "/parallelism/moe_a2a_overlap",
      "moe_a2a_overlap runs with at most one MTP layer, and mtp_layers is 2");
  return out;
}

std::vector<RuleCase> one_rule_cases() {
  std::vector<RuleCase> out;
  const auto add = [&](const char* name, auto change, LayoutRule rule, const char* pointer,
                       const char* message) {
    RuleCase c{name, valid(), model(), rule, pointer, message};
    change(c.parallelism, c.model);
    out.push_back(c);
  };
  add(
      "GpuCount", [](Parallelism& p, ModelSpec&) { p.pipeline = 1; }, LayoutRule::kGpuCount,
      "/parallelism/data",
      "tensor (8) x pipeline (1) x data (1) x context (1) = 8 must equal gpus_per_node (8) x "
      "num_nodes (2) = 16");
  add(
      "KvHeads", [](Parallelism&, ModelSpec& m) { m.num_kv_heads = 4; }, LayoutRule::kTensorSplit,
      "/parallelism/tensor", "num_kv_heads (4) is not divisible by tensor (8)");
  add(
      "SequenceParallelNeedsTensor",
      [](Parallelism& p, ModelSpec&) {
        p.tensor = 1;
        p.data = 8;
        p.sequence_parallel = true;
      },
      LayoutRule::kSequenceParallelNeedsTensor, "/parallelism/sequence_parallel",
      "sequence_parallel needs tensor > 1");
  add(
      "TpOverlap", [](Parallelism& p, ModelSpec&) { p.tp_comm_overlap = true; },
      LayoutRule::kTpOverlapNeedsSequenceParallel, "/parallelism/tp_comm_overlap",
      "tp_comm_overlap overlaps the sequence-parallel collectives with the GEMMs; it needs "
      "sequence_parallel true (Megatron-LM: \"Tensor parallel communication/GEMM overlap can "
      "happen only when sequence parallelism is enabled\")");
  add(
      "SequenceParallelSplit",
      [](Parallelism& p, ModelSpec& m) {
        p.sequence_parallel = true;
        m.seq_length = 2052;
      },
      LayoutRule::kSequenceParallelSplit, "/parallelism/sequence_parallel",
      "seq_length (2052) is not divisible by tensor x context (8), which sequence parallelism "
      "needs");
  add(
      "Context",
      [](Parallelism& p, ModelSpec& m) {
        p.pipeline = 1;
        p.context = 2;
        m.seq_length = 2050;
      },
      LayoutRule::kContextSplit, "/parallelism/context",
      "seq_length (2050) is not divisible by 2 x context (4), which load-balanced causal CP needs");
  add(
      "Fp8Attention", [](Parallelism& p, ModelSpec&) { p.fp8_attention = true; },
      LayoutRule::kFp8Attention, "/parallelism/fp8_attention",
      "fp8_attention runs the attention core in the fp8 recipe; precision is \"bf16\" "
      "(Megatron-LM: --fp8-dot-product-attention needs --fp8-format)");
  add(
      "Batch", [](Parallelism& p, ModelSpec&) { p.micro_batch_size = 3; }, LayoutRule::kBatchSplit,
      "/parallelism/global_batch_size",
      "global_batch_size (8) is not divisible by micro_batch_size (3) x data (1)");
  add(
      "VirtualStagesNeedInterleaving",
      [](Parallelism& p, ModelSpec&) { p.virtual_pipeline_stages = 2; },
      LayoutRule::kScheduleStages, "/parallelism/schedule",
      "virtual_pipeline_stages > 1 needs schedule \"interleaved-1f1b\" (or 2 with "
      "\"dualpipev\")");
  add(
      "DualPipeVTwoChunks", [](Parallelism& p, ModelSpec&) { p.schedule = Schedule::kDualPipeV; },
      LayoutRule::kScheduleStages, "/parallelism/virtual_pipeline_stages",
      "schedule \"dualpipev\" runs two chunks per stage (the V: stage s holds virtual stages s "
      "and 2 x pipeline - 1 - s); virtual_pipeline_stages is 1, not 2");
  add(
      "DualPipeVMicroBatches",
      [](Parallelism& p, ModelSpec&) {
        p.schedule = Schedule::kDualPipeV;
        p.virtual_pipeline_stages = 2;
        p.global_batch_size = 3;
      },
      LayoutRule::kDualPipeV, "/parallelism/global_batch_size",
      "schedule \"dualpipev\" needs at least 2 x pipeline (4) micro-batches (DualPipeV.step: "
      "num_chunks >= num_ranks * 2); global_batch_size / (micro_batch_size x data) is 3");
  add(
      "DualPipeVZero3",
      [](Parallelism& p, ModelSpec&) {
        p.schedule = Schedule::kDualPipeV;
        p.virtual_pipeline_stages = 2;
        p.zero_stage = 3;
      },
      LayoutRule::kDualPipeV, "/parallelism/zero_stage",
      "schedule \"dualpipev\" with zero_stage 3: capsim does not model ZeRO-3's gathers and "
      "reduce-scatters around the backwards DualPipeV splits; use zero_stage 0 to 2");
  add(
      "InterleavedMicroBatches",
      [](Parallelism& p, ModelSpec&) {
        p.schedule = Schedule::kInterleaved;
        p.virtual_pipeline_stages = 2;
        p.global_batch_size = 3;
      },
      LayoutRule::kInterleavedMicroBatches, "/parallelism/global_batch_size",
      "interleaved-1f1b runs the micro-batches (3) in groups of 2 (pipeline; "
      "microbatch_group_size sets another): the last group (1) must be whole or at least "
      "pipeline (2); microbatch_group_size 3 runs them");
  add(
      "MicroBatchGroupLastGroup",
      [](Parallelism& p, ModelSpec&) {
        p.schedule = Schedule::kInterleaved;
        p.virtual_pipeline_stages = 2;
        p.microbatch_group_size = 7;
      },
      LayoutRule::kInterleavedMicroBatches, "/parallelism/microbatch_group_size",
      "interleaved-1f1b runs the micro-batches (8) in groups of 7: the last group (1) must be "
      "whole or at least pipeline (2); microbatch_group_size 2 runs them");
  add(
      "MicroBatchGroupRange",
      [](Parallelism& p, ModelSpec&) {
        p.schedule = Schedule::kInterleaved;
        p.virtual_pipeline_stages = 2;
        p.microbatch_group_size = 9;
      },
      LayoutRule::kInterleavedMicroBatches, "/parallelism/microbatch_group_size",
      "microbatch_group_size (9) must lie between pipeline (2) and the micro-batch count (8)");
  add(
      "MicroBatchGroupWithoutInterleaving",
      [](Parallelism& p, ModelSpec&) { p.microbatch_group_size = 3; },
      LayoutRule::kInterleavedMicroBatches, "/parallelism/microbatch_group_size",
      "microbatch_group_size needs schedule \"interleaved-1f1b\"");
  add(
      "StageLayersChunk",
      [](Parallelism& p, ModelSpec&) {
        p.schedule = Schedule::kInterleaved;
        p.virtual_pipeline_stages = 2;
        p.stage_layers = {23, 1};
      },
      LayoutRule::kLayerSplit, "/parallelism/stage_layers/1",
      "stage 1 has 1 layers, fewer than virtual_pipeline_stages (2): every chunk needs a layer");
  add(
      "EvenSplit", [](Parallelism&, ModelSpec& m) { m.num_layers = 25; }, LayoutRule::kLayerSplit,
      "/parallelism/pipeline",
      "num_layers (25) is not divisible by pipeline (2) x virtual_pipeline_stages (1), nor is "
      "num_layers + 2 (Megatron's split counting the embedding and the loss as layers); give "
      "stage_layers for an uneven split");
  add(
      "ActivationInputFp8",
      [](Parallelism& p, ModelSpec& m) {
        m.ffn_activation = FfnActivation::kGelu;
        p.activation_input_fp8 = true;
      },
      LayoutRule::kActivationInputFp8, "/parallelism/activation_input_fp8",
      "activation_input_fp8 stores SwiGLU's input in fp8; ffn_activation is \"gelu\" "
      "(Megatron-Core: \"Storing activation input in FP8 is supported only for SwiGLU.\")");
  add(
      "Fp8", [](Parallelism& p, ModelSpec&) { p.precision = Precision::kFp8; },
      LayoutRule::kFp8Support, "/parallelism/precision",
      "precision \"fp8\" needs a GPU with fp8 tensor cores; A100-SXM4-80GB has none");
  // On three nodes, tensor or a stage that neither divides a node nor spans whole ones.
  RuleCase tensor_tiles{"TensorTilesNodes",
                        valid(),
                        model(),
                        LayoutRule::kTensorTilesNodes,
                        "/parallelism/tensor",
                        "tensor (12) must divide gpus_per_node (8) or be a multiple of it",
                        3};
  tensor_tiles.model.num_attention_heads = 12;
  tensor_tiles.model.num_kv_heads = 12;
  tensor_tiles.model.ffn_hidden_size = 8196;
  tensor_tiles.parallelism.tensor = 12;
  tensor_tiles.parallelism.pipeline = 1;
  tensor_tiles.parallelism.data = 2;
  out.push_back(tensor_tiles);
  RuleCase stage_tiles{
      "StageTilesNodes",
      valid(),
      model(),
      LayoutRule::kStageTilesNodes,
      "/parallelism/data",
      "tensor x context x data (12) must divide gpus_per_node (8) or be a multiple of it",
      3};
  stage_tiles.parallelism.tensor = 4;
  stage_tiles.parallelism.data = 3;
  stage_tiles.parallelism.global_batch_size = 12;
  out.push_back(stage_tiles);
  for (RuleCase& c : moe_rule_cases())
    out.push_back(c);
  return out;
}

TEST(LayoutRulesTest, EachRuleNamesItsFieldAndValues) {
  BrokenLayoutRules covered;
  for (const RuleCase& c : one_rule_cases()) {
    const std::vector<LayoutProblem> found = problems(c.parallelism, c.model, false, c.num_nodes);
    ASSERT_EQ(found.size(), 1u) << c.name;
    EXPECT_EQ(found[0].rule, c.rule) << c.name;
    EXPECT_EQ(found[0].pointer, c.pointer) << c.name;
    EXPECT_EQ(found[0].message, c.message) << c.name;
    const BrokenLayoutRules broken =
        broken_layout_rules(c.model, cluster(false, c.num_nodes), c.parallelism);
    EXPECT_TRUE(broken.contains(c.rule)) << c.name;
    covered.add(c.rule);
  }
  for (int r = 0; r < kNumLayoutRules; ++r)
    EXPECT_TRUE(covered.contains(static_cast<LayoutRule>(r))) << "rule " << r << " has no case";
}

// A mixture-of-experts model whose every layer has experts has no dense FFN for tensor to
// split; the experts' width goes by expert_tensor.
TEST(LayoutRulesTest, AllExpertModelHasNoDenseFfnToSplit) {
  ModelSpec m = moe_model();
  m.ffn_hidden_size = 1001;
  EXPECT_EQ(problems(moe_valid(), m).size(), 1u);
  m.moe->first_dense_layers = 0;
  EXPECT_TRUE(problems(moe_valid(), m).empty());
}

TEST(LayoutRulesTest, Fp8RunsOnAGpuWithFp8TensorCores) {
  Parallelism p = valid();
  p.precision = Precision::kFp8;
  EXPECT_TRUE(problems(p, model(), /*fp8=*/true).empty());
  EXPECT_EQ(problems(p, model(), /*fp8=*/false).size(), 1u);
}

TEST(LayoutRulesTest, EveryProblemInTheRulesOrder) {
  Parallelism p = valid();
  p.data = 2;                 // 32 GPUs on 16
  p.micro_batch_size = 3;     // 8 % 6
  p.stage_layers = {11, 12};  // sums to 23
  ModelSpec m = model();
  m.num_attention_heads = 12;  // 12 % 8
  const std::vector<LayoutProblem> found = problems(p, m);
  std::vector<LayoutRule> rules;
  for (const LayoutProblem& f : found)
    rules.push_back(f.rule);
  EXPECT_EQ(rules, (std::vector<LayoutRule>{LayoutRule::kGpuCount, LayoutRule::kTensorSplit,
                                            LayoutRule::kBatchSplit, LayoutRule::kLayerSplit}));
  EXPECT_EQ(found.back().message, "stage_layers sum to 23 but num_layers is 24");
}

// A product beyond int is reported with its true value, and the rules after it still run.
TEST(LayoutRulesTest, ProductsDoNotWrap) {
  Parallelism p = valid();
  p.pipeline = 80581;
  p.data = 13325;
  p.micro_batch_size = 1 << 24;
  const std::vector<LayoutProblem> found = problems(p);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].message,
            "tensor (8) x pipeline (80581) x data (13325) x context (1) = 8589934600 must equal "
            "gpus_per_node (8) x num_nodes (2) = 16");
  EXPECT_EQ(found.back().message, "pipeline (80581) exceeds num_layers (24)");
}

// broken_layout_rules() is layout_problems() without the messages: the same rules, always.
TEST(LayoutRulesTest, RuleSetMatchesTheProblems) {
  std::mt19937_64 rnd(301);
  const auto pick = [&rnd](std::vector<int> values) {
    return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rnd)];
  };
  int invalid = 0;
  for (int i = 0; i < 5000; ++i) {
    Parallelism p;
    p.tensor = pick({1, 2, 3, 4, 8, 16});
    p.pipeline = pick({1, 2, 3, 4, 8, 32});
    p.data = pick({1, 2, 4});
    p.context = pick({1, 2});
    p.micro_batch_size = pick({1, 2, 3});
    p.global_batch_size = pick({8, 12, 16});
    p.virtual_pipeline_stages = pick({1, 2, 3});
    p.schedule = pick({0, 1}) == 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
    p.sequence_parallel = pick({0, 1}) == 1;
    p.tp_comm_overlap = pick({0, 1}) == 1;
    p.precision = pick({0, 1}) == 1 ? Precision::kFp8 : Precision::kBf16;
    if (pick({0, 1}) == 1)
      p.stage_layers = std::vector<int>(static_cast<size_t>(p.pipeline), 24 / p.pipeline);
    ModelSpec m = pick({0, 1}) == 1 ? moe_model() : model();
    m.seq_length = pick({2048, 2050, 2052});
    if (m.moe) {
      m.moe->num_experts = pick({4, 6, 8});
      m.moe->ffn_hidden_size = pick({1536, 1538});
      m.moe->shared_expert_ffn_hidden_size = pick({0, 1024, 1026});
      m.moe->first_dense_layers = pick({0, 1});
      m.mtp_layers = pick({0, 1, 2});
      p.expert = pick({1, 2, 3, 4, 8});
      if (pick({0, 1}) == 1)
        p.expert_tensor = pick({1, 2, 3, 4});
      p.token_dispatcher = static_cast<TokenDispatcher>(pick({0, 1, 2}));
      p.moe_a2a_overlap = pick({0, 1}) == 1;
      p.recompute = pick({0, 1}) == 1 ? Recompute::kFull : Recompute::kNone;
      if (pick({0, 1}) == 1)
        p.precision = Precision::kFp16;
    }
    const bool fp8 = pick({0, 1}) == 1;
    const std::vector<LayoutProblem> found = layout_problems(m, cluster(fp8), p);
    const BrokenLayoutRules broken = broken_layout_rules(m, cluster(fp8), p);
    BrokenLayoutRules expected;
    for (const LayoutProblem& f : found)
      expected.add(f.rule);
    for (int r = 0; r < kNumLayoutRules; ++r) {
      const auto rule = static_cast<LayoutRule>(r);
      EXPECT_EQ(broken.contains(rule), expected.contains(rule)) << i << " rule " << r;
    }
    invalid += found.empty() ? 0 : 1;
  }
  EXPECT_GT(invalid, 1000);
  EXPECT_LT(invalid, 5000);
}

}  // namespace
}  // namespace capsim::estimate
