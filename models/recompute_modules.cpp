#include "models/recompute_modules.hpp"

namespace capsim {

const char* to_string(RecomputeModule module) {
  switch (module) {
    case kRecomputeCoreAttention:
      return "core_attn";
    case kRecomputeLayernorm:
      return "layernorm";
    case kRecomputeMoeActivation:
      return "moe_act";
    case kRecomputeMlaUpProjection:
      return "mla_up_proj";
    case kRecomputeMlp:
      return "mlp";
    case kRecomputeMoe:
      return "moe";
    case kRecomputeSharedExperts:
      return "shared_experts";
  }
  return "core_attn";
}

std::optional<RecomputeModule> recompute_module_from_string(std::string_view name) {
  for (const RecomputeModule module : kAllRecomputeModules) {
    if (name == to_string(module))
      return module;
  }
  return std::nullopt;
}

}  // namespace capsim
