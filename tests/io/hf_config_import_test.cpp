// Hugging Face config.json files (the published ones, tests/data/import/hf/README.md) read as
// models, checked against the models of the shipped scenarios and validation cases.
#include "io/hf_config_import.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/parameter_count.hpp"

#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "tests/io/error_of.hpp"

namespace capsim::io::hf_config_import_test {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(CAPSIM_TEST_DATA_DIR) / "import" / "hf";
const fs::path kSource = fs::path(CAPSIM_SOURCE_DIR);

nlohmann::json config(const std::string& name) {
  return JsonReader::parse_file((kData / name).string());
}

// The model a config gives at the shipped scenarios' 4096-token sequences, named `name`.
ModelSpec imported(const std::string& file, const std::string& name) {
  HfImportOptions o;
  o.name = name;
  o.seq_length = 4096;
  const nlohmann::json model = import_hf_config(config(file), file, o).model;
  return JsonReader::read_document(model, file, [](JsonReader& r) { return read_model(r); });
}

// A config read as a model at `seq_length` tokens, with the JSON pointers of its import notes.
struct ImportedWithNotes {
  ModelSpec model;
  std::vector<std::string> note_pointers;
};

ImportedWithNotes imported_with_notes(const std::string& file, int seq_length) {
  HfImportOptions o;
  o.seq_length = seq_length;
  const HfImport imported = import_hf_config(config(file), file, o);
  ImportedWithNotes out;
  out.model =
      JsonReader::read_document(imported.model, file, [](JsonReader& r) { return read_model(r); });
  for (const auto& n : imported.notes)
    out.note_pointers.push_back(n.pointer);
  return out;
}

ModelSpec scenario_model(const std::string& scenario) {
  return load_scenario((kSource / "scenarios" / scenario / "scenario.json").string()).model;
}

// The model of the first case of scenarios/validation/moe-hopper.json whose model is `name`.
ModelSpec validation_model(const std::string& name) {
  const nlohmann::json cases =
      JsonReader::parse_file((kSource / "scenarios" / "validation" / "moe-hopper.json").string());
  for (const nlohmann::json& c : cases.at("cases")) {
    const nlohmann::json& model = c.at("scenario").at("model");
    if (model.at("name").get<std::string>() == name)
      return JsonReader::read_document(model, "moe-hopper.json",
                                       [](JsonReader& r) { return read_model(r); });
  }
  ADD_FAILURE() << "no validation case of " << name;
  return {};
}

TEST(HfConfigImportTest, DeepSeekV3IsTheShippedScenariosModel) {
  EXPECT_TRUE(imported("deepseek-v3.json", "DeepSeek-V3") == scenario_model("deepseek-v3-h100"));
  EXPECT_TRUE(imported("deepseek-v3.json", "DeepSeek-V3") == validation_model("DeepSeek-V3"));
}

TEST(HfConfigImportTest, MixtralIsTheShippedScenariosModel) {
  EXPECT_TRUE(imported("mixtral-8x7b.json", "Mixtral 8x7B") == scenario_model("mixtral-8x7b-h100"));
}

TEST(HfConfigImportTest, Qwen3MoeAndGptOssAreTheValidationCasesModels) {
  EXPECT_TRUE(imported("qwen3-30b-a3b.json", "Qwen3-30B-A3B") == validation_model("Qwen3-30B-A3B"));
  EXPECT_TRUE(imported("gpt-oss-120b.json", "GPT-OSS-120B") == validation_model("GPT-OSS-120B"));
}

TEST(HfConfigImportTest, Llama31_8B) {
  const ModelSpec m = imported("llama-3.1-8b.json", "Llama-3.1-8B");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden_size, 14336);
  EXPECT_EQ(m.ffn_activation, FfnActivation::kSwiglu);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.explicit_head_dim, 0);
  EXPECT_FALSE(m.moe.has_value());
}

// Nemotron's "relu2" MLP is squared ReLU; Gemma's GeLU-gated MLP (hidden_activation, else the
// older hidden_act) is GeGLU, and Gemma ties its embeddings unless told otherwise.
TEST(HfConfigImportTest, NemotronAndGemmaActivations) {
  nlohmann::json c = config("llama-3.1-8b.json");
  c["architectures"] = {"NemotronForCausalLM"};
  c["hidden_act"] = "relu2";
  EXPECT_EQ(import_hf_config(c, "c.json", {}).model.at("ffn_activation"), "squared-relu");
  c["hidden_act"] = "silu";
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", {}); }),
            "c.json:/hidden_act: capsim imports Nemotron's squared ReLU (\"relu2\"), got "
            "\"silu\"");
  c = config("llama-3.1-8b.json");
  c["architectures"] = {"GemmaForCausalLM"};
  c.erase("tie_word_embeddings");
  c["hidden_act"] = "gelu";
  HfImport gemma = import_hf_config(c, "c.json", {});
  EXPECT_EQ(gemma.model.at("ffn_activation"), "geglu");
  EXPECT_EQ(gemma.model.at("tied_embeddings"), true);
  c["hidden_activation"] = "gelu_pytorch_tanh";
  c["hidden_act"] = "silu";  // the older key, passed over when hidden_activation is given
  EXPECT_EQ(import_hf_config(c, "c.json", {}).model.at("ffn_activation"), "geglu");
  c["hidden_activation"] = "relu";
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", {}); }),
            "c.json:/hidden_activation: capsim imports Gemma's GeLU-gated FFN "
            "(\"gelu_pytorch_tanh\"), got \"relu\"");
}

// Gemma 2 27B: GeGLU, tied embeddings, head_dim 128 (not hidden / heads = 144), 4,096-token
// windows on layers 0, 2, 4, ...; what it adds that capsim does not cost is noted.
TEST(HfConfigImportTest, Gemma2_27B) {
  const ImportedWithNotes g = imported_with_notes("gemma-2-27b.json", 8192);
  const ModelSpec& m = g.model;
  EXPECT_EQ(m.num_layers, 46);
  EXPECT_EQ(m.hidden_size, 4608);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 16);
  EXPECT_EQ(m.explicit_head_dim, 128);
  EXPECT_EQ(m.ffn_hidden_size, 36864);
  EXPECT_EQ(m.ffn_activation, FfnActivation::kGeglu);
  EXPECT_EQ(m.vocab_size, 256000);
  EXPECT_TRUE(m.tied_embeddings);
  ASSERT_TRUE(m.window_attention.has_value());
  EXPECT_EQ(m.window_attention->size, 4096);
  EXPECT_EQ(m.window_attention->every, 2);
  EXPECT_EQ(g.note_pointers,
            (std::vector<std::string>{"/attn_logit_softcapping", "/final_logit_softcapping", ""}));
  // A newer config's layer_types must alternate, sliding first.
  HfImportOptions o;
  o.seq_length = 8192;
  nlohmann::json c = config("gemma-2-27b.json");
  c["layer_types"] = {"full_attention", "sliding_attention"};
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", o); }),
            "c.json:/layer_types/0: capsim models alternating windowed and full layers "
            "(\"sliding_attention\", \"full_attention\", ...); expected "
            "\"sliding_attention\", got \"full_attention\"");
}

// Grok-1: eight GeLU-gated experts of the full FFN width on every layer, top-2, tied
// embeddings; its attention-logit cap and extra norms are noted. A later config of the family
// (num_local_experts, moe_intermediate_size, residual_moe) runs a dense MLP beside the experts.
TEST(HfConfigImportTest, Grok1) {
  const ImportedWithNotes g = imported_with_notes("grok-1.json", 8192);
  const ModelSpec& m = g.model;
  EXPECT_EQ(m.num_layers, 64);
  EXPECT_EQ(m.hidden_size, 6144);
  EXPECT_EQ(m.num_attention_heads, 48);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.ffn_activation, FfnActivation::kGeglu);
  EXPECT_EQ(m.vocab_size, 131072);
  EXPECT_TRUE(m.tied_embeddings);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_experts, 8);
  EXPECT_EQ(m.moe->top_k, 2);
  EXPECT_EQ(m.moe->ffn_hidden_size, 32768);
  EXPECT_EQ(m.moe->shared_expert_ffn_hidden_size, 0);
  EXPECT_EQ(m.moe->first_dense_layers, 0);
  EXPECT_EQ(g.note_pointers, (std::vector<std::string>{"/max_attn_value", ""}));

  HfImportOptions o;
  o.seq_length = 8192;
  nlohmann::json c = config("grok-1.json");
  c["architectures"] = {"Grok1ForCausalLM"};
  c.erase("num_experts");
  c["num_local_experts"] = 8;
  c["moe_intermediate_size"] = 16384;
  c["residual_moe"] = true;
  const nlohmann::json later = import_hf_config(c, "c.json", o).model;
  EXPECT_EQ(later.at("moe").at("ffn_hidden_size"), 16384);
  EXPECT_EQ(later.at("moe").at("shared_expert_ffn_hidden_size"), 32768);
  c["hidden_act"] = "silu";
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", o); }),
            "c.json:/hidden_act: capsim imports Grok-1's GeLU-gated FFN "
            "(\"gelu_pytorch_tanh\"), got \"silu\"");
}

// GLM-4.5: DeepSeek-V3's expert keys with grouped-query attention (head_dim 128, not hidden /
// heads), sigmoid routing without a scoring_func key, three dense layers first and one MTP
// layer; its attention biases and query-key norms are noted.
TEST(HfConfigImportTest, Glm45) {
  const ImportedWithNotes g = imported_with_notes("glm-4.5.json", 4096);
  const ModelSpec& m = g.model;
  EXPECT_EQ(m.num_layers, 92);
  EXPECT_EQ(m.hidden_size, 5120);
  EXPECT_EQ(m.num_attention_heads, 96);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.explicit_head_dim, 128);
  EXPECT_FALSE(m.mla.has_value());
  EXPECT_EQ(m.ffn_hidden_size, 12288);
  EXPECT_EQ(m.mtp_layers, 1);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_experts, 160);
  EXPECT_EQ(m.moe->top_k, 8);
  EXPECT_EQ(m.moe->ffn_hidden_size, 1536);
  EXPECT_EQ(m.moe->shared_expert_ffn_hidden_size, 1536);
  EXPECT_EQ(m.moe->first_dense_layers, 3);
  EXPECT_EQ(m.moe->router_score, RouterScore::kSigmoid);
  EXPECT_EQ(g.note_pointers, (std::vector<std::string>{"/attention_bias", "/use_qk_norm"}));
}

// Qwen's decoder_sparse_step puts experts where (layer + 1) is a multiple of it: capsim's
// layer_interval after a dense prefix of whole groups; a prefix that is not is an error.
TEST(HfConfigImportTest, QwenSparseStepIsTheLayerInterval) {
  nlohmann::json c = config("qwen3-30b-a3b.json");
  c["decoder_sparse_step"] = 2;
  c["mlp_only_layers"] = {0, 1};
  HfImportOptions o;
  o.seq_length = 4096;
  const nlohmann::json moe = import_hf_config(c, "c.json", o).model.at("moe");
  EXPECT_EQ(moe.at("first_dense_layers"), 2);
  EXPECT_EQ(moe.at("layer_interval"), 2);
  c["mlp_only_layers"] = {0};
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", o); }),
            "c.json:/decoder_sparse_step: capsim puts experts on the last of every "
            "decoder_sparse_step layers after the dense ones, which here (1) are not whole "
            "groups of 2");
}

// Llama 4 Maverick's multimodal config: the text model of text_config, experts of 8192 with a
// shared one on every other layer and dense layers of intermediate_size_mlp (16384): Meta's
// 400B total and 17B active parameters. Its chunked attention is full attention at sequences up
// to its 8192-token chunk and noted beyond.
TEST(HfConfigImportTest, Llama4Maverick) {
  const ImportedWithNotes g = imported_with_notes("llama-4-maverick.json", 8192);
  const ModelSpec& m = g.model;
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.ffn_hidden_size, 16384);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_experts, 128);
  EXPECT_EQ(m.moe->top_k, 1);
  EXPECT_EQ(m.moe->ffn_hidden_size, 8192);
  EXPECT_EQ(m.moe->shared_expert_ffn_hidden_size, 8192);
  EXPECT_EQ(m.moe->layer_interval, 2);
  EXPECT_EQ(m.moe->router_score, RouterScore::kSigmoid);
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_NEAR(total_parameters(m) / 1e9, 400.0, 2.0);
  EXPECT_NEAR(active_parameters(m) / 1e9, 17.0, 0.5);
  EXPECT_EQ(g.note_pointers, (std::vector<std::string>{"/text_config/use_qk_norm"}));
  EXPECT_EQ(
      imported_with_notes("llama-4-maverick.json", 16384).note_pointers,
      (std::vector<std::string>{"/text_config/use_qk_norm", "/text_config/attention_chunk_size"}));
}

TEST(HfConfigImportTest, WithoutSeqLengthTheModelSaysSo) {
  const HfImport m = import_hf_config(config("llama-3.1-8b.json"), "c.json", {});
  EXPECT_FALSE(m.model.contains("seq_length"));
  EXPECT_EQ(m.model.at("name"), "LlamaForCausalLM");
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_EQ(describe_problem(m.notes.front()),
            "c.json:/max_position_embeddings: the model has no seq_length: "
            "max_position_embeddings (131072) is the longest context, not the training "
            "sequence; give --seq-length or add model.seq_length");
}

// Mistral 7B v0.1 windows every layer at 4096 tokens: at 4096-token sequences, no window.
TEST(HfConfigImportTest, WindowsAtLeastTheSequenceAreDropped) {
  nlohmann::json c = config("mixtral-8x7b.json");
  c["architectures"] = {"MistralForCausalLM"};
  c["sliding_window"] = 4096;
  HfImportOptions o;
  o.seq_length = 8192;
  EXPECT_EQ(import_hf_config(c, "c.json", o).model.at("window_attention"),
            (nlohmann::json{{"size", 4096}, {"every", 1}}));
  o.seq_length = 4096;
  const HfImport at_window = import_hf_config(c, "c.json", o);
  EXPECT_FALSE(at_window.model.contains("window_attention"));
  ASSERT_EQ(at_window.notes.size(), 1u);
  EXPECT_EQ(describe_problem(at_window.notes.front()),
            "c.json:/sliding_window: the window (4096 tokens) is not below --seq-length (4096): "
            "every layer attends its whole sequence, so the model has no window_attention");
}

TEST(HfConfigImportTest, BadConfigsAreNamed) {
  nlohmann::json c = config("llama-3.1-8b.json");
  c["architectures"] = {"BertModel"};
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", {}); }),
            "c.json:/architectures/0: architectures: capsim imports LlamaForCausalLM, "
            "MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
            "Qwen3MoeForCausalLM, DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, "
            "GptOssForCausalLM, NemotronForCausalLM, GemmaForCausalLM, Gemma2ForCausalLM, "
            "Grok1ModelForCausalLM, Grok1ForCausalLM, Glm4MoeForCausalLM, "
            "Llama4ForConditionalGeneration, Llama4ForCausalLM, got \"BertModel\"");
  c = config("llama-3.1-8b.json");
  c.erase("hidden_size");
  EXPECT_NE(testing::error_of([&] {
              (void)import_hf_config(c, "c.json", {});
            }).find("c.json:/hidden_size: missing"),
            std::string::npos);
  c = config("llama-3.1-8b.json");
  c["hidden_act"] = "gelu";
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", {}); }),
            "c.json:/hidden_act: capsim imports SiLU-gated FFNs (\"silu\"), got \"gelu\"");
  c = config("qwen3-30b-a3b.json");
  c["use_sliding_window"] = true;
  EXPECT_NE(testing::error_of([&] {
              (void)import_hf_config(c, "c.json", {});
            }).find("c.json:/use_sliding_window: windows the layers from max_window_layers"),
            std::string::npos);
  c = config("qwen3-30b-a3b.json");
  c["mlp_only_layers"] = {0, 2};
  EXPECT_EQ(testing::error_of([&] { (void)import_hf_config(c, "c.json", {}); }),
            "c.json:/mlp_only_layers/1: capsim models dense layers first (0, 1, ...), then "
            "expert layers; expected 1, got 2");
  c = config("gpt-oss-120b.json");
  c["layer_types"][3] = "sliding_attention";
  EXPECT_NE(testing::error_of([&] {
              (void)import_hf_config(c, "c.json", {});
            }).find("c.json:/layer_types/3: capsim models alternating"),
            std::string::npos);
  c = config("deepseek-v3.json");
  c["num_attention_heads"] = "128";
  EXPECT_NE(testing::error_of([&] {
              (void)import_hf_config(c, "c.json", {});
            }).find("c.json:/num_attention_heads: expected an integer"),
            std::string::npos);
}

}  // namespace
}  // namespace capsim::io::hf_config_import_test
