#include "io/hf_config_import.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"

namespace capsim::io {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxConfigDim = 1 << 24;

// The architectures capsim imports (config.json "architectures").
const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> kNames = {
      "LlamaForCausalLM",      "MistralForCausalLM",
      "MixtralForCausalLM",    "Qwen2ForCausalLM",
      "Qwen3ForCausalLM",      "Qwen3MoeForCausalLM",
      "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM",
      "GptOssForCausalLM",     "NemotronForCausalLM",
      "GemmaForCausalLM",      "Gemma2ForCausalLM",
      "Grok1ModelForCausalLM", "Grok1ForCausalLM",
      "Glm4MoeForCausalLM",    "Llama4ForConditionalGeneration",
      "Llama4ForCausalLM"};
  return kNames;
}

std::string architecture(JsonReader& r) {
  const std::vector<json> names = r.array("architectures", 1);
  const std::string where = r.pointer_to("architectures") + "/0";
  if (!names.front().is_string()) {
    throw InputError(r.file(), where,
                     "expected an architecture name, got " + describe_json(names.front()));
  }
  std::string arch = names.front().get<std::string>();
  if (std::find(supported_architectures().begin(), supported_architectures().end(), arch) ==
      supported_architectures().end()) {
    throw InputError(r.file(), where,
                     "architectures: capsim imports " + join_names(supported_architectures()) +
                         ", got \"" + arch + "\"");
  }
  return arch;
}

// Sliding windows: Mistral and Mixtral window every layer (sliding_window, null for none);
// GPT-OSS (layer_types) and Gemma 2 (Gemma2DecoderLayer: layers 0, 2, 4, ... slide; newer
// configs also list layer_types) alternate windowed and full layers; Qwen's use_sliding_window
// windows the layers from max_window_layers on, which capsim does not model.
void read_window(JsonReader& r, const std::string& arch, json& m) {
  if (arch == "MistralForCausalLM" || arch == "MixtralForCausalLM") {
    if (r.has("sliding_window") && !r.take_null("sliding_window"))
      m["window_attention"] = {{"size", r.required_int("sliding_window", 1, kMaxConfigDim)},
                               {"every", 1}};
    return;
  }
  if (arch.starts_with("Qwen")) {
    if (r.optional_bool("use_sliding_window", false)) {
      throw r.error("use_sliding_window",
                    "windows the layers from max_window_layers on; capsim "
                    "models windows on every layer or every other layer");
    }
    return;
  }
  if (arch != "GptOssForCausalLM" && arch != "Gemma2ForCausalLM")
    return;
  const std::int64_t size = r.required_int("sliding_window", 1, kMaxConfigDim);
  const std::vector<json> types = arch == "Gemma2ForCausalLM" && !r.has("layer_types")
                                      ? std::vector<json>{}
                                      : r.array("layer_types", 1);
  for (size_t i = 0; i < types.size(); ++i) {
    const char* want = i % 2 == 0 ? "sliding_attention" : "full_attention";
    if (!types[i].is_string() || types[i].get<std::string>() != want) {
      throw InputError(
          r.file(), r.pointer_to("layer_types") + "/" + std::to_string(i),
          std::string("capsim models alternating windowed and full layers "
                      "(\"sliding_attention\", \"full_attention\", ...); expected \"") +
              want + "\", got " + describe_json(types[i]));
    }
  }
  m["window_attention"] = {{"size", size}, {"every", 2}};
}

// Layers listed in Qwen3-MoE's mlp_only_layers as a count of dense layers first.
int qwen_dense_prefix(JsonReader& r, int num_layers) {
  if (!r.has("mlp_only_layers"))
    return 0;
  const std::vector<json> dense = r.array("mlp_only_layers");
  for (size_t i = 0; i < dense.size(); ++i) {
    if (!dense[i].is_number_integer() ||
        dense[i].get<std::int64_t>() != static_cast<std::int64_t>(i) ||
        static_cast<int>(i) + 1 >= num_layers) {
      throw InputError(r.file(), r.pointer_to("mlp_only_layers") + "/" + std::to_string(i),
                       "capsim models dense layers first (0, 1, ...), then expert layers; "
                       "expected " +
                           std::to_string(i) + ", got " + describe_json(dense[i]));
    }
  }
  return static_cast<int>(dense.size());
}

void read_moe(JsonReader& r, const std::string& arch, int num_layers, json& m) {
  json moe = json::object();
  if (arch == "MixtralForCausalLM" || arch == "GptOssForCausalLM") {
    moe["num_experts"] = r.required_int("num_local_experts", 1, kMaxConfigDim);
    moe["ffn_hidden_size"] = m.at("ffn_hidden_size");  // every layer's FFN is the experts
  } else if (arch == "Qwen3MoeForCausalLM") {
    moe["num_experts"] = r.required_int("num_experts", 1, kMaxConfigDim);
    moe["ffn_hidden_size"] = r.required_int("moe_intermediate_size", 1, kMaxConfigDim);
    // Qwen2MoeDecoderLayer: experts where (layer + 1) % decoder_sparse_step == 0, outside
    // mlp_only_layers: capsim's last of every layer_interval after the dense prefix, when the
    // prefix is whole groups.
    const int dense = qwen_dense_prefix(r, num_layers);
    const auto step = r.optional_int("decoder_sparse_step", 1, 1, num_layers - dense);
    if (dense % step != 0) {
      throw r.error("decoder_sparse_step",
                    "capsim puts experts on the last of every decoder_sparse_step layers after "
                    "the dense ones, which here (" +
                        std::to_string(dense) + ") are not whole groups of " +
                        std::to_string(step));
    }
    if (dense > 0)
      moe["first_dense_layers"] = dense;
    if (step > 1)
      moe["layer_interval"] = step;
  } else if (arch.starts_with("Deepseek") || arch == "Glm4MoeForCausalLM") {
    // GLM-4.5 (transformers' Glm4MoeConfig) names its experts as DeepSeek-V3 does and routes as
    // it does, by sigmoid scores (Glm4MoeTopkRouter), with grouped-query attention in place of MLA.
    moe["num_experts"] = r.required_int("n_routed_experts", 1, kMaxConfigDim);
    const std::int64_t expert_ffn = r.required_int("moe_intermediate_size", 1, kMaxConfigDim);
    moe["ffn_hidden_size"] = expert_ffn;
    // DeepSeek's shared experts are n_shared_experts experts of the routed size, run as one.
    const std::int64_t shared = r.optional_int("n_shared_experts", 0, 0, 64);
    if (shared > 0)
      moe["shared_expert_ffn_hidden_size"] = shared * expert_ffn;
    if (const std::int64_t dense = r.optional_int("first_k_dense_replace", 0, 0, num_layers - 1);
        dense > 0)
      moe["first_dense_layers"] = dense;
    if (r.optional_int("moe_layer_freq", 1, 1, num_layers) != 1)
      throw r.error("moe_layer_freq",
                    "capsim models experts on every layer after the dense ones (1)");
    const std::string default_score = arch == "Glm4MoeForCausalLM" ? "sigmoid" : "softmax";
    if (r.optional_enum("scoring_func", default_score, {"softmax", "sigmoid"}) == "sigmoid")
      moe["router_score"] = "sigmoid";
    if (const std::int64_t groups = r.optional_int("n_group", 1, 1, kMaxConfigDim); groups > 1) {
      moe["router_groups"] = groups;
      moe["router_group_top_k"] = r.optional_int("topk_group", groups, 1, groups);
    }
  } else if (arch == "Llama4ForCausalLM") {
    // Llama 4 (transformers' Llama4TextMoe): num_local_experts of intermediate_size, routed by
    // the sigmoid of the top-k logits, beside a shared expert of the same size, on the layers
    // moe_layers lists: the last of every interleave_moe_layer_step (Maverick: 2; Scout: 1).
    moe["num_experts"] = r.required_int("num_local_experts", 1, kMaxConfigDim);
    moe["ffn_hidden_size"] = r.required_int("intermediate_size", 1, kMaxConfigDim);
    moe["shared_expert_ffn_hidden_size"] = moe["ffn_hidden_size"];
    moe["router_score"] = "sigmoid";
    if (const auto step = r.optional_int("interleave_moe_layer_step", 1, 1, num_layers); step > 1)
      moe["layer_interval"] = step;
  } else if (arch.starts_with("Grok1")) {
    // Grok-1 (hpcai-tech's Grok1Config: num_experts experts of intermediate_size); later configs
    // of the family name num_local_experts and moe_intermediate_size, and with residual_moe add
    // a dense MLP of intermediate_size beside the experts (sglang models/grok.py, Grok1MLP).
    const char* experts_key = r.has("num_local_experts") ? "num_local_experts" : "num_experts";
    moe["num_experts"] = r.required_int(experts_key, 1, kMaxConfigDim);
    moe["ffn_hidden_size"] = r.has("moe_intermediate_size")
                                 ? json(r.required_int("moe_intermediate_size", 1, kMaxConfigDim))
                                 : m.at("ffn_hidden_size");
    if (r.optional_bool("residual_moe", false))
      moe["shared_expert_ffn_hidden_size"] = m.at("ffn_hidden_size");
  } else {
    return;
  }
  const std::string top_k_key = arch == "GptOssForCausalLM" && !r.has("num_experts_per_tok")
                                    ? "experts_per_token"
                                    : "num_experts_per_tok";
  moe["top_k"] = r.required_int(top_k_key, 1, kMaxConfigDim);
  if (arch == "GptOssForCausalLM") {
    // GptOssExperts: biased projections, and the gated activation's inputs clamped to
    // swiglu_limit (7.0 in the released configs).
    moe["linear_bias"] = true;
    moe["activation_clamp"] = r.optional_number("swiglu_limit", 7.0, 0.0, 1e6);
  }
  m["moe"] = moe;
}

void read_mla(JsonReader& r, json& m) {
  json mla = json::object();
  mla["q_lora_rank"] = r.take_null("q_lora_rank")
                           ? json(nullptr)
                           : json(r.required_int("q_lora_rank", 1, kMaxConfigDim));
  mla["kv_lora_rank"] = r.required_int("kv_lora_rank", 1, kMaxConfigDim);
  mla["qk_head_dim"] = r.required_int("qk_nope_head_dim", 1, kMaxConfigDim);
  mla["qk_pos_emb_head_dim"] = r.required_int("qk_rope_head_dim", 0, kMaxConfigDim);
  mla["v_head_dim"] = r.required_int("v_head_dim", 1, kMaxConfigDim);
  m["mla"] = mla;
  m.erase("num_kv_heads");  // every MLA head has its own keys and values
  m.erase("head_dim");
}

// The FFN's activation. Nemotron's MLP is up and down projections around relu(x)^2 ("relu2",
// transformers' NemotronMLP); Gemma's gates a tanh-approximated GeLU (GemmaMLP, gate_proj x
// up_proj: GeGLU), named by hidden_activation, else by the older hidden_act; Grok-1's experts
// gate a GeLU too (xai-org/grok-1 model.py, gelu(linear(x)) * linear_v(x)), and its config names
// no activation; every other supported family gates with SiLU (SwiGLU), GPT-OSS's clamped
// variant too.
std::string read_activation(JsonReader& r, const std::string& arch) {
  if (arch == "NemotronForCausalLM") {
    const std::string act = r.optional_string("hidden_act", "relu2");
    if (act != "relu2")
      throw r.error("hidden_act",
                    "capsim imports Nemotron's squared ReLU (\"relu2\"), got \"" + act + "\"");
    return "squared-relu";
  }
  if (arch.starts_with("Gemma") || arch.starts_with("Grok1")) {
    const char* key = r.has("hidden_activation") && !r.take_null("hidden_activation")
                          ? "hidden_activation"
                          : "hidden_act";
    const std::string family = arch.starts_with("Gemma") ? "Gemma" : "Grok-1";
    const std::string act = r.optional_string(key, "gelu_pytorch_tanh");
    if (act != "gelu_pytorch_tanh" && act != "gelu" && act != "gelu_new")
      throw r.error(key, "capsim imports " + family +
                             "'s GeLU-gated FFN (\"gelu_pytorch_tanh\"), got \"" + act + "\"");
    return "geglu";
  }
  const std::string act = r.optional_string("hidden_act", "silu");
  if (act != "silu" && act != "swiglu")
    throw r.error("hidden_act", "capsim imports SiLU-gated FFNs (\"silu\"), got \"" + act + "\"");
  return "swiglu";
}

// What Gemma 2 adds that capsim does not cost (Gemma 2 report, §2): tanh soft-capping of the
// attention logits and of the final logits (elementwise, beside the attention and the loss), and
// a second RMSNorm after attention and after the FFN (Gemma2DecoderLayer).
void note_gemma2_extras(JsonReader& r, std::vector<InputProblem>& notes) {
  const std::pair<const char*, const char*> caps[] = {
      {"attn_logit_softcapping",
       "a tanh on the attention scores, inside the attention kernel where it can cap them "
       "(FlashAttention 2.6 and later), else around an unfused one"},
      {"final_logit_softcapping", "a tanh on the logits before the loss, elementwise"}};
  for (const auto& [key, what] : caps) {
    if (r.has(key) && !r.take_null(key))
      notes.push_back(
          {r.file(), r.pointer_to(key), std::string("not modelled: ") + key + " (" + what + ")"});
  }
  notes.push_back({r.file(), "",
                   "not modelled: Gemma 2's post-attention and post-FFN RMSNorms (two more "
                   "memory-bound norms per layer)"});
}

// What Grok-1 adds that capsim does not cost (xai-org/grok-1 model.py): tanh soft-capping of the
// attention logits at max_attn_value (30), and an RMSNorm after attention and after the experts
// beside the two before them.
void note_grok1_extras(JsonReader& r, std::vector<InputProblem>& notes) {
  const char* cap = r.has("attn_logit_softcapping") ? "attn_logit_softcapping" : "max_attn_value";
  if (r.has(cap) && !r.take_null(cap))
    notes.push_back({r.file(), r.pointer_to(cap),
                     std::string("not modelled: ") + cap +
                         " (a tanh on the attention scores, inside the attention kernel where "
                         "it can cap them, else around an unfused one)"});
  notes.push_back({r.file(), "",
                   "not modelled: Grok-1's post-attention and post-expert RMSNorms (two more "
                   "memory-bound norms per layer)"});
}

// What GLM-4.5 and Llama 4 add to their attention that capsim does not cost (transformers'
// Glm4MoeAttention, Llama4TextAttention): biases on the query, key and value projections and
// RMSNorms on the queries and keys. GLM-4.5's rotary embedding turns half of each head
// (partial_rotary_factor 0.5); capsim costs it over the whole head.
void note_attention_extras(JsonReader& r, std::vector<InputProblem>& notes) {
  const std::pair<const char*, const char*> extras[] = {
      {"attention_bias", "biases on the query, key and value projections"},
      {"use_qk_norm", "RMSNorms on the queries and keys: two more memory-bound norms per layer"}};
  for (const auto& [key, what] : extras) {
    if (r.has(key) && r.optional_bool(key, false))
      notes.push_back(
          {r.file(), r.pointer_to(key), std::string("not modelled: ") + key + " (" + what + ")"});
  }
}

// Llama 4's attention on three of every four layers is chunked (Llama4TextAttention): each query
// attends within its attention_chunk_size-token chunk, which at sequences up to the chunk is full
// causal attention, as capsim costs it; beyond, it is noted.
void note_chunked_attention(JsonReader& r, const HfImportOptions& options,
                            std::vector<InputProblem>& notes) {
  if (!r.has("attention_chunk_size") || r.take_null("attention_chunk_size"))
    return;
  const auto chunk = r.optional_int("attention_chunk_size", 1, 1, kMaxConfigDim);
  if (options.seq_length > 0 && options.seq_length <= chunk)
    return;
  notes.push_back({r.file(), r.pointer_to("attention_chunk_size"),
                   "not modelled: chunked attention (" + std::to_string(chunk) +
                       "-token chunks on three of every four layers) beyond sequences of one "
                       "chunk; capsim costs full causal attention"});
}

// The text model's keys of a config of architecture `arch` (Llama 4's multimodal config nests them
// in text_config, read as Llama4ForCausalLM's), named `name`.
json read_text_model(JsonReader& r, const std::string& arch, const std::string& name,
                     const HfImportOptions& options, std::vector<InputProblem>& notes) {
  json m = json::object();
  m["name"] = name;
  const auto layers = r.required_int("num_hidden_layers", 1, 100000);
  const auto hidden = r.required_int("hidden_size", 1, kMaxConfigDim);
  const auto heads = r.required_int("num_attention_heads", 1, kMaxConfigDim);
  m["num_layers"] = layers;
  m["hidden_size"] = hidden;
  m["num_attention_heads"] = heads;
  m["num_kv_heads"] = r.optional_int("num_key_value_heads", heads, 1, kMaxConfigDim);
  // Llama 4's dense layers are intermediate_size_mlp wide; its intermediate_size is an expert's.
  m["ffn_hidden_size"] =
      r.required_int(arch == "Llama4ForCausalLM" ? "intermediate_size_mlp" : "intermediate_size", 1,
                     kMaxConfigDim);
  m["ffn_activation"] = read_activation(r, arch);
  m["vocab_size"] = r.required_int("vocab_size", 1, kMaxConfigDim);
  // Gemma's and Grok-1's configs tie the embeddings unless told otherwise (GemmaConfig,
  // Grok1Config); the other families' do not.
  m["tied_embeddings"] = r.optional_bool("tie_word_embeddings",
                                         arch.starts_with("Gemma") || arch.starts_with("Grok1"));
  if (r.has("head_dim") && !r.take_null("head_dim")) {
    const auto head_dim = r.required_int("head_dim", 1, kMaxConfigDim);
    if (head_dim * heads != hidden)
      m["head_dim"] = head_dim;
  }
  if (r.has("attention_dropout") && r.optional_number("attention_dropout", 0.0, 0.0, 1.0) > 0.0)
    m["dropout"] = true;
  const std::int64_t max_positions = r.optional_int("max_position_embeddings", 0, 0, 1LL << 40);
  if (options.seq_length > 0) {
    m["seq_length"] = options.seq_length;
  } else {
    notes.push_back({r.file(), r.pointer_to("max_position_embeddings"),
                     "the model has no seq_length: max_position_embeddings (" +
                         std::to_string(max_positions) +
                         ") is the longest context, not the training sequence; give --seq-length "
                         "or add model.seq_length"});
  }
  read_window(r, arch, m);
  if (const auto window = m.find("window_attention");
      window != m.end() && options.seq_length > 0 &&
      window->at("size").get<std::int64_t>() >= options.seq_length) {
    notes.push_back({r.file(), r.pointer_to("sliding_window"),
                     "the window (" + std::to_string(window->at("size").get<std::int64_t>()) +
                         " tokens) is not below --seq-length (" +
                         std::to_string(options.seq_length) +
                         "): every layer attends its whole sequence, so the model has no "
                         "window_attention"});
    m.erase("window_attention");
  }
  if (arch == "Gemma2ForCausalLM")
    note_gemma2_extras(r, notes);
  if (arch.starts_with("Grok1"))
    note_grok1_extras(r, notes);
  read_moe(r, arch, static_cast<int>(layers), m);
  // GPT-OSS's attention sinks: FlashAttention has none, so Transformer Engine runs cuDNN's.
  if (arch == "GptOssForCausalLM")
    m["attention"] = "cudnn";
  if (arch.starts_with("Deepseek"))
    read_mla(r, m);
  if (arch.starts_with("Deepseek") || arch == "Glm4MoeForCausalLM") {
    if (const auto mtp = r.optional_int("num_nextn_predict_layers", 0, 0, layers); mtp > 0)
      m["mtp_layers"] = mtp;
  }
  if (arch == "Glm4MoeForCausalLM" || arch == "Llama4ForCausalLM")
    note_attention_extras(r, notes);
  if (arch == "Llama4ForCausalLM")
    note_chunked_attention(r, options, notes);
  // YaRN's scaled rotary embedding runs unfused in Megatron-Core, MLA's aside (rope_utils.py).
  if (r.has("rope_scaling") && !r.take_null("rope_scaling") && !m.contains("mla")) {
    auto scaling = r.optional_object("rope_scaling");
    const std::string type = scaling->has("rope_type") ? scaling->optional_string("rope_type", "")
                                                       : scaling->optional_string("type", "");
    if (type == "yarn")
      m["rope_fusion"] = false;
  }
  r.throw_key_problems();
  return m;
}

json read_config(JsonReader& r, const HfImportOptions& options, std::vector<InputProblem>& notes) {
  const std::string arch = architecture(r);
  const std::string name = options.name.empty() ? arch : options.name;
  if (arch != "Llama4ForConditionalGeneration")
    return read_text_model(r, arch, name, options, notes);
  JsonReader text = r.object("text_config");
  return read_text_model(text, "Llama4ForCausalLM", name, options, notes);
}

}  // namespace

HfImport import_hf_config(const json& config, const std::string& file,
                          const HfImportOptions& options) {
  HfImport out;
  JsonReader reader(config, file);
  out.model = read_config(reader, options, out.notes);
  // Checked as a scenario's model; without a sequence length, against the longest window or
  // context (the user's --seq-length is checked when given).
  json checked = out.model;
  if (!checked.contains("seq_length")) {
    const auto window = checked.find("window_attention");
    checked["seq_length"] = window != checked.end() ? window->at("size").get<int>() + 1 : 1;
  }
  (void)JsonReader::read_document(checked, file + " (as a model)",
                                  [](JsonReader& r) { return read_model(r); });
  return out;
}

}  // namespace capsim::io
