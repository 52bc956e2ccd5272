// The MLP activations beside GeLU and SwiGLU: squared ReLU (Nemotron-4) costs as GeLU does, GeGLU
// (Gemma) as SwiGLU does; parameter counts pinned to the published ones.
#include <algorithm>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "models/memory_model.hpp"
#include "models/parameter_count.hpp"
#include "models/workload.hpp"

namespace capsim {
namespace {

// Parmar et al. 2024 ("Nemotron-4 15B Technical Report"), Table 1: 32 layers, hidden 6144, 48
// heads, 8 KV heads, 4096 sequence, 256,000 vocabulary, squared-ReLU MLP of 4h, untied.
ModelSpec nemotron4_15b() {
  ModelSpec m;
  m.num_layers = 32;
  m.hidden_size = 6144;
  m.num_attention_heads = 48;
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 4 * 6144;
  m.ffn_activation = FfnActivation::kSquaredRelu;
  m.seq_length = 4096;
  m.vocab_size = 256000;
  m.tied_embeddings = false;
  return m;
}

// Gemma Team 2024 ("Gemma: Open Models Based on Gemini Research and Technology"), Table 1: 7B
// has 28 layers, d_model 3072, 16 heads of 256, GeGLU feed-forward of 2 x 24576, 256,000
// vocabulary (transformers' GemmaConfig), tied embeddings.
ModelSpec gemma_7b() {
  ModelSpec m;
  m.num_layers = 28;
  m.hidden_size = 3072;
  m.num_attention_heads = 16;
  m.num_kv_heads = 16;
  m.explicit_head_dim = 256;
  m.ffn_hidden_size = 24576;
  m.ffn_activation = FfnActivation::kGeglu;
  m.seq_length = 8192;
  m.vocab_size = 256000;
  m.tied_embeddings = true;
  return m;
}

TEST(FfnActivationTest, Nemotron4_15bHasItsPublishedParameters) {
  // "15B": 3.2B embedding and 12.5B non-embedding parameters (Parmar et al. 2024, §2).
  const ModelSpec m = nemotron4_15b();
  const double embedding = 2.0 * 256000 * 6144;  // input embedding and untied output layer
  EXPECT_NEAR(total_parameters(m) / 1e9, 15.6, 0.05);
  EXPECT_NEAR((total_parameters(m) - embedding) / 1e9, 12.5, 0.05);
  EXPECT_NEAR(embedding / 1e9, 3.2, 0.06);
}

TEST(FfnActivationTest, Gemma7bHasItsPublishedParameters) {
  // Gemma Team 2024, Table 2: 7,751,248,896 non-embedding parameters (8.54B in all).
  const ModelSpec m = gemma_7b();
  EXPECT_DOUBLE_EQ(total_parameters(m) - input_embedding_parameters(m), 7751248896.0);
  EXPECT_NEAR(total_parameters(m) / 1e9, 8.54, 0.005);
}

TEST(FfnActivationTest, GatedActivationsHaveThreeMatrices) {
  ModelSpec m = gemma_7b();
  const double geglu = layer_parameters(m);
  m.ffn_activation = FfnActivation::kSwiglu;
  EXPECT_DOUBLE_EQ(layer_parameters(m), geglu);
  m.ffn_activation = FfnActivation::kSquaredRelu;
  EXPECT_DOUBLE_EQ(geglu - layer_parameters(m), 3072.0 * 24576);
  EXPECT_TRUE(is_gated(FfnActivation::kGeglu));
  EXPECT_TRUE(is_gated(FfnActivation::kSwiglu));
  EXPECT_FALSE(is_gated(FfnActivation::kSquaredRelu));
  EXPECT_FALSE(is_gated(FfnActivation::kGelu));
}

TEST(FfnActivationTest, GegluFlopsAreSwigluFlops) {
  ModelSpec m = gemma_7b();
  const double geglu = model_flop_per_token(m);
  m.ffn_activation = FfnActivation::kSwiglu;
  EXPECT_DOUBLE_EQ(model_flop_per_token(m), geglu);
  // Against an ungated MLP of the same width, the gate adds 6 x h x ffn per token and layer.
  m.ffn_activation = FfnActivation::kSquaredRelu;
  EXPECT_NEAR(geglu - model_flop_per_token(m), 28 * 6.0 * 3072 * 24576, 1e-6 * geglu);
}

// Same MLP, other activation: every lowered op (GEMMs, the activation kernel) matches.
void expect_same_ops(const ModelSpec& a, const ModelSpec& b, const Parallelism& p) {
  const std::vector<Op> x = lower_layer(a, p);
  const std::vector<Op> y = lower_layer(b, p);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_STREQ(x[i].name, y[i].name);
    EXPECT_DOUBLE_EQ(x[i].flop, y[i].flop) << x[i].name;
    EXPECT_DOUBLE_EQ(x[i].bytes, y[i].bytes) << x[i].name;
  }
}

TEST(FfnActivationTest, LoweringFollowsTheGatedOrUngatedShape) {
  Parallelism p;
  p.tensor = 4;
  p.sequence_parallel = true;
  ModelSpec geglu = gemma_7b();
  ModelSpec swiglu = geglu;
  swiglu.ffn_activation = FfnActivation::kSwiglu;
  expect_same_ops(geglu, swiglu, p);
  ModelSpec squared = nemotron4_15b();
  squared.dropout = false;
  ModelSpec gelu = squared;
  gelu.ffn_activation = FfnActivation::kGelu;
  gelu.dropout = false;
  // GeLU's GPT conventions add bias kernels; the MLP's GEMMs and activation kernel match.
  const std::vector<Op> g = lower_layer(gelu, p);
  int compared = 0;
  for (const Op& op : lower_layer(squared, p)) {
    const std::string_view name = op.name;
    if (!name.starts_with("mlp_") && name != "activation")
      continue;
    const auto same = std::find_if(
        g.begin(), g.end(), [&](const Op& o) { return name == o.name && o.pass == op.pass; });
    ASSERT_NE(same, g.end()) << name;
    EXPECT_DOUBLE_EQ(op.flop, same->flop) << name;
    EXPECT_DOUBLE_EQ(op.bytes, same->bytes) << name;
    ++compared;
  }
  EXPECT_GE(compared, 3);
}

TEST(FfnActivationTest, StoredActivationsFollowTheGatedOrUngatedShape) {
  Parallelism p;
  p.tensor = 2;
  p.sequence_parallel = true;
  ModelSpec geglu = gemma_7b();
  ModelSpec swiglu = geglu;
  swiglu.ffn_activation = FfnActivation::kSwiglu;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(geglu, p), activation_bytes_per_layer(swiglu, p));
  // Squared ReLU keeps the activation's input and output, f each, as GeLU does; a GLU keeps
  // gate and up (2f) and the output.
  ModelSpec squared = geglu;
  squared.ffn_activation = FfnActivation::kSquaredRelu;
  squared.dropout = false;
  ModelSpec gelu = squared;
  gelu.ffn_activation = FfnActivation::kGelu;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(squared, p), activation_bytes_per_layer(gelu, p));
  const double sb = 8192.0;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(geglu, p) - activation_bytes_per_layer(squared, p),
                   sb * 2.0 * 24576 / 2);
}

}  // namespace
}  // namespace capsim
