#include "io/megatron_import.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "models/parameter_count.hpp"
#include "models/recompute_modules.hpp"

#include "io/json_reader.hpp"
#include "io/launch_script.hpp"
#include "io/megatron_arguments_known.hpp"
#include "io/scenario_io.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

using nlohmann::json;

// One argument as given: its name ("--num-layers"), its values and its line.
struct Given {
  std::string name;
  std::vector<ScriptWord> values;
  int line = 0;
  bool read = false;
};

std::string values_text(const Given& g) {
  std::string s;
  for (const ScriptWord& w : g.values)
    s += (s.empty() ? "" : " ") + w.text;
  return s;
}

// The argument list, read argument by argument; remembers which ones capsim read.
class Arguments {
 public:
  // `source` names where each word's `line` is (empty: "line N" of `file`).
  Arguments(const std::vector<ScriptWord>& words, std::string file,
            const MegatronArgumentSource* source = nullptr)
      : file_(std::move(file)), source_(source) {
    std::optional<size_t> current;  // index of the argument taking values
    for (const ScriptWord& w : words) {
      if (w.text.starts_with("--") && w.text.size() > 2) {
        Given g{w.text, {}, w.line, false};
        if (const size_t eq = w.text.find('='); eq != std::string::npos) {
          g.name = w.text.substr(0, eq);
          g.values.push_back({w.text.substr(eq + 1), w.line, w.unresolved});
        } else if (!w.unresolved.empty()) {
          throw error_at(w.line, "the argument name " + w.text + " uses the shell variable $" +
                                     w.unresolved.front() + ", which the file does not set");
        }
        current = add(std::move(g));
      } else if (!current) {
        throw error_at(w.line,
                       "expected a Megatron-LM argument starting with --, got \"" + w.text + "\"");
      } else {
        given_[*current].values.push_back(w);
      }
    }
  }

  [[nodiscard]] bool has(const std::string& name) const { return index_.count(name) > 0; }
  // The values of `name` as written, without marking it read.
  [[nodiscard]] std::string peek(const std::string& name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? "" : values_text(given_[it->second]);
  }
  [[nodiscard]] const std::string& file() const { return file_; }

  // A flag: present or not; it takes no value.
  bool flag(const std::string& name) {
    Given* g = find(name);
    if (g == nullptr)
      return false;
    if (!g->values.empty())
      throw error(*g, "takes no value, got \"" + values_text(*g) + "\"");
    return true;
  }
  // The one value of `name` as written, checked for unset shell variables.
  std::optional<std::string> text(const std::string& name) {
    Given* g = find(name);
    if (g == nullptr)
      return std::nullopt;
    if (g->values.size() != 1) {
      throw error(*g, g->values.empty() ? "expects a value, got none"
                                        : "expects one value, got \"" + values_text(*g) + "\"");
    }
    check_resolved(*g, g->values.front());
    return g->values.front().text;
  }
  // Every value of `name` (at least one).
  std::optional<std::vector<std::string>> texts(const std::string& name) {
    Given* g = find(name);
    if (g == nullptr)
      return std::nullopt;
    if (g->values.empty())
      throw error(*g, "expects at least one value, got none");
    std::vector<std::string> out;
    for (const ScriptWord& w : g->values) {
      check_resolved(*g, w);
      out.push_back(w.text);
    }
    return out;
  }
  // An integer value within [min, max].
  std::optional<int> integer(const std::string& name, long long min, long long max) {
    const std::optional<std::string> t = text(name);
    if (!t)
      return std::nullopt;
    long long v = 0;
    const auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || end != t->data() + t->size())
      throw error(*find(name), "expected an integer, got \"" + *t + "\"");
    if (v < min || v > max) {
      throw error(*find(name),
                  printf_string("expected an integer from %lld to %lld, got %lld", min, max, v));
    }
    return static_cast<int>(v);
  }
  int integer(const std::string& name, int dflt, long long min, long long max) {
    return integer(name, min, max).value_or(dflt);
  }
  // A number value within [min, max].
  std::optional<double> number(const std::string& name, double min, double max) {
    const std::optional<std::string> t = text(name);
    if (!t)
      return std::nullopt;
    double v = 0.0;
    const auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || end != t->data() + t->size() || !std::isfinite(v))
      throw error(*find(name), "expected a number, got \"" + *t + "\"");
    if (v < min || v > max)
      throw error(*find(name),
                  printf_string("expected a number from %g to %g, got %g", min, max, v));
    return v;
  }
  // One of `allowed`.
  std::optional<std::string> choice(const std::string& name,
                                    const std::vector<std::string>& allowed) {
    std::optional<std::string> t = text(name);
    if (t && std::find(allowed.begin(), allowed.end(), *t) == allowed.end())
      throw error(*find(name), "expected one of " + join_names(allowed) + ", got \"" + *t + "\"");
    return t;
  }

  [[nodiscard]] InputError error(const Given& g, const std::string& message) const {
    return error_at(g.line, g.name + ": " + message);
  }
  [[nodiscard]] InputError error(const std::string& name, const std::string& message) const {
    const auto it = index_.find(name);
    if (it == index_.end())
      return {file_, absent_location(name), name + ": " + message};
    return error(given_[it->second], message);
  }
  [[nodiscard]] InputError error_at(int line, const std::string& message) const {
    return {file_, location(line), message};
  }
  [[nodiscard]] InputProblem problem(const Given& g, const std::string& message) const {
    return {file_, location(g.line), g.name + ": " + message};
  }
  // A finding about the argument `name` (the message names it), at its line when given.
  [[nodiscard]] InputProblem finding(const std::string& name, const std::string& message) const {
    const auto it = index_.find(name);
    return {file_, it == index_.end() ? absent_location(name) : location(given_[it->second].line),
            message};
  }
  // Where the file gives the word of `line`: "line N", or the source's location for it.
  [[nodiscard]] std::string location(int line) const {
    if (source_ != nullptr && line >= 1 && static_cast<size_t>(line) <= source_->locations.size())
      return source_->locations[static_cast<size_t>(line) - 1];
    return "line " + std::to_string(line);
  }
  // Where a source other than a launch script gives `name`, given or not; empty for a script.
  [[nodiscard]] std::string source_location(const std::string& name) const {
    if (source_ == nullptr)
      return "";
    const auto it = index_.find(name);
    return it == index_.end() ? absent_location(name) : location(given_[it->second].line);
  }
  // Where the file would give the absent argument `name` (empty for a launch script).
  [[nodiscard]] std::string absent_location(const std::string& name) const {
    if (source_ == nullptr || !source_->absent_location)
      return "";
    return source_->absent_location(name);
  }

  // The arguments no reader looked at, in the order given.
  [[nodiscard]] std::vector<const Given*> unread() const {
    std::vector<const Given*> out;
    for (size_t k = 0; k < given_.size(); ++k) {
      if (index_.at(given_[k].name) == k && !given_[k].read)
        out.push_back(&given_[k]);
    }
    return out;
  }

 private:
  // Adds an argument, returning its index; one given again must repeat its values, which
  // are compared once the whole list is read (check_repeats).
  size_t add(Given g) {
    if (index_.count(g.name) > 0) {
      repeats_.push_back(given_.size());
    } else {
      index_[g.name] = given_.size();
    }
    given_.push_back(std::move(g));
    return given_.size() - 1;
  }

 public:
  // Throws when an argument given twice has different values (argparse would keep the last).
  void check_repeats() const {
    for (const size_t k : repeats_) {
      const Given& again = given_[k];
      const Given& first = given_[index_.at(again.name)];
      if (values_text(first) != values_text(again)) {
        throw error_at(again.line, again.name + ": given twice with different values (\"" +
                                       values_text(first) + "\" on line " +
                                       std::to_string(first.line) + ", \"" + values_text(again) +
                                       "\")");
      }
    }
  }

 private:
  Given* find(const std::string& name) {
    const auto it = index_.find(name);
    if (it == index_.end())
      return nullptr;
    Given& g = given_[it->second];
    g.read = true;
    return &g;
  }
  void check_resolved(const Given& g, const ScriptWord& w) const {
    if (!w.unresolved.empty()) {
      throw error(g, "the value \"" + w.text + "\" uses the shell variable $" +
                         w.unresolved.front() +
                         ", which the file does not set; set it in the file or write the value");
    }
  }

  std::string file_;
  const MegatronArgumentSource* source_;
  std::vector<Given> given_;
  std::map<std::string, size_t> index_;  // name -> its first occurrence
  std::vector<size_t> repeats_;          // later occurrences
};

// The reading's notes and the problems that stop it.
struct Findings {
  std::vector<InputProblem> notes;
  std::vector<InputProblem> unmodelled;
};

// Reads a whole non-negative integer from `text` at `i`, advancing `i`; nullopt when none.
std::optional<int> read_count(const std::string& text, size_t& i) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data() + i || v < 0)
    return std::nullopt;
  i = static_cast<size_t>(end - text.data());
  return v;
}

// Whether `text` at `i` starts with `prefix`, advancing `i` past it.
bool skip(const std::string& text, size_t& i, std::string_view prefix) {
  if (text.compare(i, prefix.size(), prefix) != 0)
    return false;
  i += prefix.size();
  return true;
}

// Which layers of --moe-layer-freq's pattern have experts: K dense layers first, then the last
// of every `interval` (MoeSpec::first_dense_layers, layer_interval).
struct MoeLayerPattern {
  int first_dense = 0;
  int interval = 1;
};

// --moe-layer-freq: 1 (every layer) or Megatron's list pattern "([0]*K+[1]*M)" (K dense layers
// first), or with an interval I "([0]*K+([0]*(I-1)+[1])*M+[0]*R)", the K and R parts optional,
// as `capsim export megatron` writes them; nullopt for a pattern capsim does not model.
std::optional<MoeLayerPattern> moe_layer_pattern(std::string pattern, int num_layers) {
  std::erase(pattern, ' ');
  if (pattern == "1")
    return MoeLayerPattern{};
  if (!pattern.starts_with("("))  // the parentheses are optional in Python
    pattern = "(" + pattern + ")";
  size_t i = 0;
  if (!skip(pattern, i, "("))
    return std::nullopt;
  MoeLayerPattern out;
  long long layers = 0;
  // "[0]*K+" ahead of the experts' part (not "[0]*J+[1]" of a group, which starts with "(").
  if (const size_t at = i; skip(pattern, i, "[0]*")) {
    const std::optional<int> dense = read_count(pattern, i);
    if (!dense || !skip(pattern, i, "+")) {
      i = at;
    } else {
      out.first_dense = *dense;
      layers += *dense;
    }
  }
  std::optional<int> groups;
  if (skip(pattern, i, "[1]*")) {
    if (!(groups = read_count(pattern, i)))
      return std::nullopt;
    layers += *groups;
  } else {
    std::optional<int> dense_in_group;
    if (!skip(pattern, i, "([0]*") || !(dense_in_group = read_count(pattern, i)) ||
        !skip(pattern, i, "+[1])*") || !(groups = read_count(pattern, i)) || *dense_in_group < 1) {
      return std::nullopt;
    }
    out.interval = *dense_in_group + 1;
    layers += static_cast<long long>(out.interval) * *groups;
    if (skip(pattern, i, "+[0]*")) {
      const std::optional<int> rest = read_count(pattern, i);
      if (!rest || *rest >= out.interval)
        return std::nullopt;
      layers += *rest;
    }
  }
  if (!skip(pattern, i, ")") || i != pattern.size() || layers != num_layers || *groups < 1)
    return std::nullopt;
  return out;
}

// Expands Megatron-Core's --pipeline-model-parallel-layout ("E", "t", "m", "L", "|", with
// "x*N" and "(...)*N" repetition) into its plain form; nullopt when it does not parse.
std::optional<std::string> expand_layout(const std::string& s, size_t& i, int depth) {
  std::string out;
  while (i < s.size() && s[i] != ')') {
    std::string piece;
    if (s[i] == '(') {
      ++i;
      if (depth > 16)
        return std::nullopt;
      std::optional<std::string> inner = expand_layout(s, i, depth + 1);
      if (!inner || i >= s.size() || s[i] != ')')
        return std::nullopt;
      ++i;
      piece = *inner;
    } else if (std::string("EtmL|").find(s[i]) != std::string::npos) {
      piece = std::string(1, s[i++]);
    } else if (s[i] == ' ') {
      ++i;
      continue;
    } else {
      return std::nullopt;
    }
    if (i < s.size() && s[i] == '*') {
      size_t end = ++i;
      while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) != 0)
        ++end;
      int n = 0;
      const auto [p, ec] = std::from_chars(s.data() + i, s.data() + end, n);
      if (ec != std::errc() || p == s.data() + i || n < 0 || n > 100000 ||
          piece.size() * static_cast<size_t>(n) > 1000000)
        return std::nullopt;
      i = end;
      std::string repeated;
      for (int k = 0; k < n; ++k)
        repeated += piece;
      piece = repeated;
    }
    // Layouts hold a few thousand stages at most; a longer expansion is a typo or an attack.
    if (out.size() + piece.size() > 1000000)
      return std::nullopt;
    out += piece;
  }
  return out;
}

// Reads the model section.
json read_model_arguments(Arguments& a, Findings& f) {
  json m = json::object();
  const auto required = [&a](const char* name) {
    const std::optional<int> v = a.integer(name, 1, 1 << 24);
    if (!v)
      throw a.error(name, "missing; capsim needs it");
    return *v;
  };
  const int layers = required("--num-layers");
  const int hidden = required("--hidden-size");
  const int heads = required("--num-attention-heads");
  m["num_layers"] = layers;
  m["hidden_size"] = hidden;
  m["num_attention_heads"] = heads;
  const bool mla = a.flag("--multi-latent-attention");
  const bool gqa = a.flag("--group-query-attention");
  const std::optional<int> groups = a.integer("--num-query-groups", 1, 1 << 24);
  if (mla && gqa) {
    throw a.error("--group-query-attention",
                  "conflicts with --multi-latent-attention: MLA has no key-value groups");
  }
  // Megatron-LM's default num_query_groups is 1 (arguments.py).
  m["num_kv_heads"] = gqa ? groups.value_or(1) : heads;
  const bool swiglu = a.flag("--swiglu");
  const bool squared_relu = a.flag("--squared-relu");
  // Megatron-LM asserts the two apart (arguments.py, core_transformer_config_from_args).
  if (swiglu && squared_relu)
    throw a.error("--squared-relu", "conflicts with --swiglu: an MLP has one activation");
  m["ffn_activation"] = swiglu ? "swiglu" : squared_relu ? "squared-relu" : "gelu";
  // Megatron-LM's default FFN width (arguments.py): 4h, or 2/3 of it rounded down to 64 with
  // SwiGLU.
  const int default_ffn =
      swiglu ? static_cast<int>((4.0 * hidden * 2.0 / 3.0) / 64.0) * 64 : 4 * hidden;
  m["ffn_hidden_size"] = a.integer("--ffn-hidden-size", default_ffn, 1, 1 << 24);
  std::optional<int> seq = a.integer("--seq-length", 1, 1 << 24);
  if (!seq)
    seq = a.integer("--encoder-seq-length", 1, 1 << 24);
  if (!seq)
    throw a.error("--seq-length", "missing; capsim needs the training sequence length");
  m["seq_length"] = *seq;
  std::optional<int> vocab = a.integer("--vocab-size", 1, 1 << 24);
  if (!vocab) {
    if (a.peek("--tokenizer-type") == "GPT2BPETokenizer") {
      vocab = 50257;  // GPT-2's BPE vocabulary (Radford et al. 2019)
    } else {
      throw a.error("--vocab-size",
                    "missing; capsim needs the tokenizer's vocabulary size "
                    "(give --vocab-size, or --tokenizer-type GPT2BPETokenizer)");
    }
  }
  m["vocab_size"] = *vocab;
  m["tied_embeddings"] = !a.flag("--untie-embeddings-and-output-weights");
  if (const std::optional<int> kv = a.integer("--kv-channels", 1, 1 << 24)) {
    if (mla)
      throw a.error("--kv-channels",
                    "conflicts with --multi-latent-attention, whose head "
                    "dimensions are --qk-head-dim and --v-head-dim");
    m["head_dim"] = *kv;
  }
  const auto backend =
      a.choice("--attention-backend", {"flash", "fused", "unfused", "local", "auto"});
  if (backend == "unfused" || backend == "local")
    m["attention"] = "materialized";
  if (backend == "fused")  // Transformer Engine's FusedAttention: cuDNN's kernel
    m["attention"] = "cudnn";
  if (!a.flag("--cross-entropy-loss-fusion"))
    m["cross_entropy"] = "unfused";
  // Megatron-Core fuses the rotary embedding unless --no-rope-fusion; YaRN's scaled embedding
  // (an attention scale other than 1) it runs unfused, MLA's aside (rope_utils.py).
  const auto position = a.choice("--position-embedding-type",
                                 {"learned_absolute", "rope", "yarn", "mrope", "relative", "none"});
  if (a.flag("--no-rope-fusion") || (position == "yarn" && !mla))
    m["rope_fusion"] = false;
  // Megatron-LM's dropout defaults to 0.1 (arguments.py); capsim has one switch for both.
  const double attention_dropout = a.number("--attention-dropout", 0.0, 1.0).value_or(0.1);
  const double hidden_dropout = a.number("--hidden-dropout", 0.0, 1.0).value_or(0.1);
  if ((attention_dropout > 0.0) != (hidden_dropout > 0.0)) {
    f.unmodelled.push_back(a.finding("--attention-dropout",
                                     "--attention-dropout and --hidden-dropout: capsim "
                                     "models dropout on both or on neither"));
  }
  ModelSpec convention;
  convention.ffn_activation = swiglu         ? FfnActivation::kSwiglu
                              : squared_relu ? FfnActivation::kSquaredRelu
                                             : FfnActivation::kGelu;
  if ((attention_dropout > 0.0 || hidden_dropout > 0.0) != has_dropout(convention))
    m["dropout"] = attention_dropout > 0.0 || hidden_dropout > 0.0;
  return m;
}

// Reads the mixture-of-experts arguments into the model `m`.
void read_moe_arguments(Arguments& a, Findings& f, json& m) {
  const int layers = m.at("num_layers").get<int>();
  if (const std::optional<int> experts = a.integer("--num-experts", 1, 1 << 16)) {
    json moe = {{"num_experts", *experts},
                {"top_k", a.integer("--moe-router-topk", 2, 1, 1 << 16)},
                {"ffn_hidden_size", a.integer("--moe-ffn-hidden-size",
                                              m.at("ffn_hidden_size").get<int>(), 1, 1 << 24)}};
    moe["shared_expert_ffn_hidden_size"] =
        a.integer("--moe-shared-expert-intermediate-size", 0, 0, 1 << 24);
    if (const auto freq = a.text("--moe-layer-freq")) {
      const std::optional<MoeLayerPattern> pattern = moe_layer_pattern(*freq, layers);
      if (!pattern) {
        f.unmodelled.push_back(a.finding(
            "--moe-layer-freq",
            "--moe-layer-freq: capsim models dense layers first, then MoE layers, all or the "
            "last of every I (1, \"([0]*K+[1]*M)\" or \"([0]*K+([0]*(I-1)+[1])*M+[0]*R)\", "
            "the layers adding up to --num-layers), got \"" +
                *freq + "\""));
      } else {
        if (pattern->first_dense > 0)
          moe["first_dense_layers"] = pattern->first_dense;
        if (pattern->interval > 1)
          moe["layer_interval"] = pattern->interval;
      }
    }
    if (a.choice("--moe-router-score-function", {"softmax", "sigmoid"}) == "sigmoid")
      moe["router_score"] = "sigmoid";
    if (const auto factor = a.number("--moe-expert-rank-capacity-factor", 1.0, 1e6))
      moe["rank_capacity_factor"] = *factor;
    if (const std::optional<int> groups = a.integer("--moe-router-num-groups", 1, 1 << 16)) {
      moe["router_groups"] = *groups;
      moe["router_group_top_k"] = a.integer("--moe-router-group-topk", *groups, 1, 1 << 16);
    }
    // Megatron-LM's linears carry biases unless --disable-bias-linear (arguments.py).
    if (!a.flag("--disable-bias-linear"))
      moe["linear_bias"] = true;
    // Transformer Engine's op fuser runs the experts as its fused grouped MLP (with
    // NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 in the environment, which arguments do not show).
    if (a.flag("--use-transformer-engine-op-fuser"))
      moe["fused_grouped_mlp"] = true;
    m["moe"] = moe;
  } else {
    for (const char* name :
         {"--moe-router-topk", "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size",
          "--moe-layer-freq", "--moe-router-score-function", "--moe-expert-rank-capacity-factor",
          "--moe-router-num-groups", "--moe-router-group-topk", "--expert-model-parallel-size",
          "--expert-tensor-parallel-size", "--moe-token-dispatcher-type",
          "--moe-flex-dispatcher-backend", "--moe-enable-deepep",
          "--overlap-moe-expert-parallel-comm"}) {
      if (a.has(name))
        throw a.error(name, "needs --num-experts (the model has no expert layers)");
    }
  }
}

// Reads multi-head latent attention's arguments into the model `m`.
void read_mla_arguments(Arguments& a, json& m) {
  if (a.has("--multi-latent-attention")) {
    json mla = {{"kv_lora_rank", a.integer("--kv-lora-rank", 32, 1, 1 << 24)},
                {"qk_head_dim", a.integer("--qk-head-dim", 128, 1, 1 << 24)},
                {"qk_pos_emb_head_dim", a.integer("--qk-pos-emb-head-dim", 64, 0, 1 << 24)},
                {"v_head_dim", a.integer("--v-head-dim", 128, 1, 1 << 24)}};
    // Megatron-Core's q_lora_rank defaults to None: no query compression.
    mla["q_lora_rank"] = a.integer("--q-lora-rank", 0, 1, 1 << 24);
    m["mla"] = mla;
  } else {
    for (const char* name : {"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim",
                             "--qk-pos-emb-head-dim", "--v-head-dim"}) {
      if (a.has(name))
        throw a.error(name, "needs --multi-latent-attention");
    }
  }
}

// Reads window attention's arguments into the model `m`.
void read_window_arguments(Arguments& a, Findings& f, json& m) {
  if (const auto window = a.text("--window-size")) {
    std::string w = *window;
    std::erase_if(w, [](char c) { return c == '(' || c == ')' || c == ' '; });
    size_t i = 0;
    const std::optional<int> left_size = read_count(w, i);
    const bool comma = skip(w, i, ",");
    const std::optional<int> right_size = comma ? read_count(w, i) : std::nullopt;
    const int left = left_size.value_or(0);
    const int right = right_size.value_or(-1);
    if (!left_size || !right_size || i != w.size() || left < 1)
      throw a.error(
          "--window-size",
          "expected \"LEFT,0\" (a causal window of LEFT tokens), got \"" + *window + "\"");
    if (right != 0) {
      f.unmodelled.push_back(a.finding(
          "--window-size",
          "--window-size: capsim models causal windows (right 0), got \"" + *window + "\""));
    }
    // --window-attn-skip-freq N: one full-attention layer after N-1 windowed ones; capsim's
    // `every` windows one layer in `every`, the same split for N = 2 only.
    const std::optional<std::string> skip = a.text("--window-attn-skip-freq");
    int every = 1;
    if (skip == "2") {
      every = 2;
    } else if (skip) {
      f.unmodelled.push_back(a.finding("--window-attn-skip-freq",
                                       "--window-attn-skip-freq: capsim models windows on "
                                       "every layer or on every other layer (2), got \"" +
                                           *skip + "\""));
    }
    m["window_attention"] = {{"size", left}, {"every", every}};
  } else if (a.has("--window-attn-skip-freq")) {
    throw a.error("--window-attn-skip-freq", "needs --window-size");
  }
}

// Reads MoE, MLA, multi-token prediction and window attention into the model `m`.
void read_model_extensions(Arguments& a, Findings& f, json& m) {
  read_moe_arguments(a, f, m);
  read_mla_arguments(a, m);
  const int layers = m.at("num_layers").get<int>();
  if (const std::optional<int> mtp = a.integer("--mtp-num-layers", 0, layers); mtp && *mtp > 0)
    m["mtp_layers"] = *mtp;
  read_window_arguments(a, f, m);
}

// The stages of an expanded layout: what is between the "|"s.
std::vector<std::string> layout_stages(const std::string& plain) {
  std::vector<std::string> chunks(1);
  for (char c : plain) {
    if (c == '|')
      chunks.emplace_back();
    else
      chunks.back() += c;
  }
  return chunks;
}

// Each pipeline rank's layers from --pipeline-model-parallel-layout `layout` (virtual stage j
// of rank i is stage j·pp + i), noting placements capsim does not model.
std::vector<int> layout_stage_layers(Arguments& a, Findings& f, const std::string& layout, int pp,
                                     int vpp, int layers) {
  const char* name = "--pipeline-model-parallel-layout";
  size_t i = 0;
  const std::optional<std::string> plain = expand_layout(layout, i, 0);
  if (!plain || i != layout.size()) {
    throw a.error(name,
                  "expected Megatron-Core's layout (\"E\", \"t\", \"m\", \"L\", \"|\", \"x*N\", "
                  "\"(...)*N\"), got \"" +
                      layout + "\"");
  }
  const std::vector<std::string> chunks = layout_stages(*plain);
  const auto upp = static_cast<size_t>(pp);
  if (chunks.size() != upp * static_cast<size_t>(vpp)) {
    throw a.error(name, printf_string("has %zu stages; --pipeline-model-parallel-size (%d) x "
                                      "virtual stages (%d) = %d",
                                      chunks.size(), pp, vpp, pp * vpp));
  }
  std::vector<int> stage(upp, 0);
  std::vector<int> chunk_layers;
  int total = 0;
  bool ends_elsewhere = false;  // E, L or m away from the first or last stage
  for (size_t c = 0; c < chunks.size(); ++c) {
    const auto t = static_cast<int>(std::count(chunks[c].begin(), chunks[c].end(), 't'));
    chunk_layers.push_back(t);
    stage[c % upp] += t;
    total += t;
    const bool first = c == 0;
    const bool last = c + 1 == chunks.size();
    ends_elsewhere = ends_elsewhere || (chunks[c].find('E') != std::string::npos) != first ||
                     (chunks[c].find('L') != std::string::npos) != last ||
                     (chunks[c].find('m') != std::string::npos && !last);
  }
  if (ends_elsewhere) {
    f.unmodelled.push_back(a.finding(
        name, std::string(name) +
                  ": capsim places the embedding (E) on the first stage and the loss (L) and MTP "
                  "layers (m) on the last, got \"" +
                  layout + "\""));
  }
  if (total != layers)
    throw a.error(name, printf_string("places %d layers (t); --num-layers is %d", total, layers));
  for (size_t c = 0; c < chunk_layers.size(); ++c) {
    const auto rank = static_cast<int>(c % upp);
    if (layers_in_chunk(stage[c % upp], rank, static_cast<int>(c / upp), pp, vpp) !=
        chunk_layers[c]) {
      f.unmodelled.push_back(a.finding(
          name, std::string(name) +
                    ": capsim deals each pipeline rank's layers evenly over its virtual stages, "
                    "got \"" +
                    layout + "\""));
      break;
    }
  }
  return stage;
}

// Each pipeline rank's layers from --decoder-first- and --decoder-last-pipeline-num-layers,
// the other layers split evenly over the other ranks; empty when neither is given.
std::vector<int> first_last_stage_layers(Arguments& a, int pp, int layers) {
  const std::optional<int> first = a.integer("--decoder-first-pipeline-num-layers", 0, layers);
  const std::optional<int> last = a.integer("--decoder-last-pipeline-num-layers", 0, layers);
  if (!first && !last)
    return {};
  const char* name =
      first ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers";
  if (pp < 2)
    throw a.error(name, "needs --pipeline-model-parallel-size > 1");
  const int middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
  const int rest = layers - first.value_or(0) - last.value_or(0);
  if (rest < 0 || (middle_stages == 0 && rest != 0) ||
      (middle_stages > 0 && rest % middle_stages != 0)) {
    throw a.error(name, printf_string("the other %d layers do not split evenly over the other %d "
                                      "stages",
                                      rest, middle_stages));
  }
  std::vector<int> stage(static_cast<size_t>(pp), middle_stages > 0 ? rest / middle_stages : 0);
  if (first)
    stage.front() = *first;
  if (last)
    stage.back() = *last;
  return stage;
}

// The split of the layers over the pipeline stages into `p` (stage_layers), when given.
void read_pipeline_layout(Arguments& a, Findings& f, const json& m, json& p) {
  const int pp = p.at("pipeline").get<int>();
  const int vpp = p.at("virtual_pipeline_stages").get<int>();
  const int layers = m.at("num_layers").get<int>();
  if (const auto layout = a.text("--pipeline-model-parallel-layout")) {
    for (const char* other :
         {"--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers"}) {
      if (a.has(other))
        throw a.error(other, "conflicts with --pipeline-model-parallel-layout");
    }
    p["stage_layers"] = layout_stage_layers(a, f, *layout, pp, vpp, layers);
    return;
  }
  if (std::vector<int> stage = first_last_stage_layers(a, pp, layers); !stage.empty())
    p["stage_layers"] = stage;
}

// Recompute arguments into the parallelism `p`.
void read_recompute(Arguments& a, Findings& f, json& p) {
  std::optional<std::string> granularity =
      a.choice("--recompute-granularity", {"full", "selective"});
  if (a.flag("--recompute-activations")) {  // Megatron-LM's older spelling of selective
    if (granularity == "full")
      throw a.error("--recompute-activations", "conflicts with --recompute-granularity full");
    granularity = "selective";
  }
  const std::optional<std::string> method = a.choice("--recompute-method", {"uniform", "block"});
  const std::optional<int> num_layers = a.integer("--recompute-num-layers", 1, 1 << 20);
  const std::optional<std::vector<std::string>> modules = a.texts("--recompute-modules");
  if (granularity == "full") {
    if (!method)
      throw a.error("--recompute-granularity", "full needs --recompute-method (uniform or block)");
    if (method != "uniform" || num_layers.value_or(1) != 1) {
      f.unmodelled.push_back(a.finding(
          "--recompute-method", "--recompute-method " + *method + " --recompute-num-layers " +
                                    std::to_string(num_layers.value_or(1)) +
                                    ": capsim models full recompute of every layer on its own "
                                    "(uniform, 1 layer)"));
    }
  } else if (method || num_layers) {
    throw a.error(method ? "--recompute-method" : "--recompute-num-layers",
                  "needs --recompute-granularity full");
  }
  if (modules && granularity != "selective")
    throw a.error("--recompute-modules", "needs --recompute-granularity selective");
  p["recompute"] = granularity.value_or("none");
  if (modules) {
    json list = json::array();
    for (const std::string& name : *modules) {
      if (!recompute_module_from_string(name)) {
        std::vector<std::string> names;
        for (const RecomputeModule m : kAllRecomputeModules)
          names.emplace_back(to_string(m));
        throw a.error("--recompute-modules",
                      "expected modules among " + join_names(names) + ", got \"" + name + "\"");
      }
      list.push_back(name);
    }
    p["recompute_modules"] = list;
  }
}

// Precision arguments into `p`, in the names planner/megatron_args.cpp writes.
void read_precision(Arguments& a, Findings& f, json& p) {
  const bool bf16 = a.flag("--bf16");
  const bool fp16 = a.flag("--fp16");
  if (bf16 && fp16)
    throw a.error("--fp16", "conflicts with --bf16");
  const auto fp8 = a.choice("--fp8-format", {"e4m3", "hybrid"});
  const auto recipe = a.choice("--fp8-recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"});
  const auto fp4 = a.choice("--fp4-format", {"e2m1"});
  const auto fp4_recipe = a.choice("--fp4-recipe", {"nvfp4"});
  if (recipe && !fp8)
    throw a.error("--fp8-recipe", "needs --fp8-format");
  if (fp4_recipe && !fp4)
    throw a.error("--fp4-recipe", "needs --fp4-format");
  if (fp4 && fp8)
    throw a.error("--fp4-format", "conflicts with --fp8-format");
  std::string precision = bf16 ? "bf16" : "fp16";
  if (fp4) {
    precision = "nvfp4";
  } else if (fp8) {
    const std::string r = recipe.value_or("delayed");
    precision = r == "delayed"      ? "fp8"
                : r == "tensorwise" ? "fp8-cs"
                : r == "blockwise"  ? "fp8-blockwise"
                                    : "mxfp8";
  }
  if ((fp8 || fp4) && !bf16) {
    f.unmodelled.push_back(a.finding(
        "--fp8-format", (fp8 ? std::string("--fp8-format") : std::string("--fp4-format")) +
                            ": capsim models low-precision GEMMs in bf16 "
                            "training; give --bf16"));
  }
  if (!bf16 && !fp16 && !fp8 && !fp4) {
    f.unmodelled.push_back({a.file(), a.absent_location("--bf16"),
                            "no --bf16 or --fp16: capsim models 16-bit and lower "
                            "precision training, not fp32"});
    precision = "bf16";
  }
  p["precision"] = precision;
  if (a.flag("--fp8-param-gather")) {
    if (!fp8)
      throw a.error("--fp8-param-gather", "needs --fp8-format");
    p["fp8_params"] = true;
  }
  if (a.flag("--activation-func-fp8-input-store"))
    p["activation_input_fp8"] = true;
  if (a.flag("--fp8-dot-product-attention")) {
    if (!fp8)
      throw a.error("--fp8-dot-product-attention", "needs --fp8-format");
    p["fp8_attention"] = true;
  }
}

// The training stack: optimizer, gradient reduction and communication overlap.
void read_stack(Arguments& a, Findings& f, json& p) {
  const bool distributed = a.flag("--use-distributed-optimizer");
  const bool fsdp = a.flag("--use-torch-fsdp2");
  if (distributed && fsdp)
    throw a.error("--use-torch-fsdp2", "conflicts with --use-distributed-optimizer");
  const int zero = fsdp ? 3 : (distributed ? 1 : 0);
  p["zero_stage"] = zero;
  const bool grad = a.flag("--overlap-grad-reduce");
  const bool param = a.flag("--overlap-param-gather");
  if (param && !distributed)
    throw a.error("--overlap-param-gather", "needs --use-distributed-optimizer");
  if (param && !grad)
    throw a.error("--overlap-param-gather", "needs --overlap-grad-reduce");
  // FSDP reduce-scatters as the backward pass goes; the flags describe DDP's buckets.
  if (zero != 3)
    p["overlap_grad_reduce"] = grad;
  if (zero == 1 && grad)
    p["overlap_param_gather"] = param;
  if (a.flag("--tp-comm-overlap"))
    p["tp_comm_overlap"] = true;
  if (a.flag("--grad-reduce-in-bf16"))
    p["grad_reduce_precision"] = "bf16";
  const auto avg = a.choice("--exp-avg-dtype", {"fp32", "bf16", "fp16"});
  const auto avg_sq = a.choice("--exp-avg-sq-dtype", {"fp32", "bf16", "fp16"});
  if (avg.value_or("fp32") != avg_sq.value_or("fp32")) {
    f.unmodelled.push_back(a.finding("--exp-avg-dtype",
                                     "--exp-avg-dtype and --exp-avg-sq-dtype: capsim models "
                                     "both of Adam's moments in one precision"));
  } else if (avg.value_or("fp32") != "fp32") {
    p["optimizer_state_precision"] = *avg;
  }
  (void)a.flag("--use-precision-aware-optimizer");
  if (a.peek("--optimizer") == "adam")  // capsim models Adam; others stay unread
    (void)a.text("--optimizer");
  if (a.choice("--main-params-dtype", {"fp32", "fp16"}) == "fp16")
    p["master_weights"] = "fp16";
}

// Expert layout and exchange, with a model `m` that has experts.
void read_expert_layout(Arguments& a, const json& m, json& p) {
  if (!m.contains("moe"))
    return;
  p["expert"] = a.integer("--expert-model-parallel-size", 1, 1, 1 << 20);
  if (const auto etp = a.integer("--expert-tensor-parallel-size", 1, 1 << 20))
    p["expert_tensor"] = *etp;
  const auto dispatcher =
      a.choice("--moe-token-dispatcher-type", {"alltoall", "allgather", "flex"});
  const bool deepep = a.flag("--moe-enable-deepep");
  const auto backend = a.choice("--moe-flex-dispatcher-backend", {"deepep", "hybridep"});
  if (dispatcher == "flex") {
    if (!deepep && !backend) {
      throw a.error("--moe-token-dispatcher-type",
                    "flex needs a backend: --moe-flex-dispatcher-backend deepep or hybridep");
    }
    p["token_dispatcher"] = "deepep";
  } else if (dispatcher == "allgather") {
    p["token_dispatcher"] = "allgather";
  }
  if ((deepep || backend) && dispatcher != "flex") {
    throw a.error(deepep ? "--moe-enable-deepep" : "--moe-flex-dispatcher-backend",
                  "needs --moe-token-dispatcher-type flex");
  }
  if (a.flag("--overlap-moe-expert-parallel-comm"))
    p["moe_a2a_overlap"] = true;
}

// The layout: parallel sizes, virtual stages, batch sizes; data parallelism from `gpus`.
json read_layout(Arguments& a, Findings& f, const json& m, int gpus) {
  json p = json::object();
  const int tp = a.integer("--tensor-model-parallel-size", 1, 1, 1 << 20);
  const int pp = a.integer("--pipeline-model-parallel-size", 1, 1, 1 << 20);
  const int cp = a.integer("--context-parallel-size", 1, 1, 1 << 20);
  const long long model_parallel = static_cast<long long>(tp) * pp * cp;
  if (gpus % model_parallel != 0) {
    throw InputError(a.file(), a.source_location("--tensor-model-parallel-size"),
                     printf_string("the cluster's %d GPUs do not divide into "
                                   "--tensor-model-parallel-size (%d) x "
                                   "--pipeline-model-parallel-size (%d) x --context-parallel-size "
                                   "(%d) = %lld: data parallelism is GPUs / (TP x PP x CP)",
                                   gpus, tp, pp, cp, model_parallel));
  }
  const auto dp = static_cast<int>(gpus / model_parallel);
  p["tensor"] = tp;
  p["pipeline"] = pp;
  p["context"] = cp;
  p["data"] = dp;
  const int layers = m.at("num_layers").get<int>();
  const std::optional<int> chunks = a.integer("--num-virtual-stages-per-pipeline-rank", 1, 1024);
  const std::optional<int> chunk_layers =
      a.integer("--num-layers-per-virtual-pipeline-stage", 1, 1 << 20);
  if (chunks && chunk_layers) {
    throw a.error("--num-layers-per-virtual-pipeline-stage",
                  "conflicts with --num-virtual-stages-per-pipeline-rank (give one)");
  }
  int vpp = chunks.value_or(1);
  if (chunk_layers) {
    const long long per_rank = static_cast<long long>(pp) * *chunk_layers;
    if (layers % per_rank != 0) {
      throw a.error("--num-layers-per-virtual-pipeline-stage",
                    printf_string("%d layers per virtual stage do not divide --num-layers (%d) "
                                  "over --pipeline-model-parallel-size (%d)",
                                  *chunk_layers, layers, pp));
    }
    vpp = static_cast<int>(layers / per_rank);
  }
  p["virtual_pipeline_stages"] = vpp;
  if (const std::optional<int> group =
          a.integer("--microbatch-group-size-per-virtual-pipeline-stage", 1, 1 << 24)) {
    p["microbatch_group_size"] = *group;
  }
  p["sequence_parallel"] = a.flag("--sequence-parallel");
  // capsim's default split counts the embedding and the loss as layers where that divides
  // (Scenario layers_per_stage), which is what these two flags ask Megatron-Core for.
  (void)a.flag("--account-for-embedding-in-pipeline-split");
  (void)a.flag("--account-for-loss-in-pipeline-split");
  const int micro = a.integer("--micro-batch-size", 1, 1, 1 << 24);
  p["micro_batch_size"] = micro;
  // Megatron-LM's default global batch is one micro-batch per data-parallel rank.
  const std::optional<int> global = a.integer("--global-batch-size", 1, 1 << 24);
  p["global_batch_size"] = global ? json(*global) : json(static_cast<long long>(micro) * dp);
  read_pipeline_layout(a, f, m, p);
  read_recompute(a, f, p);
  read_precision(a, f, p);
  read_stack(a, f, p);
  read_expert_layout(a, m, p);
  return p;
}

// The GPUs of a cluster object: its instance's or gpus_per_node, times num_nodes.
int cluster_gpus(const json& cluster, const Catalog& catalog) {
  const auto number = [&cluster](const char* key) {
    const auto it = cluster.find(key);
    return it != cluster.end() && it->is_number_integer() ? it->get<long long>() : 0LL;
  };
  long long per_node = number("gpus_per_node");
  if (const auto it = cluster.find("instance"); it != cluster.end() && it->is_string()) {
    if (const InstanceSpec* inst = catalog.find_instance(it->get<std::string>()))
      per_node = inst->gpus_per_node;
  }
  const long long gpus = per_node * number("num_nodes");
  return gpus > 0 && gpus <= (1 << 20) ? static_cast<int>(gpus) : 1;
}

// Reports the arguments nobody read: ignored (notes) or changing the step (problems).
void classify_unread(const Arguments& a, Findings& f) {
  for (const Given* g : a.unread()) {
    if (const char* reason = ignored_megatron_argument(g->name)) {
      f.notes.push_back(a.problem(*g, std::string("ignored: ") + reason));
    } else if (const char* why = unmodelled_megatron_argument(g->name)) {
      f.unmodelled.push_back(
          a.problem(*g, std::string("changes the step, but capsim does not model it: ") + why));
    } else {
      f.unmodelled.push_back(
          a.problem(*g,
                    "capsim does not model this argument; it may change the step (give "
                    "--allow-unmodelled to model the run without it)"));
    }
  }
}

}  // namespace

namespace {

MegatronImport import_arguments(const std::vector<ScriptWord>& words, const std::string& file,
                                const MegatronImportOptions& options, Catalog& catalog,
                                const MegatronArgumentSource* source) {
  Arguments a(words, file, source);
  a.check_repeats();
  Findings f;
  if (source != nullptr) {
    f.notes = source->notes;
    f.unmodelled = source->unmodelled;
  }
  json model = read_model_arguments(a, f);
  model["name"] = options.name;
  read_model_extensions(a, f, model);
  json par = read_layout(a, f, model, cluster_gpus(options.cluster, catalog));
  if (const auto max_pos = a.integer("--max-position-embeddings", 1, 1 << 30)) {
    f.notes.push_back(a.finding("--max-position-embeddings",
                                printf_string("--max-position-embeddings %d: ignored; the step "
                                              "depends on --seq-length (%d)",
                                              *max_pos, model.at("seq_length").get<int>())));
  }
  if (const auto divisible = a.integer("--make-vocab-size-divisible-by", 1, 1 << 20);
      divisible && *divisible != 128) {
    f.unmodelled.push_back(a.finding("--make-vocab-size-divisible-by",
                                     "--make-vocab-size-divisible-by: capsim pads the vocabulary "
                                     "to a multiple of 128 x TP, Megatron-LM's default"));
  }
  const std::optional<int> bucket = a.integer("--ddp-bucket-size", 1, 2147483647);
  classify_unread(a, f);
  if (!f.unmodelled.empty() && !options.allow_unmodelled)
    throw InputError(f.unmodelled);
  for (InputProblem& p : f.unmodelled) {
    p.message += " (modelled without it: --allow-unmodelled)";
    f.notes.push_back(std::move(p));
  }
  const json doc = {{"schema", kScenarioSchema},
                    {"name", options.name},
                    {"model", model},
                    {"cluster", options.cluster},
                    {"parallelism", par}};
  const std::string as_scenario = file + " (as a scenario)";
  MegatronImport out;
  out.scenario = JsonReader::read_document(
      doc, as_scenario, [&catalog](JsonReader& r) { return read_scenario(r, true, catalog); });
  if (bucket) {
    // --ddp-bucket-size counts parameters; capsim's dp_bucket_size is bytes of gradients.
    const double bytes = *bucket * out.scenario.parallelism.grad_reduce_bytes_per_element();
    if (bytes < 65536.0 || bytes > 16.0 * 1024 * 1024 * 1024) {
      throw a.error("--ddp-bucket-size",
                    printf_string("%d parameters are %.0f bytes of gradients; capsim models "
                                  "buckets of 64KiB to 16GiB",
                                  *bucket, bytes));
    }
    out.scenario.parallelism.dp_bucket_bytes = bytes;
  }
  out.notes = std::move(f.notes);
  return out;
}

}  // namespace

MegatronImport import_megatron(const std::string& text, const std::string& file,
                               const MegatronImportOptions& options, Catalog& catalog) {
  const std::vector<ScriptWord> words = launch_arguments(text, file);
  if (words.empty())
    throw InputError(file, "",
                     "no Megatron-LM arguments found (expected a launch script running "
                     "a .py program, or an argument file)");
  return import_arguments(words, file, options, catalog, nullptr);
}

MegatronImport import_megatron_arguments(const MegatronArgumentSource& source,
                                         const std::string& file,
                                         const MegatronImportOptions& options, Catalog& catalog) {
  return import_arguments(source.words, file, options, catalog, &source);
}

std::string moe_layer_freq_text(int num_layers, int first_dense, int interval) {
  const int after = num_layers - first_dense;
  std::string pattern = first_dense > 0 ? printf_string("[0]*%d+", first_dense) : "";
  if (interval == 1) {
    pattern += printf_string("[1]*%d", after);
  } else {
    pattern += printf_string("([0]*%d+[1])*%d", interval - 1, after / interval);
    if (after % interval > 0)
      pattern += printf_string("+[0]*%d", after % interval);
  }
  return "(" + pattern + ")";
}

}  // namespace capsim::io
