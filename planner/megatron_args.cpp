#include "planner/megatron_args.hpp"

#include <vector>

#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

void add(std::string& out, const std::string& arg) {
  if (!out.empty())
    out += ' ';
  out += arg;
}

void add(std::string& out, const char* flag, long long value) {
  add(out, io::printf_string("%s %lld", flag, value));
}

// The layers of each virtual stage in Megatron's order (virtual stage j of pipeline rank i is
// chunk j·p + i), each rank's layers dealt evenly over its chunks; empty when a rank's layers
// do not divide over them.
std::vector<int> chunk_layers(const Parallelism& p) {
  const int v = p.virtual_pipeline_stages;
  std::vector<int> chunks(static_cast<size_t>(p.pipeline * v), 0);
  for (int rank = 0; rank < p.pipeline; ++rank) {
    const int layers = p.stage_layers[static_cast<size_t>(rank)];
    if (layers % v != 0)
      return {};
    for (int j = 0; j < v; ++j)
      chunks[static_cast<size_t>(j * p.pipeline + rank)] = layers / v;
  }
  return chunks;
}

// --pipeline-model-parallel-layout for an uneven split: the embedding before the first chunk's
// layers, the loss after the last's.
std::string layout_argument(const Parallelism& p) {
  const std::vector<int> chunks = chunk_layers(p);
  if (chunks.empty())
    return {};
  std::string layout;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i > 0)
      layout += '|';
    if (i == 0)
      layout += 'E';
    if (chunks[i] > 0)
      layout += io::printf_string("t*%d", chunks[i]);
    if (i + 1 == chunks.size())
      layout += 'L';
  }
  return "--pipeline-model-parallel-layout \"" + layout + "\"";
}

}  // namespace

std::string megatron_arguments(const Scenario& scenario) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  std::string out;
  add(out, "--num-layers", m.num_layers);
  add(out, "--hidden-size", m.hidden_size);
  add(out, "--num-attention-heads", m.num_attention_heads);
  if (m.num_kv_heads > 0 && m.num_kv_heads != m.num_attention_heads) {
    add(out, "--group-query-attention");
    add(out, "--num-query-groups", m.num_kv_heads);
  }
  if (m.ffn_hidden_size > 0)
    add(out, "--ffn-hidden-size", m.ffn_hidden_size);
  if (m.ffn_activation == FfnActivation::kSwiglu)
    add(out, "--swiglu");
  add(out, "--seq-length", m.seq_length);
  add(out, "--tensor-model-parallel-size", p.tensor);
  add(out, "--pipeline-model-parallel-size", p.pipeline);
  if (p.context > 1)
    add(out, "--context-parallel-size", p.context);
  if (p.expert > 1)
    add(out, "--expert-model-parallel-size", p.expert);
  if (m.moe && p.expert_tensor_or_default() != p.tensor)
    add(out, "--expert-tensor-parallel-size", p.expert_tensor_or_default());
  if (p.virtual_pipeline_stages > 1)
    add(out, "--num-virtual-stages-per-pipeline-rank", p.virtual_pipeline_stages);
  if (!p.stage_layers.empty()) {
    const std::string layout = layout_argument(p);
    if (!layout.empty())
      add(out, layout);
  }
  if (p.sequence_parallel)
    add(out, "--sequence-parallel");
  add(out, "--micro-batch-size", p.micro_batch_size);
  add(out, "--global-batch-size", p.global_batch_size);
  if (p.recompute == Recompute::kSelective) {
    add(out, "--recompute-granularity selective");
    if (p.recompute_modules != kDefaultRecomputeModules) {
      std::string modules = "--recompute-modules";
      for (const RecomputeModule module : kAllRecomputeModules) {
        if ((p.recompute_modules & module) != 0)
          modules += std::string(" ") + to_string(module);
      }
      add(out, modules);
    }
  } else if (p.recompute == Recompute::kFull) {
    add(out, "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
  }
  // Megatron's distributed optimizer shards the optimizer states and reduce-scatters the
  // gradients (ZeRO-1 and ZeRO-2's communication); ZeRO-3 is its FSDP.
  if (p.zero_stage == 1 || p.zero_stage == 2)
    add(out, "--use-distributed-optimizer");
  else if (p.zero_stage == 3)
    add(out, "--use-torch-fsdp2");
  switch (p.precision) {
    case Precision::kBf16:
      add(out, "--bf16");
      break;
    case Precision::kFp16:
      add(out, "--fp16");
      break;
    case Precision::kFp8:
      add(out, "--bf16 --fp8-format hybrid");
      if (p.fp8_params)
        add(out, "--fp8-param-gather");
      break;
    // Megatron-Core's --fp8-recipe names (arguments.py): current scaling is "tensorwise".
    case Precision::kFp8Cs:
      add(out, "--bf16 --fp8-format hybrid --fp8-recipe tensorwise");
      break;
    case Precision::kFp8Blockwise:
      add(out, "--bf16 --fp8-format e4m3 --fp8-recipe blockwise");
      break;
    case Precision::kMxfp8:
      add(out, "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8");
      break;
    case Precision::kNvfp4:
      add(out, "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4");
      break;
    case Precision::kFp32:  // Megatron's default without a precision flag
      break;
  }
  return out;
}

}  // namespace capsim::planner
