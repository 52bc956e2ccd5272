#include "models/pipeline_partition.hpp"

#include <gtest/gtest.h>

#include "models/scenario.hpp"

namespace capsim {
namespace {

// GPT-style model: GeLU, biases, LayerNorm, learned positions, tied embeddings; a vocabulary
// that needs no padding on one rank.
ModelSpec gpt(int layers, bool tied) {
  ModelSpec m;
  m.num_layers = layers;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_kv_heads = 16;
  m.ffn_hidden_size = 4096;
  m.seq_length = 1024;
  m.vocab_size = 50304;
  m.tied_embeddings = tied;
  return m;
}

Parallelism stages(int pipeline) {
  Parallelism p;
  p.pipeline = pipeline;
  return p;
}

// Expected boundaries below come from DeepSpeed's partition_uniform / partition_balanced
// (deepspeed/runtime/utils.py) run on the same inputs, and are checked by hand in the comments.

TEST(PipelinePartitionTest, UniformGivesTheFirstPartsTheRemainder) {
  // 35 = 4 x 8 + 3: parts of 9, 9, 9, 8.
  EXPECT_EQ(partition_uniform(35, 4), (std::vector<int>{0, 9, 18, 27, 35}));
  EXPECT_EQ(partition_uniform(7, 3), (std::vector<int>{0, 3, 5, 7}));
  // Fewer items than parts: one each, then empty parts.
  EXPECT_EQ(partition_uniform(3, 4), (std::vector<int>{0, 1, 2, 3, 3}));
}

TEST(PipelinePartitionTest, BalancedMinimisesTheSpreadOfPartSums) {
  EXPECT_EQ(partition_balanced({1, 1, 1, 1}, 2), (std::vector<int>{0, 2, 4}));
  // 5 | 1 1 1 1 | 5: sums 5, 4, 5, spread 1, the least any split reaches.
  EXPECT_EQ(partition_balanced({5, 1, 1, 1, 1, 5}, 3), (std::vector<int>{0, 1, 5, 6}));
  // Zero-weight items at the ends (the casts) join their neighbours: 0 10 | 3 3 3 3 | 1 10 0,
  // sums 10, 12, 11 (spread 2; moving the 1 left gives 10, 13, 10).
  EXPECT_EQ(partition_balanced({0, 10, 3, 3, 3, 3, 1, 10, 0}, 3), (std::vector<int>{0, 2, 6, 9}));
  EXPECT_EQ(partition_balanced({2, 3}, 4), partition_uniform(2, 4));
}

TEST(PipelinePartitionTest, LayerSpecsAreGptModelPipes) {
  const ModelSpec m = gpt(24, true);
  const std::vector<double> w = layer_spec_parameters(m, stages(4));
  ASSERT_EQ(w.size(), 24u + 5u);
  EXPECT_EQ(w[0], 0.0);                               // cast to bf16
  EXPECT_EQ(w[1], 50304.0 * 1024 + 1024.0 * 1024);    // words and learned positions
  EXPECT_EQ(w[2], 12.0 * 1024 * 1024 + 13.0 * 1024);  // one GPT layer: 12h^2 + 13h
  EXPECT_EQ(w[26], 2.0 * 1024);                       // final LayerNorm
  EXPECT_EQ(w[27], w[1]);                             // tied head: the embedding again
  EXPECT_EQ(w[28], 0.0);                              // cast back to fp32
  EXPECT_EQ(layer_spec_parameters(gpt(24, false), stages(4))[27], 50304.0 * 1024);
}

TEST(PipelinePartitionTest, UniformSplitsThirtyLayersOnFourStagesAsDeepSpeed) {
  // 35 specs at 9, 9, 9, 8: stage 0 holds the cast, the embedding and layers 0-6; stage 3
  // layers 25-29, the norm, the head and the cast.
  EXPECT_EQ(deepspeed_stage_layers(gpt(30, true), stages(4), PartitionMethod::kUniform),
            (std::vector<int>{7, 9, 9, 5}));
}

TEST(PipelinePartitionTest, ParametersSplitATiedGptAsDeepSpeed) {
  // The embedding (52.6M) weighs about four layers (12.6M each) and the tied head as much
  // again: 4 + embedding | 8 | 8 | 4 + head, sums 102.9M, 100.8M, 100.8M, 102.9M.
  EXPECT_EQ(deepspeed_stage_layers(gpt(24, true), stages(4), PartitionMethod::kParameters),
            (std::vector<int>{4, 8, 8, 4}));
  EXPECT_EQ(deepspeed_stage_layers(gpt(30, true), stages(4), PartitionMethod::kParameters),
            (std::vector<int>{5, 10, 10, 5}));
}

TEST(PipelinePartitionTest, LayersPerStageFollowsThePartitionMethod) {
  Parallelism p = stages(4);
  p.partition_method = PartitionMethod::kUniform;
  EXPECT_EQ(layers_per_stage(gpt(30, true), p), (std::vector<int>{7, 9, 9, 5}));
  p.stage_layers = {8, 8, 7, 7};  // an explicit split wins
  EXPECT_EQ(layers_per_stage(gpt(30, true), p), (std::vector<int>{8, 8, 7, 7}));
}

}  // namespace
}  // namespace capsim
