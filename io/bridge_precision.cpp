#include "io/bridge_precision.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace capsim::io {
namespace {

using nlohmann::json;

struct Recipe {
  std::string_view name;
  bool bf16;             // else fp16
  std::string_view fp8;  // MixedPrecisionConfig.fp8 ("" none)
  std::string_view fp8_recipe;
  bool fp8_param_gather;
  int bf16_end_layers;  // first_last_layers_bf16 with this many layers at each end (0 none)
};

// megatron/bridge/training/mixed_precision.py, each @register'ed recipe.
constexpr auto kRecipes = std::to_array<Recipe>({
    {"bf16_mixed", true, "", "", false, 0},
    {"fp16_mixed", false, "", "", false, 0},
    {"bf16_with_fp8_delayed_scaling_mixed", true, "hybrid", "delayed", true, 0},
    {"fp16_with_fp8_delayed_scaling_mixed", false, "hybrid", "delayed", true, 0},
    {"bf16_with_mxfp8_mixed", true, "e4m3", "mxfp8", true, 0},
    {"fp16_with_mxfp8_mixed", false, "e4m3", "mxfp8", true, 0},
    {"bf16_with_fp8_current_scaling_mixed", true, "hybrid", "tensorwise", true, 1},
    {"nemotron_h_bf16_with_fp8_current_scaling_mixed", true, "hybrid", "tensorwise", true, 2},
    {"nanov2_bf16_with_fp8_current_scaling_mixed", true, "hybrid", "blockwise", true, 2},
    {"fp16_with_fp8_current_scaling_mixed", false, "hybrid", "tensorwise", true, 1},
    {"bf16_with_fp8_subchannel_scaling_mixed", true, "hybrid", "blockwise", false, 0},
    {"fp16_with_fp8_subchannel_scaling_mixed", false, "hybrid", "blockwise", false, 0},
});

json fields_of(const Recipe& r) {
  json f = json::object();
  f[r.bf16 ? "bf16" : "fp16"] = true;
  // bf16_mixed reduces gradients in fp32, fp16_mixed in fp16.
  f["grad_reduce_in_fp32"] = r.bf16;
  if (!r.fp8.empty()) {
    f["fp8"] = std::string(r.fp8);
    f["fp8_recipe"] = std::string(r.fp8_recipe);
    f["fp8_param_gather"] = r.fp8_param_gather;
  }
  if (r.bf16_end_layers > 0) {
    f["first_last_layers_bf16"] = true;
    f["num_layers_at_start_in_bf16"] = r.bf16_end_layers;
    f["num_layers_at_end_in_bf16"] = r.bf16_end_layers;
  }
  return f;
}

// `fields` without the false booleans, which equal their absence.
json without_false(const json& fields) {
  json out = json::object();
  for (const auto& [key, value] : fields.items()) {
    if (!(value.is_boolean() && !value.get<bool>()))
      out[key] = value;
  }
  return out;
}

}  // namespace

std::optional<json> bridge_precision_recipe(const std::string& name) {
  std::string underscored = name;
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  for (const Recipe& r : kRecipes) {
    if (r.name == underscored)
      return fields_of(r);
  }
  return std::nullopt;
}

std::vector<std::string> bridge_precision_recipe_names() {
  std::vector<std::string> out;
  for (const Recipe& r : kRecipes)
    out.emplace_back(r.name);
  return out;
}

std::optional<std::string> bridge_precision_recipe_of(const json& fields) {
  const json given = without_false(fields);
  for (const Recipe& r : kRecipes) {
    if (without_false(fields_of(r)) == given)
      return std::string(r.name);
  }
  return std::nullopt;
}

}  // namespace capsim::io
