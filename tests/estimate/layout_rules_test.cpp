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

// Two nodes of 8 GPUs with or without fp8 tensor cores; nothing else of the GPU matters to the
// rules.
ClusterSpec cluster(bool fp8 = false) {
  ClusterSpec c;
  c.gpu.name = "A100-SXM4-80GB";
  c.gpu.peak_fp8_flop_per_s = fp8 ? 1e15 : 0.0;
  c.gpus_per_node = 8;
  c.num_nodes = 2;
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

std::vector<LayoutProblem> problems(const Parallelism& p, const ModelSpec& m = model(),
                                    bool fp8 = false) {
  return layout_problems(m, cluster(fp8), p);
}

TEST(LayoutRulesTest, ValidLayoutHasNoProblem) {
  EXPECT_TRUE(problems(valid()).empty());
  EXPECT_TRUE(broken_layout_rules(model(), cluster(false), valid()).empty());
}

struct RuleCase {
  const char* name;
  Parallelism parallelism;
  ModelSpec model;
  LayoutRule rule;
  const char* pointer;
  const char* message;
};

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
      "Batch", [](Parallelism& p, ModelSpec&) { p.micro_batch_size = 3; }, LayoutRule::kBatchSplit,
      "/parallelism/global_batch_size",
      "global_batch_size (8) is not divisible by micro_batch_size (3) x data (1)");
  add(
      "VirtualStagesNeedInterleaving",
      [](Parallelism& p, ModelSpec&) { p.virtual_pipeline_stages = 2; },
      LayoutRule::kScheduleStages, "/parallelism/schedule",
      "virtual_pipeline_stages > 1 needs schedule \"interleaved-1f1b\"");
  add(
      "InterleavedMicroBatches",
      [](Parallelism& p, ModelSpec&) {
        p.schedule = Schedule::kInterleaved;
        p.virtual_pipeline_stages = 2;
        p.global_batch_size = 3;
      },
      LayoutRule::kInterleavedMicroBatches, "/parallelism/global_batch_size",
      "interleaved-1f1b needs the micro-batch count (3) to be a multiple of pipeline (2)");
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
      "Fp8", [](Parallelism& p, ModelSpec&) { p.precision = Precision::kFp8; },
      LayoutRule::kFp8Support, "/parallelism/precision",
      "precision \"fp8\" needs a GPU with fp8 tensor cores; A100-SXM4-80GB has none");
  return out;
}

TEST(LayoutRulesTest, EachRuleNamesItsFieldAndValues) {
  for (const RuleCase& c : one_rule_cases()) {
    const std::vector<LayoutProblem> found = problems(c.parallelism, c.model);
    ASSERT_EQ(found.size(), 1u) << c.name;
    EXPECT_EQ(found[0].rule, c.rule) << c.name;
    EXPECT_EQ(found[0].pointer, c.pointer) << c.name;
    EXPECT_EQ(found[0].message, c.message) << c.name;
    const BrokenLayoutRules broken = broken_layout_rules(c.model, cluster(false), c.parallelism);
    EXPECT_TRUE(broken.contains(c.rule)) << c.name;
  }
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
    ModelSpec m = model();
    m.seq_length = pick({2048, 2050, 2052});
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
