// Mixture-of-experts, MLA and the other architecture keys of a scenario: their defaults, what
// they relax, and write -> read round trips over seeded random scenarios.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "tests/io/read_doc.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kTestDataDir;
using capsim::testing::read_doc;

// valid.json (TP 4 x PP 2 x DP 4 with sequence parallelism) with eight experts in every layer.
nlohmann::json moe_doc() {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["model"]["moe"] = {{"num_experts", 8}, {"top_k", 2}, {"ffn_hidden_size", 2048}};
  return doc;
}

TEST(ScenarioMoeTest, DefaultsOfTheMoeAndExpertKeys) {
  const Scenario s = read_doc(moe_doc());
  ASSERT_TRUE(s.model.moe.has_value());
  const MoeSpec& moe = *s.model.moe;
  EXPECT_EQ(moe.num_experts, 8);
  EXPECT_EQ(moe.top_k, 2);
  EXPECT_EQ(moe.ffn_hidden_size, 2048);
  EXPECT_EQ(moe.shared_expert_ffn_hidden_size, 0);
  EXPECT_EQ(moe.first_dense_layers, 0);
  EXPECT_EQ(moe.load_imbalance, 1.0);
  EXPECT_EQ(moe.router_score, RouterScore::kSoftmax);
  EXPECT_EQ(moe.rank_capacity_factor, 0.0);
  EXPECT_EQ(s.parallelism.expert, 1);
  EXPECT_FALSE(s.parallelism.expert_tensor.has_value());
  EXPECT_EQ(s.parallelism.expert_tensor_or_default(), 4);
  EXPECT_EQ(s.parallelism.token_dispatcher, TokenDispatcher::kAllToAll);
  EXPECT_FALSE(s.parallelism.moe_a2a_overlap);
  EXPECT_TRUE(s.parallelism.memory_efficient_permutation);
  EXPECT_FALSE(s.parallelism.activation_input_fp8);
  EXPECT_EQ(s.model.mtp_layers, 0);
  EXPECT_FALSE(s.model.mla.has_value());
  EXPECT_FALSE(s.model.window_attention.has_value());
}

TEST(ScenarioMoeTest, ExpertLayoutKeysRead) {
  nlohmann::json doc = moe_doc();
  doc["parallelism"]["expert"] = 8;
  doc["parallelism"]["expert_tensor"] = 1;
  doc["parallelism"]["token_dispatcher"] = "deepep";
  const Scenario s = read_doc(doc);
  EXPECT_EQ(s.parallelism.expert, 8);
  EXPECT_EQ(s.parallelism.expert_tensor, 1);
  EXPECT_EQ(s.parallelism.expert_data(), 2);  // 16 GPUs per stage over 8 x 1
  EXPECT_EQ(s.parallelism.token_dispatcher, TokenDispatcher::kDeepEp);
}

// An explicit head dimension (Qwen3: 64 heads of 128 on hidden 4096) frees hidden_size from
// splitting into the heads; without it the split is still required.
TEST(ScenarioMoeTest, HeadDimLiftsTheHiddenSplit) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["model"]["num_attention_heads"] = 48;
  doc["model"]["num_kv_heads"] = 8;
  EXPECT_THROW((void)read_doc(doc), io::InputError);
  doc["model"]["head_dim"] = 128;
  const Scenario s = read_doc(doc);
  EXPECT_EQ(s.model.head_dim(), 128);
  EXPECT_EQ(s.model.explicit_head_dim, 128);
}

// MLA: num_kv_heads may be omitted (it equals the heads) or given equal to them; a null
// q_lora_rank means no query compression, as 0 does.
TEST(ScenarioMoeTest, MlaReadsWithoutKeyValueGroups) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["model"].erase("num_kv_heads");
  doc["model"]["mla"] = {{"q_lora_rank", nullptr},
                         {"kv_lora_rank", 512},
                         {"qk_head_dim", 128},
                         {"qk_pos_emb_head_dim", 64},
                         {"v_head_dim", 128}};
  const Scenario s = read_doc(doc);
  ASSERT_TRUE(s.model.mla.has_value());
  EXPECT_EQ(s.model.num_kv_heads, 40);
  EXPECT_EQ(*s.model.mla, (MlaSpec{.q_lora_rank = 0,
                                   .kv_lora_rank = 512,
                                   .qk_head_dim = 128,
                                   .qk_pos_emb_head_dim = 64,
                                   .v_head_dim = 128}));
  doc["model"]["num_kv_heads"] = 40;
  doc["model"]["mla"]["q_lora_rank"] = 1536;
  EXPECT_EQ(read_doc(doc).model.mla->q_lora_rank, 1536);
}

// layer_interval puts the experts on the last of every group of layers after the dense ones
// (40 layers, 2 dense, interval 3: layers 4, 7, ..., 37, and 38 and 39 dense); it is written back
// only when not 1, and an interval beyond the layers after the dense ones is an error.
TEST(ScenarioMoeTest, LayerIntervalPutsExpertsOnTheLastOfEachGroup) {
  nlohmann::json doc = moe_doc();
  doc["model"]["moe"]["first_dense_layers"] = 2;
  doc["model"]["moe"]["layer_interval"] = 3;
  const Scenario s = read_doc(doc);
  std::vector<int> experts;
  for (int layer = 0; layer < s.model.num_layers; ++layer) {
    if (s.model.is_moe_layer(layer))
      experts.push_back(layer);
  }
  ASSERT_EQ(experts.size(), 12U);
  EXPECT_EQ(experts.front(), 4);
  EXPECT_EQ(experts.back(), 37);
  EXPECT_TRUE(s.model.has_dense_ffn_layers());
  EXPECT_EQ(io::scenario_to_json(s).at("model").at("moe").at("layer_interval"), 3);
  EXPECT_FALSE(
      io::scenario_to_json(read_doc(moe_doc())).at("model").at("moe").contains("layer_interval"));
  doc["model"]["moe"]["layer_interval"] = 39;
  EXPECT_EQ(testing::error_of([&] { (void)read_doc(doc); }),
            "doc.json:/model/moe/layer_interval: expected an integer in [1, 38], got 39");
}

// A dense scenario writes none of the new keys, so the outputs of dense inputs keep their bytes.
TEST(ScenarioMoeTest, DenseScenarioWritesNoNewKey) {
  const nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  for (const char* key : {"head_dim", "moe", "mla", "mtp_layers", "window_attention"})
    EXPECT_FALSE(j.at("model").contains(key)) << key;
  for (const char* key : {"expert", "expert_tensor", "token_dispatcher", "moe_a2a_overlap",
                          "memory_efficient_permutation", "activation_input_fp8", "fp8_attention"})
    EXPECT_FALSE(j.at("parallelism").contains(key)) << key;
}

// The shipped mixture-of-experts scenarios read with their published layouts.
TEST(ScenarioMoeTest, ShippedScenariosRead) {
  const std::string dir = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/";
  const Scenario dsv3 = io::load_scenario(dir + "deepseek-v3-h100/scenario.json");
  ASSERT_TRUE(dsv3.model.mla && dsv3.model.moe);
  EXPECT_EQ(dsv3.model.num_kv_heads, 128);
  EXPECT_EQ(dsv3.model.moe->first_dense_layers, 3);
  EXPECT_EQ(dsv3.model.moe->router_score, RouterScore::kSigmoid);
  EXPECT_EQ(dsv3.model.mtp_layers, 1);
  EXPECT_EQ(dsv3.parallelism.expert_data(), 2);  // 2 x 64 GPUs per stage over EP 64 x ETP 1
  EXPECT_TRUE(dsv3.parallelism.moe_a2a_overlap);
  const Scenario qwen3 = io::load_scenario(dir + "qwen3-235b-h100/scenario.json");
  EXPECT_EQ(qwen3.model.head_dim(), 128);
  EXPECT_EQ(qwen3.parallelism.token_dispatcher, TokenDispatcher::kDeepEp);
  const Scenario mixtral = io::load_scenario(dir + "mixtral-8x7b-h100/scenario.json");
  EXPECT_EQ(mixtral.parallelism.expert_tensor_or_default(), 1);
  EXPECT_EQ(mixtral.parallelism.expert_data(), 2);
}

template <class T>
T pick(std::mt19937_64& rnd, const std::vector<T>& values) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rnd)];
}

// A valid scenario with random architecture and expert keys on valid.json's 32 GPUs: TP 2 x
// PP 2 x DP 8 with sequence parallelism, each stage's 16 GPUs folding into EP x ETP.
nlohmann::json random_doc(std::mt19937_64& rnd) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  auto& model = doc["model"];
  auto& par = doc["parallelism"];
  par["tensor"] = 2;
  par["data"] = 8;
  const bool moe = pick(rnd, std::vector<int>{0, 1, 1}) == 1;
  if (pick(rnd, std::vector<int>{0, 1}) == 1) {
    model.erase("num_kv_heads");
    nlohmann::json mla = {{"kv_lora_rank", pick(rnd, std::vector<int>{256, 512})},
                          {"qk_head_dim", 128},
                          {"qk_pos_emb_head_dim", pick(rnd, std::vector<int>{0, 64})},
                          {"v_head_dim", 128}};
    const int q = pick(rnd, std::vector<int>{-1, 0, 1536});  // -1: null
    if (q >= 0)
      mla["q_lora_rank"] = q;
    else
      mla["q_lora_rank"] = nullptr;
    model["mla"] = mla;
  } else if (pick(rnd, std::vector<int>{0, 1}) == 1) {
    model["head_dim"] = pick(rnd, std::vector<int>{64, 128});
  }
  if (pick(rnd, std::vector<int>{0, 1}) == 1)
    model["mtp_layers"] = pick(rnd, std::vector<int>{0, 1});
  if (pick(rnd, std::vector<int>{0, 1}) == 1) {
    model["window_attention"] = {{"size", pick(rnd, std::vector<int>{128, 1024})},
                                 {"every", pick(rnd, std::vector<int>{1, 2})}};
  }
  if (!moe)
    return doc;
  const int experts = pick(rnd, std::vector<int>{8, 16, 64});
  nlohmann::json m = {{"num_experts", experts},
                      {"top_k", pick(rnd, std::vector<int>{1, 2, 8})},
                      {"ffn_hidden_size", pick(rnd, std::vector<int>{1408, 2048})}};
  if (pick(rnd, std::vector<int>{0, 1}) == 1)
    m["shared_expert_ffn_hidden_size"] = pick(rnd, std::vector<int>{0, 2048});
  if (pick(rnd, std::vector<int>{0, 1}) == 1)
    m["first_dense_layers"] = pick(rnd, std::vector<int>{0, 1, 3});
  if (pick(rnd, std::vector<int>{0, 1, 1}) == 0)
    m["layer_interval"] = pick(rnd, std::vector<int>{1, 2, 4});
  if (pick(rnd, std::vector<int>{0, 1}) == 1)
    m["load_imbalance"] = pick(rnd, std::vector<double>{1.0, 1.25, 1.5});
  if (pick(rnd, std::vector<int>{0, 1}) == 1)
    m["router_score"] = pick(rnd, std::vector<std::string>{"softmax", "sigmoid"});
  if (pick(rnd, std::vector<int>{0, 1}) == 1)
    m["rank_capacity_factor"] = pick(rnd, std::vector<double>{0.0, 1.0, 1.5});
  model["moe"] = m;
  const int ep = pick(rnd, std::vector<int>{1, 2, 4, 8});
  if (ep > 1 || pick(rnd, std::vector<int>{0, 1}) == 1)
    par["expert"] = ep;
  const int etp = pick(rnd, std::vector<int>{0, 1, 2});  // 0: unset, the tensor degree (2)
  if (etp > 0)
    par["expert_tensor"] = etp;
  const int expert_ranks = ep * (etp > 0 ? etp : 2);
  const std::string dispatcher =
      expert_ranks > 1 ? pick(rnd, std::vector<std::string>{"alltoall", "allgather", "deepep"})
                       : pick(rnd, std::vector<std::string>{"alltoall", "allgather"});
  if (dispatcher != "alltoall" || pick(rnd, std::vector<int>{0, 1}) == 1)
    par["token_dispatcher"] = dispatcher;
  if (ep > 1 && dispatcher != "allgather" && pick(rnd, std::vector<int>{0, 1}) == 1) {
    par["moe_a2a_overlap"] = true;
    par["schedule"] = "interleaved-1f1b";
    par["virtual_pipeline_stages"] = 2;
  }
  if (pick(rnd, std::vector<int>{0, 1}) == 1)
    par["memory_efficient_permutation"] = false;
  return doc;
}

// Every non-empty set of recompute modules round-trips; the default (core_attn alone) is not
// written back.
TEST(ScenarioMoeTest, RecomputeModulesRoundTrip) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["parallelism"]["tensor"] = 2;
  doc["parallelism"]["data"] = 8;
  doc["parallelism"]["recompute"] = "selective";
  doc["model"].erase("num_kv_heads");
  doc["model"]["mla"] = {{"q_lora_rank", 1536},
                         {"kv_lora_rank", 512},
                         {"qk_head_dim", 128},
                         {"qk_pos_emb_head_dim", 64},
                         {"v_head_dim", 128}};
  doc["model"]["moe"] = {{"num_experts", 8},
                         {"top_k", 2},
                         {"ffn_hidden_size", 2048},
                         {"shared_expert_ffn_hidden_size", 2048},
                         {"first_dense_layers", 1}};
  for (unsigned set = 1; set < (1u << 7); ++set) {
    nlohmann::json modules = nlohmann::json::array();
    for (const RecomputeModule module : kAllRecomputeModules) {
      if ((set & module) != 0)
        modules.push_back(to_string(module));
    }
    doc["parallelism"]["recompute_modules"] = modules;
    SCOPED_TRACE(modules.dump());
    const Scenario s = read_doc(doc);
    EXPECT_EQ(s.parallelism.recompute_modules, set);
    const nlohmann::json written = io::scenario_to_json(s);
    EXPECT_EQ(written["parallelism"].contains("recompute_modules"),
              set != kDefaultRecomputeModules);
    EXPECT_EQ(read_doc(written).parallelism, s.parallelism);
  }
}

// read(write(x)) == x for random scenarios with every new key, and write(read(write(x))) is the
// same JSON.
TEST(ScenarioMoeTest, WriteReadRoundTripsRandomScenarios) {
  std::mt19937_64 rnd(301);
  int moe = 0;
  for (int i = 0; i < 300; ++i) {
    const nlohmann::json doc = random_doc(rnd);
    SCOPED_TRACE(doc.dump());
    const Scenario s = read_doc(doc);
    const nlohmann::json written = io::scenario_to_json(s);
    const Scenario back = read_doc(written);
    EXPECT_EQ(back.model, s.model);
    EXPECT_EQ(back.parallelism, s.parallelism);
    EXPECT_EQ(io::scenario_to_json(back), written);
    moe += s.model.moe ? 1 : 0;
  }
  EXPECT_GT(moe, 100);
  EXPECT_LT(moe, 300);
}

}  // namespace
}  // namespace capsim
