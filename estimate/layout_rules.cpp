#include "estimate/layout_rules.hpp"

#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

#include "models/low_precision.hpp"
#include "models/pipeline_partition.hpp"

#include "estimate/pipeline_schedule.hpp"

namespace capsim::estimate {
namespace {

template <class T>
std::string num(T v) {
  return std::to_string(v);
}

// "; microbatch_group_size N runs them" for the smallest group that fits, or nothing.
std::string fitting_group_hint(int pipeline, std::int64_t micro_batches) {
  const int group = smallest_fitting_group(pipeline, static_cast<int>(micro_batches));
  return group > 0 ? "; microbatch_group_size " + num(group) + " runs them" : "";
}

// A broken rule's key below /parallelism and its message.
struct Finding {
  std::string key;
  std::string message;
};

// The preconditions of moe_a2a_overlap (Megatron-Core transformer_config.py,
// overlap_moe_expert_parallel_comm).
template <class Report>
void check_a2a_overlap_rules(const ModelSpec& m, const Parallelism& p, Report&& report) {
  if (p.expert == 1) {
    report(LayoutRule::kA2aOverlapNeedsExpert, [] {
      return Finding{"moe_a2a_overlap",
                     "moe_a2a_overlap hides the expert-parallel all-to-alls; it needs expert > 1"};
    });
  }
  if (p.token_dispatcher == TokenDispatcher::kAllGather) {
    report(LayoutRule::kA2aOverlapDispatcher, [] {
      return Finding{"token_dispatcher",
                     "moe_a2a_overlap needs token_dispatcher \"alltoall\" or \"deepep\", not "
                     "\"allgather\""};
    });
  }
  // Megatron-Core's combined 1F1B forbids full recompute; DualPipeV's pairs replay the forward
  // inside the backward they overlap.
  if (p.recompute == Recompute::kFull && p.schedule != Schedule::kDualPipeV) {
    report(LayoutRule::kA2aOverlapRecompute, [] {
      return Finding{"recompute",
                     "moe_a2a_overlap does not run with recompute \"full\" (Megatron-Core: "
                     "\"disable full recomputation when enabling "
                     "overlap_moe_expert_parallel_comm\")"};
    });
  }
  if (p.pipeline > 1 && p.virtual_pipeline_stages < 2) {
    report(LayoutRule::kA2aOverlapNeedsInterleaving, [&] {
      return Finding{"virtual_pipeline_stages",
                     "moe_a2a_overlap with pipeline (" + num(p.pipeline) +
                         ") overlaps the micro-batches of interleaved virtual stages; it needs "
                         "virtual_pipeline_stages > 1 (or schedule \"dualpipev\")"};
    });
  }
  if (m.mtp_layers > 1) {
    report(LayoutRule::kA2aOverlapMtp, [&] {
      return Finding{"moe_a2a_overlap",
                     "moe_a2a_overlap runs with at most one MTP layer, "
                     "and mtp_layers is " +
                         num(m.mtp_layers)};
    });
  }
}

// What keeps Transformer Engine's fused grouped MLP from running (te.pytorch.ops fused grouped
// MLP: cuDNN frontend's kernels for compute capability 10, MXFP8 or NVFP4 quantization;
// Megatron-Core asserts expert tensor parallelism 1); "" when it runs.
std::string fused_grouped_mlp_problem(const ClusterSpec& c, const Parallelism& p) {
  if (c.gpu.architecture != "blackwell")
    return "runs on Blackwell GPUs only; cluster.gpu " + c.gpu.name + " is " + c.gpu.architecture;
  if (p.precision != Precision::kMxfp8 && p.precision != Precision::kNvfp4) {
    return std::string("quantizes in mxfp8 or nvfp4; precision is \"") + to_string(p.precision) +
           "\"";
  }
  if (p.expert_tensor_or_default() != 1)
    return "needs expert_tensor 1, got " + num(p.expert_tensor_or_default());
  return "";
}

// The mixture-of-experts rules of check_rules, in their order. The expert layers fold onto each
// stage's tensor x context x data GPUs as expert x expert_tensor x expert data (Megatron-Core
// parallel_state.py: "world_size ... is not divisible by expert_tensor_model_pipeline_parallel
// size"); the other rules are Megatron-LM's argument checks (arguments.py, transformer_config.py,
// the flex dispatcher's "requires TPxEP > 1").
template <class Report>
void check_expert_rules(const ModelSpec& m, const ClusterSpec& c, const Parallelism& p,
                        Report&& report) {
  const MoeSpec& moe = *m.moe;
  const int etp = p.expert_tensor_or_default();
  // The key an expert_tensor finding points at: the one that set it.
  const char* etp_key = p.expert_tensor ? "expert_tensor" : "tensor";
  const std::string etp_named =
      "expert_tensor (" + num(etp) + (p.expert_tensor ? ")" : ", the default: tensor)");
  if (moe.num_experts % p.expert != 0) {
    report(LayoutRule::kExpertSplit, [&] {
      return Finding{"expert", "moe.num_experts (" + num(moe.num_experts) +
                                   ") is not divisible by expert (" + num(p.expert) +
                                   "): every expert-parallel rank holds as many experts"};
    });
  }
  if (moe.ffn_hidden_size % etp != 0) {
    report(LayoutRule::kExpertTensorSplit, [&] {
      return Finding{etp_key, "moe.ffn_hidden_size (" + num(moe.ffn_hidden_size) +
                                  ") is not divisible by " + etp_named};
    });
  }
  const std::int64_t expert_ranks = std::int64_t{p.expert} * etp;
  const std::int64_t stage_gpus = std::int64_t{p.tensor} * p.context * p.data;
  if (stage_gpus % expert_ranks != 0) {
    report(LayoutRule::kExpertFolding, [&] {
      return Finding{"expert", "expert (" + num(p.expert) + ") x " + etp_named + " = " +
                                   num(expert_ranks) +
                                   " does not divide tensor x context x data (" + num(stage_gpus) +
                                   "): the expert layers fold onto each stage's GPUs"};
    });
  }
  if (c.gpus_per_node % etp != 0 && etp % c.gpus_per_node != 0) {
    report(LayoutRule::kExpertTensorTilesNodes, [&] {
      return Finding{etp_key, etp_named + " must divide gpus_per_node (" + num(c.gpus_per_node) +
                                  ") or be a multiple of it"};
    });
  }
  if (p.expert > 1 && p.tensor > 1 && !p.sequence_parallel) {
    report(LayoutRule::kExpertNeedsSequenceParallel, [&] {
      return Finding{"sequence_parallel",
                     "expert (" + num(p.expert) + ") with tensor (" + num(p.tensor) +
                         ") needs sequence_parallel true (Megatron-Core: \"When using expert "
                         "parallelism and tensor parallelism, sequence parallelism must be "
                         "used\")"};
    });
  }
  if (p.expert > 1 && p.precision == Precision::kFp16) {
    report(LayoutRule::kExpertPrecision, [&] {
      return Finding{"precision", "expert (" + num(p.expert) +
                                      ") does not train in precision \"fp16\" (Megatron-LM: "
                                      "\"Expert parallelism is not supported with fp16 "
                                      "training\"); use \"bf16\""};
    });
  }
  if (p.token_dispatcher == TokenDispatcher::kDeepEp && expert_ranks == 1) {
    report(LayoutRule::kDeepEpNeedsExpertRanks, [&] {
      return Finding{"token_dispatcher",
                     "token_dispatcher \"deepep\" exchanges tokens between expert ranks; it "
                     "needs expert x expert_tensor > 1 (Megatron-Core: \"Flex token dispatcher "
                     "requires TPxEP > 1\")"};
    });
  }
  if (p.moe_a2a_overlap)
    check_a2a_overlap_rules(m, p, report);
  if (moe.fused_grouped_mlp) {
    if (const std::string problem = fused_grouped_mlp_problem(c, p); !problem.empty()) {
      report(LayoutRule::kFusedGroupedMlp, [&] {
        return Finding{
            "/model/moe/fused_grouped_mlp",
            "moe.fused_grouped_mlp (Transformer Engine's CuTe DSL grouped MLP) " + problem};
      });
    }
  }
}

// Selective recompute replays parts of a layer; each module named must exist in the model
// (Megatron-Core's TransformerLayer and MoELayer ignore the others silently, which capsim does
// not).
template <class Report>
void check_recompute_modules(const ModelSpec& m, const Parallelism& p, Report&& report) {
  if (auto problem = recompute_module_problem(m, p.replayed_modules())) {
    report(LayoutRule::kRecomputeModulePresent, [&] {
      return Finding{"recompute_modules", *problem};
    });
  }
}

// Calls `report(rule, describe)` for every rule the layout breaks, in the rules' order, where
// `describe()` returns the Finding; callers that only need the rules never build the messages.
// Each rule guards its own arithmetic (64-bit products), as it runs whatever the others found.
template <class Report>
void check_rules(const ModelSpec& m, const ClusterSpec& c, const Parallelism& p, Report&& report) {
  // Each factor may be up to 2^20, and an int product could wrap to a match.
  const std::int64_t layout_gpus = std::int64_t{p.tensor} * p.pipeline * p.data * p.context;
  if (layout_gpus != c.num_gpus()) {
    report(LayoutRule::kGpuCount, [&] {
      return Finding{"data", "tensor (" + num(p.tensor) + ") x pipeline (" + num(p.pipeline) +
                                 ") x data (" + num(p.data) + ") x context (" + num(p.context) +
                                 ") = " + num(layout_gpus) + " must equal gpus_per_node (" +
                                 num(c.gpus_per_node) + ") x num_nodes (" + num(c.num_nodes) +
                                 ") = " + num(c.num_gpus())};
    });
  }

  // Tensor parallelism splits the heads and the FFN columns evenly over its ranks.
  const auto tensor_divides = [&](int value, const char* name) {
    if (value % p.tensor != 0) {
      report(LayoutRule::kTensorSplit, [&] {
        return Finding{"tensor", std::string(name) + " (" + num(value) +
                                     ") is not divisible by tensor (" + num(p.tensor) + ")"};
      });
    }
  };
  tensor_divides(m.num_attention_heads, "num_attention_heads");
  tensor_divides(m.num_kv_heads, "num_kv_heads");
  // A mixture-of-experts model without dense layers has no dense FFN to split; its shared
  // expert is a dense FFN split over tensor (Megatron-Core SharedExpertMLP).
  if (m.has_dense_ffn_layers())
    tensor_divides(m.ffn_hidden_size, "ffn_hidden_size");
  if (m.moe && m.moe->shared_expert_ffn_hidden_size > 0)
    tensor_divides(m.moe->shared_expert_ffn_hidden_size, "moe.shared_expert_ffn_hidden_size");

  if (p.sequence_parallel && p.tensor == 1) {
    report(LayoutRule::kSequenceParallelNeedsTensor, [] {
      return Finding{"sequence_parallel", "sequence_parallel needs tensor > 1"};
    });
  }
  if (p.tp_comm_overlap && !p.sequence_parallel) {
    report(LayoutRule::kTpOverlapNeedsSequenceParallel, [] {
      return Finding{"tp_comm_overlap",
                     "tp_comm_overlap overlaps the sequence-parallel collectives with the GEMMs; "
                     "it needs sequence_parallel true (Megatron-LM: \"Tensor parallel "
                     "communication/GEMM overlap can happen only when sequence parallelism is "
                     "enabled\")"};
    });
  }
  if (p.context > 1 && m.seq_length % (2 * p.context) != 0) {
    report(LayoutRule::kContextSplit, [&] {
      return Finding{"context", "seq_length (" + num(m.seq_length) +
                                    ") is not divisible by 2 x context (" + num(2 * p.context) +
                                    "), which load-balanced causal CP needs"};
    });
  }

  // Megatron's rank order (tensor fastest) must tile the nodes, or groups straddle them.
  const auto tiles_nodes = [&](std::int64_t n) {
    return c.gpus_per_node % n == 0 || n % c.gpus_per_node == 0;
  };
  if (!tiles_nodes(p.tensor)) {
    report(LayoutRule::kTensorTilesNodes, [&] {
      return Finding{"tensor", "tensor (" + num(p.tensor) + ") must divide gpus_per_node (" +
                                   num(c.gpus_per_node) + ") or be a multiple of it"};
    });
  }
  const std::int64_t stage_gpus = std::int64_t{p.tensor} * p.context * p.data;
  if (!tiles_nodes(stage_gpus)) {
    report(LayoutRule::kStageTilesNodes, [&] {
      return Finding{"data", "tensor x context x data (" + num(stage_gpus) +
                                 ") must divide gpus_per_node (" + num(c.gpus_per_node) +
                                 ") or be a multiple of it"};
    });
  }

  // Sequence parallelism splits each CP rank's sequence over the TP ranks
  // (scatter_to_sequence_parallel_region divides its first dimension evenly).
  const std::int64_t sp_ranks = std::int64_t{p.tensor} * p.context;
  if (p.sequence_parallel && m.seq_length % sp_ranks != 0) {
    report(LayoutRule::kSequenceParallelSplit, [&] {
      return Finding{"sequence_parallel", "seq_length (" + num(m.seq_length) +
                                              ") is not divisible by tensor x context (" +
                                              num(sp_ranks) +
                                              "), which sequence parallelism needs"};
    });
  }

  const std::int64_t batch_per_step = std::int64_t{p.micro_batch_size} * p.data;
  if (p.global_batch_size % batch_per_step != 0) {
    report(LayoutRule::kBatchSplit, [&] {
      return Finding{"global_batch_size", "global_batch_size (" + num(p.global_batch_size) +
                                              ") is not divisible by micro_batch_size (" +
                                              num(p.micro_batch_size) + ") x data (" + num(p.data) +
                                              ")"};
    });
  }

  // The interleaved schedule and virtual stages come together, and it plays the micro-batches
  // in groups of `pipeline`; DualPipeV runs two chunks per stage.
  const bool interleaved = p.schedule == Schedule::kInterleaved;
  const bool dual = p.schedule == Schedule::kDualPipeV;
  if (interleaved && p.virtual_pipeline_stages < 2) {
    report(LayoutRule::kScheduleStages, [] {
      return Finding{"virtual_pipeline_stages",
                     "schedule \"interleaved-1f1b\" needs virtual_pipeline_stages > 1"};
    });
  }
  if (dual && p.virtual_pipeline_stages != 2) {
    report(LayoutRule::kScheduleStages, [&] {
      return Finding{"virtual_pipeline_stages",
                     "schedule \"dualpipev\" runs two chunks per stage (the V: stage s holds "
                     "virtual stages s and 2 x pipeline - 1 - s); virtual_pipeline_stages is " +
                         num(p.virtual_pipeline_stages) + ", not 2"};
    });
  }
  if (!interleaved && !dual && p.virtual_pipeline_stages > 1) {
    report(LayoutRule::kScheduleStages, [] {
      return Finding{"schedule",
                     "virtual_pipeline_stages > 1 needs schedule \"interleaved-1f1b\" (or 2 "
                     "with \"dualpipev\")"};
    });
  }
  if ((interleaved || dual) && p.pipeline < 2) {
    report(LayoutRule::kScheduleStages, [&] {
      return Finding{"pipeline",
                     std::string("schedule \"") + to_string(p.schedule) + "\" needs pipeline > 1"};
    });
  }
  const std::int64_t micro_batches = p.global_batch_size / batch_per_step;
  if (p.microbatch_group_size > 0 && !interleaved) {
    report(LayoutRule::kInterleavedMicroBatches, [] {
      return Finding{"microbatch_group_size",
                     "microbatch_group_size needs schedule \"interleaved-1f1b\""};
    });
  } else if (interleaved && p.pipeline > 1 && micro_batches > 0) {
    // Megatron-Core's checks (schedules.py, forward_backward_pipelining_with_interleaving).
    const std::int64_t group = p.micro_batch_group();
    if (p.microbatch_group_size > 0 && (group < p.pipeline || group > micro_batches)) {
      report(LayoutRule::kInterleavedMicroBatches, [&] {
        return Finding{"microbatch_group_size",
                       "microbatch_group_size (" + num(group) + ") must lie between pipeline (" +
                           num(p.pipeline) + ") and the micro-batch count (" + num(micro_batches) +
                           ")"};
      });
    } else if (micro_batches % group != 0 && micro_batches % group < p.pipeline) {
      report(LayoutRule::kInterleavedMicroBatches, [&] {
        const bool default_group = p.microbatch_group_size == 0;
        return Finding{
            default_group ? "global_batch_size" : "microbatch_group_size",
            "interleaved-1f1b runs the micro-batches (" + num(micro_batches) + ") in groups of " +
                num(group) +
                (default_group ? " (pipeline; microbatch_group_size sets another)" : "") +
                ": the last group (" + num(micro_batches % group) +
                ") must be whole or at least pipeline (" + num(p.pipeline) + ")" +
                fitting_group_hint(p.pipeline, micro_batches)};
      });
    }
  }

  if (dual && p.pipeline > 1 && micro_batches > 0 && micro_batches < 2 * p.pipeline) {
    report(LayoutRule::kDualPipeV, [&] {
      return Finding{"global_batch_size",
                     "schedule \"dualpipev\" needs at least 2 x pipeline (" + num(2 * p.pipeline) +
                         ") micro-batches (DualPipeV.step: num_chunks >= "
                         "num_ranks * 2); global_batch_size / (micro_batch_size x data) is " +
                         num(micro_batches)};
    });
  }
  if (dual && p.zero_stage == 3) {
    report(LayoutRule::kDualPipeV, [] {
      return Finding{"zero_stage",
                     "schedule \"dualpipev\" with zero_stage 3: capsim does not model ZeRO-3's "
                     "gathers and reduce-scatters around the backwards DualPipeV splits; use "
                     "zero_stage 0 to 2"};
    });
  }

  if (p.pipeline > m.num_layers) {
    report(LayoutRule::kLayerSplit, [&] {
      return Finding{"pipeline", "pipeline (" + num(p.pipeline) + ") exceeds num_layers (" +
                                     num(m.num_layers) + ")"};
    });
  } else if (!p.stage_layers.empty()) {
    // An explicit stage_layers list must cover the model once, with a layer for every chunk.
    if (static_cast<int>(p.stage_layers.size()) != p.pipeline) {
      report(LayoutRule::kLayerSplit, [&] {
        return Finding{"stage_layers", "stage_layers has " + num(p.stage_layers.size()) +
                                           " entries but pipeline is " + num(p.pipeline)};
      });
    }
    const int total = std::accumulate(p.stage_layers.begin(), p.stage_layers.end(), 0);
    if (total != m.num_layers) {
      report(LayoutRule::kLayerSplit, [&] {
        return Finding{"stage_layers", "stage_layers sum to " + num(total) + " but num_layers is " +
                                           num(m.num_layers)};
      });
    }
    for (size_t i = 0; i < p.stage_layers.size(); ++i) {
      const int least =
          least_stage_layers(p.schedule, p.virtual_pipeline_stages, static_cast<int>(i));
      if (p.stage_layers[i] < least) {
        report(LayoutRule::kLayerSplit, [&] {
          return Finding{"stage_layers/" + num(i),
                         "stage " + num(i) + " has " + num(p.stage_layers[i]) +
                             " layers, fewer than virtual_pipeline_stages (" +
                             num(p.virtual_pipeline_stages) + "): every chunk needs a layer"};
        });
      }
    }
  } else if (p.partition_method) {
    // DeepSpeed's PipelineModule has one chunk per stage, and its split must leave every stage
    // a transformer layer (capsim costs a stage by its layers).
    const std::string method = to_string(*p.partition_method);
    if (p.virtual_pipeline_stages > 1) {
      report(LayoutRule::kLayerSplit, [&] {
        return Finding{"partition_method",
                       "partition_method \"" + method +
                           "\" is DeepSpeed's pipeline split, which has no virtual stages; "
                           "virtual_pipeline_stages is " +
                           num(p.virtual_pipeline_stages)};
      });
    }
    const bool too_long = *p.partition_method == PartitionMethod::kParameters &&
                          balanced_partition_work(m, p.pipeline) > kMaxBalancedPartitionWork;
    if (too_long) {
      report(LayoutRule::kLayerSplit, [&] {
        return Finding{"partition_method",
                       "partition_method \"parameters\" over " + num(m.num_layers) + " layers on " +
                           num(p.pipeline) +
                           " stages takes DeepSpeed's dynamic programme beyond capsim's bound; "
                           "give stage_layers"};
      });
    }
    const std::vector<int> split = too_long ? std::vector<int>{} : layers_per_stage(m, p);
    for (size_t i = 0; i < split.size(); ++i) {
      if (split[i] < 1) {
        report(LayoutRule::kLayerSplit, [&] {
          return Finding{"partition_method",
                         "partition_method \"" + method + "\" leaves stage " + num(i) +
                             " without a transformer layer (it holds only the embedding or "
                             "the head); give stage_layers"};
        });
        break;
      }
    }
  } else {
    // Without stage_layers the layers split evenly over the chunks, or as Megatron splits them.
    // pipeline <= num_layers here, so the chunk count fits an int.
    const int chunks = p.pipeline * p.virtual_pipeline_stages;
    if (m.num_layers % chunks != 0 &&
        (dual || !is_megatron_embedding_loss_split(m.num_layers, chunks))) {
      report(LayoutRule::kLayerSplit, [&] {
        return Finding{"pipeline",
                       "num_layers (" + num(m.num_layers) + ") is not divisible by pipeline (" +
                           num(p.pipeline) + ") x virtual_pipeline_stages (" +
                           num(p.virtual_pipeline_stages) +
                           "), nor is num_layers + 2 (Megatron's split counting the embedding "
                           "and the loss as layers); give stage_layers for an uneven split"};
      });
    }
  }

  if (const std::string problem = precision_support_problem(p.precision, c.gpu); !problem.empty()) {
    report(LayoutRule::kFp8Support, [&] { return Finding{"precision", problem}; });
  }
  if (m.moe)
    check_expert_rules(m, c, p, report);
  check_recompute_modules(m, p, report);
  if (p.activation_input_fp8 && m.ffn_activation != FfnActivation::kSwiglu) {
    report(LayoutRule::kActivationInputFp8, [&] {
      return Finding{
          "activation_input_fp8",
          std::string("activation_input_fp8 stores SwiGLU's input in fp8; ffn_activation "
                      "is \"") +
              to_string(m.ffn_activation) +
              "\" (Megatron-Core: \"Storing activation input in FP8 is supported only "
              "for SwiGLU.\")"};
    });
  }
  if (p.fp8_attention && !is_low_precision(p.precision)) {
    report(LayoutRule::kFp8Attention, [&] {
      return Finding{"fp8_attention", std::string("fp8_attention runs the attention core in "
                                                  "the fp8 recipe; precision is \"") +
                                          to_string(p.precision) +
                                          "\" (Megatron-LM: --fp8-dot-product-attention "
                                          "needs --fp8-format)"};
    });
  }
}

}  // namespace

std::optional<std::string> recompute_module_problem(const ModelSpec& m, unsigned modules) {
  const bool shared = m.moe && m.moe->shared_expert_ffn_hidden_size > 0;
  const std::pair<RecomputeModule, const char*> lacking[] = {
      {kRecomputeMoeActivation, m.moe ? nullptr : "no mixture-of-experts layers (model.moe)"},
      {kRecomputeMlaUpProjection, m.mla ? nullptr : "no latent attention (model.mla)"},
      {kRecomputeMlp, m.has_dense_ffn_layers()
                          ? nullptr
                          : "no dense MLP layers (every layer is a mixture of experts)"},
      {kRecomputeMoe, m.moe ? nullptr : "no mixture-of-experts layers (model.moe)"},
      {kRecomputeSharedExperts,
       shared ? nullptr : "no shared expert (moe.shared_expert_ffn_hidden_size)"},
  };
  for (const auto& [module, what] : lacking) {
    if ((modules & module) != 0 && what != nullptr) {
      return std::string("recompute_modules names \"") + to_string(module) +
             "\", but the model has " + what;
    }
  }
  return std::nullopt;
}

bool moe_a2a_overlap_possible(const ModelSpec& model, const Parallelism& parallelism) {
  bool possible = true;
  check_a2a_overlap_rules(model, parallelism,
                          [&possible](LayoutRule, const auto&) { possible = false; });
  return possible;
}

std::vector<LayoutProblem> layout_problems(const ModelSpec& model, const ClusterSpec& cluster,
                                           const Parallelism& parallelism) {
  std::vector<LayoutProblem> out;
  check_rules(model, cluster, parallelism, [&](LayoutRule rule, const auto& describe) {
    Finding f = describe();
    // A finding's key names a parallelism field, or is a whole pointer.
    std::string pointer = f.key.starts_with('/') ? f.key : "/parallelism/" + f.key;
    out.push_back({rule, std::move(pointer), std::move(f.message)});
  });
  return out;
}

BrokenLayoutRules broken_layout_rules(const ModelSpec& model, const ClusterSpec& cluster,
                                      const Parallelism& parallelism) {
  BrokenLayoutRules out;
  check_rules(model, cluster, parallelism,
              [&](LayoutRule rule, const auto& /*describe*/) { out.add(rule); });
  return out;
}

}  // namespace capsim::estimate
