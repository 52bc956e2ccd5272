#include "models/recompute_modules.hpp"

#include <string_view>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/datasheet_profile.hpp"
#include "models/memory_model.hpp"
#include "models/workload.hpp"

#include "estimate/iteration_model.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

// A Llama-like dense layer: bf16, SwiGLU, no TP, so each term's bytes are plain.
ModelSpec dense_model() {
  ModelSpec m;
  m.num_layers = 4;
  m.hidden_size = 1024;
  m.num_attention_heads = 8;
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 4096;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 2048;
  m.vocab_size = 32000;
  m.dropout = false;
  return m;
}

Parallelism selective(unsigned modules) {
  Parallelism p;
  p.global_batch_size = 1;
  p.recompute = Recompute::kSelective;
  p.recompute_modules = modules;
  return p;
}

TEST(RecomputeModules, NamesRoundTrip) {
  for (const RecomputeModule module : kAllRecomputeModules)
    EXPECT_EQ(recompute_module_from_string(to_string(module)), module);
  EXPECT_FALSE(recompute_module_from_string("attention").has_value());
  EXPECT_EQ(selective(kRecomputeMoe).replayed_modules(), unsigned{kRecomputeMoe});
  Parallelism none = selective(kRecomputeMoe);
  none.recompute = Recompute::kNone;
  EXPECT_EQ(none.replayed_modules(), 0u);
}

// layernorm drops the two norm outputs (2sbh, bf16); mlp drops SwiGLU's 2f-wide gate/up output
// and the f-wide product (3sbf, bf16): Korthikanti et al. 2022 §4.1's terms.
TEST(RecomputeModules, DenseModulesDropTheirTerms) {
  const ModelSpec m = dense_model();
  const double sb = 2048.0;
  const auto bytes = [&](unsigned modules) {
    return activation_bytes_per_layer(m, selective(modules), AttentionMemory::kFlash);
  };
  const double base = bytes(kRecomputeCoreAttention);
  EXPECT_DOUBLE_EQ(base - bytes(kRecomputeCoreAttention | kRecomputeLayernorm),
                   2.0 * 2.0 * sb * 1024.0);
  EXPECT_DOUBLE_EQ(base - bytes(kRecomputeCoreAttention | kRecomputeMlp), 3.0 * 2.0 * sb * 4096.0);
  // Without core_attn, FlashAttention keeps its output as under no recompute.
  Parallelism none;
  none.global_batch_size = 1;
  EXPECT_DOUBLE_EQ(bytes(kRecomputeLayernorm) + 2.0 * 2.0 * sb * 1024.0,
                   activation_bytes_per_layer(m, none, AttentionMemory::kFlash));
}

// The lowering tags each op with the modules that replay it.
TEST(RecomputeModules, LoweringTagsTheReplayedOps) {
  ModelSpec m = dense_model();
  m.mla = MlaSpec{512, 256, 64, 32, 64};
  m.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 512};
  m.moe->shared_expert_ffn_hidden_size = 512;
  const auto tagged = [](const std::vector<Op>& ops, RecomputeModule module) {
    std::vector<std::string_view> names;
    for (const Op& op : ops) {
      if (op.pass == Pass::kForward && (op.recompute_modules & module) != 0)
        names.emplace_back(op.name);
    }
    return names;
  };
  const std::vector<Op> moe_layer = lower_layer(m, selective(0), LayerKind{true, false});
  using Names = std::vector<std::string_view>;
  EXPECT_EQ(tagged(moe_layer, kRecomputeMlaUpProjection), (Names{"q_up", "kv_up", "rope"}));
  EXPECT_EQ(tagged(moe_layer, kRecomputeLayernorm), (Names{"norm1", "norm2"}));
  EXPECT_EQ(tagged(moe_layer, kRecomputeCoreAttention), (Names{"attention"}));
  EXPECT_EQ(tagged(moe_layer, kRecomputeMoeActivation), (Names{"expert_activation"}));
  EXPECT_EQ(tagged(moe_layer, kRecomputeSharedExperts),
            (Names{"shared_up", "shared_activation", "shared_down"}));
  const Names moe = tagged(moe_layer, kRecomputeMoe);
  EXPECT_EQ(moe.front(), "router");
  EXPECT_EQ(moe.back(), "shared_down");
  EXPECT_TRUE(tagged(moe_layer, kRecomputeMlp).empty());
  const std::vector<Op> dense_layer = lower_layer(m, selective(0), LayerKind{});
  EXPECT_EQ(tagged(dense_layer, kRecomputeMlp), (Names{"mlp_up", "activation", "mlp_down"}));
}

// Replaying more of a MoE layer stores less: moe drops what moe_act drops and more.
TEST(RecomputeModules, MoeModulesStoreLess) {
  ModelSpec m = dense_model();
  m.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 1024};
  const GpuSpec gpu{};
  const auto activations = [&](unsigned modules) {
    return estimate_memory(m, selective(modules), gpu).stages.front().activations_bytes;
  };
  const double attention = activations(kRecomputeCoreAttention);
  const double act = activations(kRecomputeCoreAttention | kRecomputeMoeActivation);
  const double whole = activations(kRecomputeCoreAttention | kRecomputeMoe);
  EXPECT_LT(act, attention);
  EXPECT_LT(whole, act);
  EXPECT_GT(whole, 0.0);
}

// The iteration model replays the tagged forward kernels, and the moe module's dispatch and
// combine as well.
TEST(RecomputeModules, IterationReplaysTheModulesForwardAndTheirExchanges) {
  Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                 "/scenarios/mixtral-8x7b-h100/scenario.json");
  s.parallelism.recompute = Recompute::kSelective;
  const HardwareProfile profile = datasheet_profile(s.cluster.gpu, s.cluster);
  const auto chunk = [&](unsigned modules) {
    s.parallelism.recompute_modules = modules;
    return estimate::compute_iteration_costs(s, profile).stages.front().chunks.front();
  };
  const ChunkCosts attention = chunk(kRecomputeCoreAttention);
  const ChunkCosts with_moe = chunk(kRecomputeCoreAttention | kRecomputeMoe);
  EXPECT_GT(with_moe.recompute_s, attention.recompute_s);
  EXPECT_LT(with_moe.recompute_s, attention.forward_compute_s);
  EXPECT_NEAR(with_moe.backward_ep_comm_s - attention.backward_ep_comm_s,
              attention.forward_ep_comm_s, 1e-12);
  EXPECT_DOUBLE_EQ(with_moe.forward_compute_s, attention.forward_compute_s);
}

}  // namespace
}  // namespace capsim
