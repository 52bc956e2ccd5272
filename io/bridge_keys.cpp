#include "io/bridge_keys.hpp"

#include <array>
#include <string>
#include <utility>

namespace capsim::io {
namespace {

struct Renamed {
  std::string_view section;
  std::string_view key;
  std::string_view argument;
  bool inverted;
};

// Bridge keys whose section is not "model" or whose name differs from the Megatron-LM argument
// (Megatron-Bridge's ConfigContainer, GPTModelProvider and MixedPrecisionConfig fields; Megatron
// -LM's megatron/training/arguments.py). The first entry of an argument is where export writes it.
constexpr auto kRenamed = std::to_array<Renamed>({
    {"train", "micro_batch_size", "--micro-batch-size", false},
    {"train", "global_batch_size", "--global-batch-size", false},
    {"model", "num_moe_experts", "--num-experts", false},
    {"model", "virtual_pipeline_model_parallel_size", "--num-virtual-stages-per-pipeline-rank",
     false},
    {"model", "microbatch_group_size_per_vp_stage",
     "--microbatch-group-size-per-virtual-pipeline-stage", false},
    {"model", "gated_linear_unit", "--swiglu", false},
    {"model", "share_embeddings_and_output_weights", "--untie-embeddings-and-output-weights", true},
    {"model", "apply_rope_fusion", "--no-rope-fusion", true},
    {"model", "add_bias_linear", "--disable-bias-linear", true},
    {"ddp", "use_distributed_optimizer", "--use-distributed-optimizer", false},
    {"optimizer", "use_distributed_optimizer", "--use-distributed-optimizer", false},
    {"ddp", "overlap_grad_reduce", "--overlap-grad-reduce", false},
    {"ddp", "overlap_param_gather", "--overlap-param-gather", false},
    {"ddp", "bucket_size", "--ddp-bucket-size", false},
    {"ddp", "grad_reduce_in_fp32", "--grad-reduce-in-bf16", true},
    {"mixed_precision", "grad_reduce_in_fp32", "--grad-reduce-in-bf16", true},
    {"dist", "use_torch_fsdp2", "--use-torch-fsdp2", false},
    {"comm_overlap", "tp_comm_overlap", "--tp-comm-overlap", false},
    {"optimizer", "optimizer", "--optimizer", false},
    {"optimizer", "use_precision_aware_optimizer", "--use-precision-aware-optimizer", false},
    {"optimizer", "exp_avg_dtype", "--exp-avg-dtype", false},
    {"optimizer", "exp_avg_sq_dtype", "--exp-avg-sq-dtype", false},
    {"optimizer", "main_params_dtype", "--main-params-dtype", false},
    {"mixed_precision", "bf16", "--bf16", false},
    {"mixed_precision", "fp16", "--fp16", false},
    {"mixed_precision", "fp8", "--fp8-format", false},
    {"mixed_precision", "fp8_recipe", "--fp8-recipe", false},
    {"mixed_precision", "fp8_param_gather", "--fp8-param-gather", false},
    {"mixed_precision", "fp8_dot_product_attention", "--fp8-dot-product-attention", false},
    {"mixed_precision", "fp4", "--fp4-format", false},
    {"mixed_precision", "fp4_recipe", "--fp4-recipe", false},
});

// Sections whose other keys are Megatron-LM arguments spelled like them.
constexpr auto kByName = std::to_array<std::string_view>(
    {"model", "train", "ddp", "optimizer", "mixed_precision", "comm_overlap"});

constexpr const char* kRunControl = "process setup and run control";

constexpr auto kIgnoredSections = std::to_array<std::pair<std::string_view, const char*>>({
    {"checkpoint", "checkpoint paths, formats and intervals"},
    {"dataset", "the data and its loading"},
    {"dist", kRunControl},
    {"ft", kRunControl},
    {"inprocess_restart", kRunControl},
    {"logger", "logging"},
    {"nvrx_straggler", kRunControl},
    {"profiling", "profiling"},
    {"rerun_state_machine", kRunControl},
    {"rng", "the random seed"},
    {"scheduler", "the learning-rate schedule (the step does the same work)"},
    {"straggler", kRunControl},
    {"tensor_inspect", "logging"},
    {"tokenizer", "the tokenizer's files (model.vocab_size is the vocabulary)"},
});

// Bridge's own keys (DistributedDataParallelConfig) that leave the step's work as it is.
struct IgnoredKey {
  std::string_view section;
  std::string_view key;
  const char* why;
};
constexpr auto kIgnoredKeys = std::to_array<IgnoredKey>({
    {"ddp", "check_for_nan_in_grad", "a check of the reduced gradients"},
    {"ddp", "check_for_large_grads", "a check of the reduced gradients"},
    {"ddp", "average_in_collective", "where the gradients are averaged (the same reduction)"},
});

std::string with(std::string_view text, char from, char to) {
  std::string out(text);
  for (char& c : out) {
    if (c == from)
      c = to;
  }
  return out;
}

}  // namespace

BridgeKey bridge_key_of_argument(std::string_view argument) {
  for (const Renamed& r : kRenamed) {
    if (r.argument == argument)
      return {std::string(r.section), std::string(r.key), r.inverted};
  }
  if (argument.starts_with("--"))
    argument.remove_prefix(2);
  return {"model", with(argument, '-', '_'), false};
}

std::optional<BridgeArgument> argument_of_bridge_key(std::string_view section,
                                                     std::string_view key) {
  for (const Renamed& r : kRenamed) {
    if (r.section == section && r.key == key)
      return BridgeArgument{std::string(r.argument), r.inverted};
  }
  for (const std::string_view s : kByName) {
    if (s == section)
      return BridgeArgument{"--" + with(key, '_', '-'), false};
  }
  return std::nullopt;
}

const char* ignored_bridge_key(std::string_view section, std::string_view key) {
  for (const IgnoredKey& k : kIgnoredKeys) {
    if (k.section == section && k.key == key)
      return k.why;
  }
  return nullptr;
}

const char* ignored_bridge_section(std::string_view section) {
  for (const auto& [name, why] : kIgnoredSections) {
    if (name == section)
      return why;
  }
  return nullptr;
}

}  // namespace capsim::io
