#include "planner/bridge_overrides.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "planner/megatron_args.hpp"

#include "io/bridge_keys.hpp"
#include "io/bridge_precision.hpp"
#include "io/launch_script.hpp"
#include "io/yaml_writer.hpp"

namespace capsim::planner {
namespace {

using json = nlohmann::ordered_json;

// One argument and its values.
struct Argument {
  std::string name;
  std::vector<std::string> values;
};

std::vector<Argument> split_arguments(const std::string& line) {
  std::vector<Argument> out;
  for (const io::ScriptWord& w : io::launch_arguments(line, "arguments")) {
    if (w.text.starts_with("--"))
      out.push_back({w.text, {}});
    else
      out.back().values.push_back(w.text);
  }
  return out;
}

// A value as YAML types it: an integer, a number, else a string.
json typed(const std::string& text) {
  long long i = 0;
  const char* end = text.data() + text.size();
  if (auto [p, ec] = std::from_chars(text.data(), end, i); ec == std::errc() && p == end)
    return i;
  double d = 0.0;
  if (auto [p, ec] = std::from_chars(text.data(), end, d); ec == std::errc() && p == end)
    return d;
  return text;
}

// --moe-layer-freq "([0]*K+[1]*M)" as Bridge's list of 0 (dense) and 1 (MoE) per layer.
json layer_freq_list(const std::string& pattern) {
  int dense = 0;
  int sparse = 0;
  if (std::sscanf(pattern.c_str(), "([0]*%d+[1]*%d)", &dense, &sparse) != 2)
    return pattern;
  json list = json::array();
  for (int k = 0; k < dense + sparse; ++k)
    list.push_back(k < dense ? 0 : 1);
  return list;
}

// --window-size "W,0" as Bridge's (left, right) pair.
json window_pair(const std::string& text) {
  json pair = json::array();
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    pair.push_back(typed(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return pair;
}

bool is_precision_argument(const std::string& name) {
  for (const char* p :
       {"--bf16", "--fp16", "--fp8-format", "--fp8-recipe", "--fp8-param-gather",
        "--fp8-dot-product-attention", "--fp4-format", "--fp4-recipe", "--grad-reduce-in-bf16"}) {
    if (name == p)
      return true;
  }
  return false;
}

// The mixed_precision section from the precision arguments: a recipe name when one sets exactly
// these fields, else the fields.
json precision_section(const std::vector<Argument>& args) {
  json fields = json::object();
  bool bf16_reduce = false;
  for (const Argument& a : args) {
    if (!is_precision_argument(a.name))
      continue;
    if (a.name == "--grad-reduce-in-bf16") {
      bf16_reduce = true;
      continue;
    }
    const io::BridgeKey k = io::bridge_key_of_argument(a.name);
    fields[k.key] = a.values.empty() ? json(true) : json(a.values.front());
  }
  if (fields.empty())
    return nullptr;
  // Megatron-LM's --fp8-format without --fp8-recipe is delayed scaling.
  if (fields.contains("fp8") && !fields.contains("fp8_recipe"))
    fields["fp8_recipe"] = "delayed";
  if (fields.contains("fp8") && !fields.contains("fp8_param_gather"))
    fields["fp8_param_gather"] = false;
  fields["grad_reduce_in_fp32"] = fields.contains("bf16") && !bf16_reduce;
  if (const auto name = io::bridge_precision_recipe_of(nlohmann::json::parse(fields.dump())))
    return *name;
  return fields;
}

}  // namespace

json bridge_overrides(const Scenario& scenario) {
  const std::vector<Argument> args =
      split_arguments(megatron_arguments(scenario, MegatronArgumentSet::kComplete));
  json out = {{"model", json::object()}, {"train", json::object()}, {"ddp", json::object()}};
  bool cross_entropy_fusion = false;
  for (const Argument& a : args) {
    if (a.name == "--group-query-attention" || is_precision_argument(a.name))
      continue;  // num_query_groups says it; mixed_precision below
    // Bridge's providers have no squared-ReLU switch: the function itself is the setting.
    if (a.name == "--squared-relu") {
      out["model"]["activation_func"] = {{"_target_", "megatron.core.activations.squared_relu"},
                                         {"_call_", false}};
      continue;
    }
    const io::BridgeKey k = io::bridge_key_of_argument(a.name);
    json value;
    if (a.values.empty())
      value = !k.inverted;
    else if (a.name == "--moe-layer-freq")
      value = layer_freq_list(a.values.front());
    else if (a.name == "--window-size")
      value = window_pair(a.values.front());
    else if (a.values.size() > 1 || a.name == "--recompute-modules")
      value = json(a.values);
    else
      value = typed(a.values.front());
    out[k.section][k.key] = value;
    if (a.name == "--use-distributed-optimizer")
      out["optimizer"]["use_distributed_optimizer"] = true;
    // Bridge's model providers take the function beside the flag (torch.nn.functional.silu).
    if (a.name == "--swiglu")
      out["model"]["activation_func"] = {{"_target_", "torch.nn.functional.silu"},
                                         {"_call_", false}};
    cross_entropy_fusion = cross_entropy_fusion || a.name == "--cross-entropy-loss-fusion";
  }
  // Bridge's GPT providers fuse the loss unless told otherwise; Megatron-LM's default does not.
  if (!cross_entropy_fusion)
    out["model"]["cross_entropy_loss_fusion"] = false;
  const json precision = precision_section(args);
  if (!precision.is_null()) {
    out["mixed_precision"] = precision;
    if (scenario.parallelism.precision != Precision::kFp16) {
      out["ddp"]["grad_reduce_in_fp32"] =
          !(scenario.parallelism.grad_reduce_precision == Precision::kBf16);
    }
  }
  return out;
}

std::vector<std::string> bridge_unexpressed(const Scenario& scenario) {
  std::vector<std::string> out = megatron_unexpressed(scenario);
  const Parallelism& p = scenario.parallelism;
  if (p.precision == Precision::kFp16 && p.grad_reduce_precision == Precision::kBf16)
    out.emplace_back("parallelism.grad_reduce_precision \"bf16\" in fp16 training");
  return out;
}

std::string bridge_overrides_yaml(const Scenario& scenario) {
  return io::write_yaml(bridge_overrides(scenario), false,
                        "Megatron-Bridge recipe overrides for " + scenario.name +
                            " (capsim export bridge; read back by capsim import bridge)");
}

}  // namespace capsim::planner
