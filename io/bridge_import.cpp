#include "io/bridge_import.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/bridge_keys.hpp"
#include "io/bridge_precision.hpp"
#include "io/json_reader.hpp"
#include "io/megatron_arguments_known.hpp"
#include "io/megatron_import.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

using nlohmann::json;

// MixedPrecisionConfig fields that follow from the precision capsim reads (dtypes of parameters
// and pipeline messages, fp8 scaling history).
constexpr auto kPrecisionDetails = std::to_array<std::string_view>(
    {"params_dtype", "pipeline_dtype", "autocast_enabled", "autocast_dtype", "fp8_margin",
     "fp8_amax_history_len", "fp8_amax_compute_algo", "reuse_grad_buf_for_mxfp8_param_ag"});

std::string pointer_of(std::string_view section, std::string_view key) {
  std::string p = "/" + json_pointer_token(section);
  if (!key.empty())
    p += "/" + json_pointer_token(key);
  return p;
}

// A scalar's text as a Megatron-LM argument value.
std::string scalar_text(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number_float()) {
    std::array<char, 32> buf{};
    const double d = v.get<double>();
    const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
    return ec == std::errc() ? std::string(buf.data(), end) : v.dump();
  }
  return v.dump();
}

// torch dtype names as Megatron-LM's dtype arguments spell them.
std::string dtype_text(const std::string& text) {
  std::string t = text.starts_with("torch.") ? text.substr(6) : text;
  if (t == "float32")
    return "fp32";
  if (t == "bfloat16")
    return "bf16";
  if (t == "float16" || t == "half")
    return "fp16";
  return text;
}

// --moe-layer-freq from a list of 0/1 per layer: Megatron's "([0]*K+[1]*M)" pattern when the
// dense layers come first, "([0]*K+([0]*(I-1)+[1])*M+[0]*R)" when after them the last of every
// I layers has experts, else the list as written (which the reader reports).
std::string layer_freq_text(const json& list) {
  std::vector<int> experts;  // the layers with experts
  for (size_t i = 0; i < list.size(); ++i) {
    const json& v = list[i];
    if (!v.is_number_integer() || (v.get<long long>() != 0 && v.get<long long>() != 1))
      return list.dump();
    if (v.get<long long>() == 1)
      experts.push_back(static_cast<int>(i));
  }
  const auto layers = static_cast<int>(list.size());
  if (experts.empty())
    return list.dump();
  const int interval = experts.size() > 1 ? experts[1] - experts[0] : 1;
  for (size_t k = 1; k < experts.size(); ++k) {
    if (experts[k] - experts[k - 1] != interval)
      return list.dump();
  }
  const int dense = experts.front() - (interval - 1);
  const int rest = layers - 1 - experts.back();
  if (dense < 0 || rest >= interval)
    return list.dump();
  return moe_layer_freq_text(layers, dense, interval);
}

// --pipeline-model-parallel-layout from Bridge's list of stages, each a list of layer names.
std::string layout_text(const json& stages) {
  std::string out;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (!stages[i].is_array())
      return stages.dump();
    if (i > 0)
      out += '|';
    for (const json& layer : stages[i]) {
      const std::string name = layer.is_string() ? layer.get<std::string>() : "";
      if (name == "embedding")
        out += 'E';
      else if (name == "decoder")
        out += 't';
      else if (name == "mtp")
        out += 'm';
      else if (name == "loss")
        out += 'L';
      else
        return stages.dump();
    }
  }
  return out;
}

// The recipe's keys as Megatron-LM arguments, each word located by its key's pointer.
class Translation {
 public:
  explicit Translation(std::string file) : file_(std::move(file)) {}

  // Adds `argument` with `values`, given at `pointer`.
  void add(const std::string& argument, const std::vector<std::string>& values,
           const std::string& pointer) {
    source_.locations.push_back(pointer);
    const auto line = static_cast<int>(source_.locations.size());
    source_.words.push_back({argument, line, {}});
    for (const std::string& v : values)
      source_.words.push_back({v, line, {}});
  }

  // Adds the argument a key sets from its value: true adds a flag, false leaves it out (or
  // gives Megatron-LM's --no- form where one exists), null leaves Megatron-LM's default.
  void add_value(const BridgeArgument& arg, const json& value, const std::string& pointer) {
    const std::string& a = arg.argument;
    if (value.is_null())
      return;
    if (value.is_boolean()) {
      const bool on = value.get<bool>() != arg.inverted;
      const std::string no = "--no-" + a.substr(2);
      const bool has_no_form =
          ignored_megatron_argument(no) != nullptr || unmodelled_megatron_argument(no) != nullptr;
      if (has_no_form && !on)
        add(no, {}, pointer);
      else if (!has_no_form && on)
        add(a, {}, pointer);
      return;
    }
    if (value.is_array()) {
      if (a == "--window-size") {
        std::string w;
        for (const json& v : value)
          w += (w.empty() ? "" : ",") + scalar_text(v);
        add(a, {w}, pointer);
      } else if (a == "--moe-layer-freq") {
        add(a, {layer_freq_text(value)}, pointer);
      } else if (a == "--pipeline-model-parallel-layout") {
        add(a, {layout_text(value)}, pointer);
      } else {
        std::vector<std::string> values;
        for (const json& v : value)
          values.push_back(v.is_primitive() ? scalar_text(v) : v.dump());
        add(a, values, pointer);
      }
      return;
    }
    std::string text = value.is_primitive() ? scalar_text(value) : value.dump();
    if (a == "--exp-avg-dtype" || a == "--exp-avg-sq-dtype" || a == "--main-params-dtype")
      text = dtype_text(text);
    add(a, {text}, pointer);
  }

  void note(const std::string& pointer, const std::string& message) {
    source_.notes.push_back({file_, pointer, message});
  }
  void unmodelled(const std::string& pointer, const std::string& message) {
    source_.unmodelled.push_back({file_, pointer, message});
  }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] MegatronArgumentSource take() { return std::move(source_); }

 private:
  std::string file_;
  MegatronArgumentSource source_;
};

const json* member(const json& object, const char* key) {
  if (!object.is_object())
    return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// model.activation_func: a function's name or Bridge's {_target_: torch.nn.functional.silu}.
void read_activation(Translation& t, const json& model) {
  const json* f = member(model, "activation_func");
  if (f == nullptr)
    return;
  std::string name;
  if (f->is_string())
    name = f->get<std::string>();
  else if (const json* target = member(*f, "_target_"); target != nullptr && target->is_string())
    name = target->get<std::string>();
  const json* glu = member(model, "gated_linear_unit");
  const bool gated = glu != nullptr && glu->is_boolean() && glu->get<bool>();
  // Squared ReLU (Nemotron-4): megatron.core.activations.squared_relu, Megatron-LM's
  // --squared-relu.
  if (!gated && name.ends_with("squared_relu")) {
    t.add("--squared-relu", {}, pointer_of("model", "activation_func"));
    return;
  }
  const std::string expected = gated ? "silu" : "gelu";
  if (!name.ends_with(expected)) {
    t.unmodelled(pointer_of("model", "activation_func"),
                 "activation_func \"" + (name.empty() ? f->dump() : name) +
                     "\": capsim reads SwiGLU (gated_linear_unit true with silu), GELU "
                     "(gated_linear_unit false with gelu) and squared ReLU (gated_linear_unit "
                     "false with squared_relu)");
  }
}

// model.num_query_groups: grouped-query attention, which Megatron-LM turns on with a flag.
void read_query_groups(Translation& t, const json& value) {
  if (value.is_null())
    return;
  const std::string pointer = pointer_of("model", "num_query_groups");
  t.add("--group-query-attention", {}, pointer);
  t.add_value({"--num-query-groups", false}, value, pointer);
}

// A section whose keys are Megatron-LM arguments; `skip` names keys read elsewhere.
void read_section(Translation& t, const std::string& section, const json& keys,
                  const std::vector<std::string_view>& skip) {
  if (keys.is_null())
    return;
  if (!keys.is_object())
    throw InputError(t.file(), pointer_of(section, ""), "expected a mapping of keys");
  for (const auto& [key, value] : keys.items()) {
    if (key == "_target_" || std::find(skip.begin(), skip.end(), key) != skip.end())
      continue;
    const std::string pointer = pointer_of(section, key);
    if (section == "model" && key == "num_query_groups") {
      read_query_groups(t, value);
      continue;
    }
    if (section == "model" && key == "activation_func")
      continue;  // read_activation
    if (const char* why = ignored_bridge_key(section, key)) {
      t.note(pointer, key + ": ignored: " + why);
      continue;
    }
    const std::optional<BridgeArgument> arg = argument_of_bridge_key(section, key);
    if (arg)
      t.add_value(*arg, value, pointer);
  }
}

// The mixed_precision section: a recipe name or MixedPrecisionConfig's fields.
json precision_fields(Translation& t, const json& mp) {
  if (mp.is_string()) {
    const std::optional<json> fields = bridge_precision_recipe(mp.get<std::string>());
    if (!fields) {
      throw InputError(t.file(), "/mixed_precision",
                       "unknown recipe \"" + mp.get<std::string>() + "\"; capsim knows " +
                           join_names(bridge_precision_recipe_names()));
    }
    return *fields;
  }
  if (!mp.is_object())
    throw InputError(t.file(), "/mixed_precision",
                     "expected a recipe name (\"bf16_mixed\", ...) or a mapping of fields");
  return mp;
}

void read_precision(Translation& t, const json& recipe) {
  const json* mp = member(recipe, "mixed_precision");
  const json fields = mp != nullptr ? precision_fields(t, *mp) : json::object();
  const bool named = mp != nullptr && mp->is_string();
  const auto where = [named](const std::string& key) {
    return named ? std::string("/mixed_precision") : pointer_of("mixed_precision", key);
  };
  for (const auto& [key, value] : fields.items()) {
    if (key == "_target_" || key == "grad_reduce_in_fp32")
      continue;
    if (std::find(kPrecisionDetails.begin(), kPrecisionDetails.end(), key) !=
        kPrecisionDetails.end()) {
      t.note(where(key), key + ": ignored: follows the precision capsim models");
      continue;
    }
    // The layers first_last_layers_bf16 keeps in bf16: that key alone is reported.
    if (key == "num_layers_at_start_in_bf16" || key == "num_layers_at_end_in_bf16")
      continue;
    const std::optional<BridgeArgument> arg = argument_of_bridge_key("mixed_precision", key);
    t.add_value(*arg, value, where(key));
  }
  // Gradients reduce in fp32 unless grad_reduce_in_fp32 is false in bf16 training; the
  // precision's setting overrides ddp's, as Bridge applies it to the DDP config.
  const json* bf16 = member(fields, "bf16");
  const bool is_bf16 = bf16 != nullptr && bf16->is_boolean() && bf16->get<bool>();
  std::string pointer = where("grad_reduce_in_fp32");
  const json* reduce = member(fields, "grad_reduce_in_fp32");
  if (const json* ddp = member(recipe, "ddp"); reduce == nullptr && ddp != nullptr) {
    reduce = member(*ddp, "grad_reduce_in_fp32");
    pointer = pointer_of("ddp", "grad_reduce_in_fp32");
  }
  if (reduce != nullptr && !reduce->is_boolean())
    throw InputError(t.file(), pointer, "expected true or false, got " + reduce->dump());
  if (reduce != nullptr && is_bf16 && !reduce->get<bool>())
    t.add("--grad-reduce-in-bf16", {}, pointer);
}

// dataset.seq_length (Bridge's dataset configs spell it so) stands for model.seq_length.
void read_dataset_sequence(Translation& t, const json& recipe) {
  const json* dataset = member(recipe, "dataset");
  if (dataset == nullptr)
    return;
  for (const char* key : {"seq_length", "sequence_length"}) {
    const json* seq = member(*dataset, key);
    if (seq == nullptr)
      continue;
    const json* model = member(recipe, "model");
    const json* model_seq = model != nullptr ? member(*model, "seq_length") : nullptr;
    if (model_seq == nullptr) {
      t.add_value({"--seq-length", false}, *seq, pointer_of("dataset", key));
    } else if (*model_seq != *seq) {
      throw InputError(
          t.file(), pointer_of("dataset", key),
          "differs from /model/seq_length (" + model_seq->dump() + "), got " + seq->dump());
    }
  }
}

}  // namespace

MegatronImport import_bridge(const json& recipe, const std::string& file,
                             const MegatronImportOptions& options, Catalog& catalog) {
  if (!recipe.is_object())
    throw InputError(file, "",
                     "expected a mapping of ConfigContainer sections (model, train, ...)");
  Translation t(file);
  for (const auto& [section, keys] : recipe.items()) {
    if (section == "_target_" || section == "mixed_precision")
      continue;
    if (section == "model") {
      read_section(t, section, keys, {});
      read_activation(t, keys);
    } else if (section == "ddp") {
      read_section(t, section, keys, {"grad_reduce_in_fp32"});
    } else if (argument_of_bridge_key(section, "") && section != "mixed_precision") {
      read_section(t, section, keys, {});
    } else if (const char* why = ignored_bridge_section(section)) {
      if (section == "dist" && keys.is_object() && keys.contains("use_torch_fsdp2"))
        t.add_value({"--use-torch-fsdp2", false}, keys.at("use_torch_fsdp2"),
                    pointer_of("dist", "use_torch_fsdp2"));
      if (!keys.is_null())
        t.note(pointer_of(section, ""), section + ": ignored: " + why);
    } else if (section == "peft") {
      if (!keys.is_null())
        t.unmodelled(pointer_of(section, ""),
                     "peft: parameter-efficient fine-tuning; capsim models training every "
                     "weight");
    } else {
      t.unmodelled(pointer_of(section, ""),
                   section +
                       ": not a ConfigContainer section capsim knows; it may change the "
                       "step (give --allow-unmodelled to model the run without it)");
    }
  }
  read_precision(t, recipe);
  read_dataset_sequence(t, recipe);
  MegatronArgumentSource source = t.take();
  source.absent_location = [](const std::string& argument) {
    const BridgeKey k = bridge_key_of_argument(argument);
    return k.section == "mixed_precision" ? std::string("/mixed_precision")
                                          : pointer_of(k.section, k.key);
  };
  return import_megatron_arguments(source, file, options, catalog);
}

}  // namespace capsim::io
