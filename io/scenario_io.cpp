#include "io/scenario_io.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "models/byte_units.hpp"
#include "models/catalog.hpp"
#include "models/gpu_catalog.hpp"
#include "models/instance_catalog.hpp"
#include "models/low_precision.hpp"

#include "estimate/layout_rules.hpp"
#include "io/gpu_spec_io.hpp"
#include "io/instance_io.hpp"
#include "io/profile_reference.hpp"
#include "io/text_format.hpp"
#include "io/training_stack_io.hpp"
#include "io/units.hpp"

namespace capsim::io {
namespace {

constexpr std::int64_t kMaxDim = 1 << 24;
constexpr std::int64_t kMaxGpus = 1 << 20;

int to_int(std::int64_t v) {
  return static_cast<int>(v);
}

// Defaults for clusters that name only a GPU: the DGX node of its generation
// (DGX A100: 8x200 Gb/s HDR; DGX H100: 8x400 Gb/s NDR; docs/design/hardware-facts.md §2).
void apply_gpu_network_defaults(const GpuSpec& gpu, ClusterSpec& cluster) {
  cluster.inter_node_fabric = Fabric::kInfiniband;
  cluster.nics_per_node = 8;
  cluster.nic_bandwidth_bytes_per_s = gpu.architecture == "ampere" ? 200e9 / 8 : 400e9 / 8;
  cluster.topology = Topology::kRailOptimized;
}

// Reads cluster.nvlink_domain (docs/scenario.md) into `c`, checking nvlink_domain_problem.
void read_nvlink_domain(JsonReader& r, ClusterSpec& c) {
  if (!r.has("nvlink_domain"))
    return;
  const int domain = to_int(r.optional_int("nvlink_domain", 0, 1, kMaxGpus));
  if (auto problem = nvlink_domain_problem(domain, c.gpus_per_node, c.num_gpus()))
    throw r.error("nvlink_domain", *problem);
  c.nvlink_domain = domain;
}

ClusterSpec read_cluster_keys(JsonReader& r, Catalog& catalog) {
  ClusterSpec c;
  int instance_domain = 0;  // the instance's NVLink domain when it spans nodes
  if (r.has("instance")) {
    c.instance = r.required_string("instance");
    const InstanceSpec* inst = catalog.find_instance(c.instance);
    if (inst == nullptr) {
      throw r.error("instance", "unknown instance \"" + c.instance +
                                    "\"; known instances: " + join_names(catalog.instance_names()));
    }
    for (const char* key : {"gpu", "gpus_per_node"}) {
      if (r.has(key)) {
        throw r.error(key, std::string("\"") + key + "\" is given by instance \"" + c.instance +
                               "\"; remove it or drop \"instance\"");
      }
    }
    c.gpu = inst->gpu;
    c.gpus_per_node = inst->gpus_per_node;
    c.inter_node_fabric = *fabric_from_string(inst->fabric);
    c.nics_per_node = inst->nics_per_node;
    c.nic_bandwidth_bytes_per_s = inst->nic_bandwidth_bytes_per_s;
    c.topology = Topology::kRailOptimized;
    instance_domain = inst->nvlink_domain;
  } else {
    c.gpu = read_gpu_name_or_definition(r, "gpu", catalog);
    c.gpus_per_node = to_int(r.required_int("gpus_per_node", 1, kMaxGpusPerNode));
    apply_gpu_network_defaults(c.gpu, c);
  }
  c.num_nodes = to_int(r.required_int("num_nodes", 1, kMaxGpus));
  c.intra_node_bandwidth_bytes_per_s = c.gpu.nvlink_bandwidth_bytes_per_s;
  if (auto intra = r.optional_object("intra_node")) {
    (void)intra->required_enum("fabric", {"nvswitch"});
    c.intra_node_bandwidth_bytes_per_s = intra->required_bandwidth("bandwidth");
    intra->finish();
  }
  if (auto inter = r.optional_object("inter_node")) {
    c.inter_node_fabric = *fabric_from_string(inter->required_enum(
        "fabric",
        {"infiniband", "roce", "efa", "ethernet", "omni-path", "slingshot", "tcpx", "tcpxo"}));
    c.nics_per_node = to_int(inter->required_int("nics_per_node", 1, kMaxGpusPerNode));
    check_nics_serve_gpus(*inter, c.gpus_per_node, c.nics_per_node);
    c.nic_bandwidth_bytes_per_s = inter->required_bandwidth("nic_bandwidth");
    c.topology = *topology_from_string(inter->optional_enum(
        "topology", "rail-optimized", {"fat-tree", "rail-optimized", "oversubscribed"}));
    c.oversubscription = inter->optional_number("oversubscription", 1.0, 1.0, 64.0);
    if (c.topology == Topology::kOversubscribed && c.oversubscription <= 1.0) {
      throw inter->error("oversubscription",
                         "topology \"oversubscribed\" needs an oversubscription factor > 1");
    }
    // A rail-optimized fabric may be oversubscribed too: its leaves are rail groups, the
    // nodes_per_leaf nodes whose NIC i all reach rail switch i (docs/scenario.md).
    const bool has_leaves =
        c.topology == Topology::kOversubscribed || c.topology == Topology::kRailOptimized;
    if (!has_leaves && c.oversubscription > 1.0) {
      throw inter->error("oversubscription",
                         "an oversubscription factor > 1 needs topology \"oversubscribed\" or "
                         "\"rail-optimized\"");
    }
    if (inter->has("nodes_per_leaf") && !(has_leaves && c.oversubscription > 1.0)) {
      throw inter->error("nodes_per_leaf",
                         "nodes_per_leaf describes the leaf switches of an oversubscribed fabric; "
                         "it needs topology \"oversubscribed\", or \"rail-optimized\" with an "
                         "oversubscription factor > 1");
    }
    c.nodes_per_leaf = to_int(inter->optional_int("nodes_per_leaf", 1, 1, kMaxGpus));
    inter->finish();
  }
  c.has_inter_node = c.num_nodes > 1;
  read_nvlink_domain(r, c);
  if (!r.has("nvlink_domain") && instance_domain > 0) {
    // An NVL72 tray instance brings its rack's domain, which the job must fill or stay inside.
    if (auto problem = nvlink_domain_problem(instance_domain, c.gpus_per_node, c.num_gpus())) {
      throw r.error("num_nodes", "instance \"" + c.instance + "\" has an NVLink domain of " +
                                     std::to_string(instance_domain) + " GPUs: " + *problem +
                                     "; give cluster.nvlink_domain");
    }
    c.nvlink_domain = instance_domain;
  }
  r.finish();
  return c;
}

// The optimizer's storage: Adam's moments and the master copy of the weights (docs/scenario.md).
void read_optimizer_storage(JsonReader& r, Parallelism& p) {
  if (r.has("optimizer_state_precision")) {
    p.optimizer_state_precision = precision_from_string(
        r.optional_enum("optimizer_state_precision", "fp32", {"fp32", "bf16", "fp16"}));
  }
  if (r.has("master_weights")) {
    p.master_weights = master_weights_from_string(r.optional_enum(
        "master_weights", "fp32", {"fp32", "fp32-remainders", "bf16", "fp16", "none"}));
  }
}

// Gradient reduction: precision, buckets and overlap with the backward pass.
void read_gradient_reduction(JsonReader& r, Parallelism& p) {
  if (r.has("grad_reduce_precision")) {
    p.grad_reduce_precision = precision_from_string(
        r.optional_enum("grad_reduce_precision", "fp32", {"fp32", "bf16", "fp16"}));
  }
  p.dp_buckets_every_chunk = r.optional_enum("dp_bucket_layout", "megatron-core",
                                             {"megatron-core", "every-chunk"}) == "every-chunk";
  p.dp_bucket_bytes = r.optional_size("dp_bucket_size").value_or(0.0);
  // PyTorch DDP and Megatron use 25-40 MB buckets; below 64 KiB or above 16 GiB is a unit slip.
  if (r.has("dp_bucket_size") && (p.dp_bucket_bytes < 65536.0 || p.dp_bucket_bytes > 16.0 * kGiB)) {
    throw r.error("dp_bucket_size",
                  "expected a size between 64KiB and 16GiB, got " + r.describe("dp_bucket_size"));
  }
  p.overlap_grad_reduce = r.optional_bool("overlap_grad_reduce", true);
  p.overlap_param_gather = r.optional_bool("overlap_param_gather", p.overlap_grad_reduce);
  if (p.overlap_param_gather && !p.overlap_grad_reduce) {
    throw r.error("overlap_param_gather",
                  "overlap_param_gather needs overlap_grad_reduce (Megatron-LM: \"Must use "
                  "--overlap-param-gather with --overlap-grad-reduce\")");
  }
}

// The stack keys that only make sense for some ZeRO stages (a scenario has one).
// Checked before read_stack_keys so that a flag given for the wrong stage is named before the
// flags' own rule (overlap_param_gather needs overlap_grad_reduce).
void check_overlap_for_zero_stage(JsonReader& r, const Parallelism& p) {
  if (p.zero_stage == 3 && !r.optional_bool("overlap_grad_reduce", true)) {
    throw r.error("overlap_grad_reduce",
                  "ZeRO-3 (FSDP) reduce-scatters each layer's gradients as the backward pass "
                  "produces them; overlap_grad_reduce applies to zero_stage 0-2");
  }
  if (r.has("overlap_param_gather") && p.zero_stage != 1 && p.zero_stage != 2) {
    throw r.error("overlap_param_gather",
                  "overlap_param_gather applies to the distributed optimizer's parameter "
                  "all-gather, zero_stage 1 or 2");
  }
}

// Rejects `keys` present without model.moe: they lay out mixture-of-experts layers.
void reject_without_moe(JsonReader& r, bool has_moe, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (!has_moe && r.has(key)) {
      throw r.error(key, std::string("\"") + key +
                             "\" lays out mixture-of-experts layers; it needs model.moe");
    }
  }
}

// The keys that lay out mixture-of-experts layers (docs/scenario.md, "Mixture of experts").
void read_expert_layout(JsonReader& r, bool has_moe, Parallelism& p) {
  reject_without_moe(r, has_moe, {"expert", "expert_tensor"});
  read_expert_exchange(r, has_moe, p);
  p.expert = to_int(r.optional_int("expert", 1, 1, kMaxGpus));
  if (r.has("expert_tensor"))
    p.expert_tensor = to_int(r.optional_int("expert_tensor", 1, 1, kMaxGpus));
}

// The scenario's recompute_modules, only with selective recompute; absent, the default.
void read_recompute_modules(JsonReader& r, Parallelism& p) {
  if (!r.has("recompute_modules"))
    return;
  if (p.recompute != Recompute::kSelective) {
    throw r.error("recompute_modules",
                  std::string("recompute_modules chooses what selective recompute replays; it "
                              "needs recompute \"selective\", got \"") +
                      to_string(p.recompute) + "\"");
  }
  p.recompute_modules = read_recompute_module_list(r);
}

}  // namespace

unsigned read_recompute_module_list(JsonReader& r) {
  std::vector<std::string> names;
  for (const RecomputeModule module : kAllRecomputeModules)
    names.emplace_back(to_string(module));
  const std::vector<nlohmann::json> items = r.array("recompute_modules", 1);
  unsigned modules = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string where = r.pointer_to("recompute_modules") + "/" + std::to_string(i);
    const std::optional<RecomputeModule> module =
        items[i].is_string() ? recompute_module_from_string(items[i].get<std::string>())
                             : std::nullopt;
    if (!module) {
      throw r.with_key_problems(
          InputError(r.file(), where,
                     "expected one of " + join_names(names) + ", got " + describe_json(items[i])));
    }
    if ((modules & *module) != 0) {
      throw r.with_key_problems(InputError(
          r.file(), where, std::string("\"") + to_string(*module) + "\" is listed twice"));
    }
    modules |= *module;
  }
  return modules;
}

ClusterSpec read_cluster(JsonReader& reader, Catalog& catalog) {
  return read_cluster_keys(reader, catalog);
}

Parallelism read_parallelism(JsonReader& r, bool has_moe, const StackSettings* stack) {
  Parallelism p;
  p.tensor = to_int(r.required_int("tensor", 1, kMaxGpus));
  p.pipeline = to_int(r.required_int("pipeline", 1, kMaxGpus));
  p.data = to_int(r.required_int("data", 1, kMaxGpus));
  p.context = to_int(r.optional_int("context", 1, 1, kMaxGpus));
  p.micro_batch_size = to_int(r.required_int("micro_batch_size", 1, kMaxDim));
  p.global_batch_size = to_int(r.required_int("global_batch_size", 1, kMaxDim));
  p.virtual_pipeline_stages = to_int(r.optional_int("virtual_pipeline_stages", 1, 1, 1024));
  p.microbatch_group_size = to_int(r.optional_int("microbatch_group_size", 0, 1, kMaxDim));
  p.schedule = *schedule_from_string(
      r.optional_enum("schedule", p.virtual_pipeline_stages > 1 ? "interleaved-1f1b" : "1f1b",
                      {"gpipe", "1f1b", "interleaved-1f1b", "zero-bubble", "dualpipev"}));
  p.recompute =
      *recompute_from_string(r.optional_enum("recompute", "none", {"none", "selective", "full"}));
  read_recompute_modules(r, p);
  p.sequence_parallel = r.optional_bool("sequence_parallel", false);
  p.zero_stage = to_int(r.optional_int("zero_stage", 0, 0, 3));
  p.precision = *precision_from_string(r.optional_enum(
      "precision", "bf16", {"fp16", "bf16", "fp8", "fp8-cs", "fp8-blockwise", "mxfp8", "nvfp4"}));
  if (r.has("stage_layers")) {
    for (auto v : r.int_array("stage_layers", 1, kMaxDim))
      p.stage_layers.push_back(to_int(v));
  }
  // null: no DeepSpeed split (what `--set parallelism.partition_method=null` says).
  if (r.has("partition_method") && !r.take_null("partition_method")) {
    p.partition_method = partition_method_from_string(
        r.optional_enum("partition_method", "uniform", {"uniform", "parameters"}));
    if (!p.stage_layers.empty()) {
      throw r.error("partition_method",
                    "partition_method and stage_layers both set the split of the layers over "
                    "the pipeline stages; give one of them");
    }
  }
  check_overlap_for_zero_stage(r, p);
  read_stack_keys(r, p);
  if (stack != nullptr) {
    apply_stack_settings(
        *stack, [&r](std::string_view key) { return r.has(std::string(key)); }, p);
    if (p.overlap_param_gather && !p.overlap_grad_reduce) {
      throw r.error("overlap_param_gather",
                    "overlap_param_gather needs overlap_grad_reduce, which the scenario's stack "
                    "turns off (Megatron-LM: \"Must use --overlap-param-gather with "
                    "--overlap-grad-reduce\")");
    }
  }
  if (p.fp8_params && !is_fp8_recipe(p.precision)) {
    throw r.error("fp8_params", std::string("fp8_params stores the weights as Transformer Engine "
                                            "fp8 tensors; it needs an fp8 precision (\"fp8\", "
                                            "\"fp8-cs\", \"fp8-blockwise\" or \"mxfp8\"), got \"") +
                                    to_string(p.precision) + "\"");
  }
  if (p.master_weights) {
    if (auto conflict = master_weights_conflict(*p.master_weights, p.precision, p.fp8_params))
      throw r.error("master_weights", *conflict);
  }
  read_expert_layout(r, has_moe, p);
  r.finish();
  return p;
}

std::optional<std::string> nvlink_domain_problem(int domain, int gpus_per_node, int num_gpus) {
  const std::string named = "nvlink_domain (" + std::to_string(domain) + ")";
  if (domain % gpus_per_node != 0) {
    return named + " must be a multiple of gpus_per_node (" + std::to_string(gpus_per_node) +
           "): an NVLink domain joins whole nodes";
  }
  if (domain > kMaxNvlinkDomain) {
    return named + " exceeds " + std::to_string(kMaxNvlinkDomain) +
           ", the GPUs NVLink switches join in one domain (GB200/GB300 NVL72); larger systems "
           "are several domains joined by the inter-node fabric";
  }
  if (num_gpus > domain && num_gpus % domain != 0) {
    return named + " does not divide the job's GPUs (gpus_per_node (" +
           std::to_string(gpus_per_node) + ") x num_nodes (" +
           std::to_string(num_gpus / gpus_per_node) + ") = " + std::to_string(num_gpus) +
           "): every domain holds the same number of the job's GPUs";
  }
  return std::nullopt;
}

void read_expert_exchange(JsonReader& reader, bool has_moe, Parallelism& parallelism) {
  reject_without_moe(reader, has_moe,
                     {"token_dispatcher", "moe_a2a_overlap", "memory_efficient_permutation"});
  parallelism.token_dispatcher = *token_dispatcher_from_string(
      reader.optional_enum("token_dispatcher", "alltoall", {"alltoall", "allgather", "deepep"}));
  parallelism.moe_a2a_overlap = reader.optional_bool("moe_a2a_overlap", false);
  parallelism.memory_efficient_permutation =
      reader.optional_bool("memory_efficient_permutation", true);
}

void read_stack_keys(JsonReader& reader, Parallelism& parallelism) {
  read_gradient_reduction(reader, parallelism);
  read_optimizer_storage(reader, parallelism);
  parallelism.fp8_params = reader.optional_bool("fp8_params", false);
  parallelism.tp_comm_overlap = reader.optional_bool("tp_comm_overlap", false);
  parallelism.tp_backward_overlap = reader.optional_bool("tp_backward_overlap", true);
  parallelism.activation_input_fp8 = reader.optional_bool("activation_input_fp8", false);
  parallelism.fp8_attention = reader.optional_bool("fp8_attention", false);
}

std::optional<std::string> master_weights_conflict(MasterWeights master_weights,
                                                   Precision precision, bool fp8_params) {
  // Remainders complete bf16 weights; fp8 parameters are Float8Tensors, for which Transformer
  // Engine's FusedAdam keeps a full master (store_param_remainders only for bfloat16 params).
  if (master_weights == MasterWeights::kFp32Remainders && fp8_params) {
    return "\"fp32-remainders\" completes bf16 weights to fp32, but with fp8_params the weights "
           "are fp8 tensors, whose optimizer keeps a full fp32 master: use \"fp32\"";
  }
  if (precision != Precision::kFp16)
    return std::nullopt;
  // The remainders complete bf16 weights, which hold the fp32 value's high 16 bits (Apex
  // distributed_fused_adam.py: "requires BF16 params"; TE FusedAdam: "only when param type is
  // BF16"); fp16 shares no bits with it. fp8 runs keep bf16 weights.
  if (master_weights == MasterWeights::kFp32Remainders) {
    return "\"fp32-remainders\" stores the low 16 bits of fp32 values whose high 16 bits are "
           "the bf16 weights; it needs precision \"bf16\" or \"fp8\", not \"fp16\"";
  }
  // A master copy with fewer significant bits (bf16: 8) than the weights it updates (fp16: 11)
  // would lose what the weights keep.
  if (master_weights == MasterWeights::kBf16) {
    return "a bf16 master copy keeps fewer significant bits than the fp16 weights it updates; "
           "with precision \"fp16\" use \"fp32\", \"fp16\" or \"none\"";
  }
  return std::nullopt;
}

namespace {

// Most experts a layer may have: far above published models (DeepSeek-V3 256, Kimi K2 384).
constexpr std::int64_t kMaxExperts = 1 << 16;

// Group-limited routing: `router_groups` equal groups of experts, a token's experts from its best
// `router_group_top_k` groups, at least one in each (Megatron-Core's group_limited_topk takes
// top_k / group_topk experts per group to score the groups).
void read_router_groups(JsonReader& r, MoeSpec& moe) {
  moe.router_groups = to_int(r.optional_int("router_groups", 1, 1, moe.num_experts));
  if (moe.num_experts % moe.router_groups != 0) {
    throw r.error("router_groups", "router_groups (" + std::to_string(moe.router_groups) +
                                       ") must divide num_experts (" +
                                       std::to_string(moe.num_experts) + ")");
  }
  moe.router_group_top_k =
      to_int(r.optional_int("router_group_top_k", moe.router_groups, 1, moe.router_groups));
  if (moe.router_group_top_k > moe.top_k) {
    throw r.error("router_group_top_k",
                  "router_group_top_k (" + std::to_string(moe.router_group_top_k) +
                      ") exceeds top_k (" + std::to_string(moe.top_k) +
                      "): each picked group receives at least one of a token's experts");
  }
  const int candidates = moe.num_experts / moe.router_groups * moe.router_group_top_k;
  if (candidates < moe.top_k) {
    throw r.error("router_group_top_k", "the " + std::to_string(moe.router_group_top_k) +
                                            " picked groups hold " + std::to_string(candidates) +
                                            " experts, fewer than top_k (" +
                                            std::to_string(moe.top_k) + ")");
  }
}

// The mixture-of-experts block of a model with `num_layers` layers and the FFN `activation`
// (docs/scenario.md).
MoeSpec read_moe(JsonReader& r, int num_layers, FfnActivation activation) {
  MoeSpec moe;
  moe.num_experts = to_int(r.required_int("num_experts", 1, kMaxExperts));
  moe.top_k = to_int(r.required_int("top_k", 1, kMaxExperts));
  if (moe.top_k > moe.num_experts) {
    throw r.error("top_k", "top_k (" + std::to_string(moe.top_k) + ") exceeds num_experts (" +
                               std::to_string(moe.num_experts) +
                               "): each token is routed to top_k distinct experts");
  }
  moe.ffn_hidden_size = to_int(r.required_int("ffn_hidden_size", 1, kMaxDim));
  moe.shared_expert_ffn_hidden_size =
      to_int(r.optional_int("shared_expert_ffn_hidden_size", 0, 0, kMaxDim));
  moe.first_dense_layers = to_int(r.optional_int("first_dense_layers", 0, 0, num_layers - 1));
  // At least one layer after the dense ones has experts.
  moe.layer_interval =
      to_int(r.optional_int("layer_interval", 1, 1, num_layers - moe.first_dense_layers));
  // The busiest of at most num_experts ranks holds at most all routed tokens: num_experts x
  // the mean.
  const auto max_factor = static_cast<double>(moe.num_experts);
  moe.load_imbalance = r.optional_number("load_imbalance", 1.0, 1.0, max_factor);
  moe.router_score = r.optional_enum("router_score", "softmax", {"softmax", "sigmoid"}) == "sigmoid"
                         ? RouterScore::kSigmoid
                         : RouterScore::kSoftmax;
  read_router_groups(r, moe);
  moe.rank_capacity_factor = r.optional_number("rank_capacity_factor", 0.0, 0.0, max_factor);
  if (moe.rank_capacity_factor > 0.0 && moe.rank_capacity_factor < 1.0) {
    throw r.error("rank_capacity_factor",
                  "expected 0 (no padding) or a factor of at least 1.0, got " +
                      r.describe("rank_capacity_factor"));
  }
  moe.activation_clamp = r.optional_number("activation_clamp", 0.0, 0.0, 1e6);
  if (moe.activation_clamp > 0.0 && !is_gated(activation)) {
    throw r.error("activation_clamp", std::string("clamps the two inputs of a gated activation "
                                                  "(swiglu, geglu); ffn_activation is \"") +
                                          to_string(activation) + "\"");
  }
  moe.linear_bias = r.optional_bool("linear_bias", false);
  moe.fused_grouped_mlp = r.optional_bool("fused_grouped_mlp", false);
  if (moe.fused_grouped_mlp && activation == FfnActivation::kGelu) {
    throw r.error("fused_grouped_mlp",
                  "Transformer Engine's fused grouped MLP runs a gated activation (swiglu, "
                  "geglu) or squared_relu; ffn_activation is \"gelu\"");
  }
  r.finish();
  return moe;
}

// Multi-head latent attention's ranks and head dimensions (docs/scenario.md).
MlaSpec read_mla(JsonReader& r) {
  MlaSpec mla;
  if (!r.take_null("q_lora_rank"))
    mla.q_lora_rank = to_int(r.optional_int("q_lora_rank", 0, 0, kMaxDim));
  mla.kv_lora_rank = to_int(r.required_int("kv_lora_rank", 1, kMaxDim));
  mla.qk_head_dim = to_int(r.required_int("qk_head_dim", 1, kMaxDim));
  mla.qk_pos_emb_head_dim = to_int(r.required_int("qk_pos_emb_head_dim", 0, kMaxDim));
  mla.v_head_dim = to_int(r.required_int("v_head_dim", 1, kMaxDim));
  r.finish();
  return mla;
}

// Sliding-window attention on every `every`-th layer of a model (docs/scenario.md).
WindowAttention read_window_attention(JsonReader& r, const ModelSpec& m) {
  WindowAttention w;
  w.size = to_int(r.required_int("size", 1, kMaxDim));
  w.every = to_int(r.optional_int("every", 1, 1, m.num_layers));
  r.finish();
  if (w.size >= m.seq_length) {
    throw r.error("size", "a window of " + std::to_string(w.size) +
                              " tokens is not below seq_length (" + std::to_string(m.seq_length) +
                              "): those layers attend their whole sequence");
  }
  return w;
}

// The attention keys of a model with `mla`: its ranks set the head dimensions, and it has no
// key-value groups.
void check_mla_attention(JsonReader& r, const ModelSpec& m) {
  if (r.has("head_dim")) {
    throw r.error("head_dim",
                  "MLA sets its head dimensions with mla.qk_head_dim, mla.qk_pos_emb_head_dim "
                  "and mla.v_head_dim; head_dim applies to multi-head and grouped-query "
                  "attention");
  }
  if (m.num_kv_heads != m.num_attention_heads) {
    throw r.error("num_kv_heads",
                  "MLA has no key-value groups: every head has its own keys and "
                  "values from the shared latent, so num_kv_heads (" +
                      std::to_string(m.num_kv_heads) + ") must equal num_attention_heads (" +
                      std::to_string(m.num_attention_heads) + ") or be omitted");
  }
}

}  // namespace

ModelSpec read_model(JsonReader& r) {
  ModelSpec m;
  m.name = r.optional_string("name", "model");
  m.num_layers = to_int(r.required_int("num_layers", 1, 100000));
  m.hidden_size = to_int(r.required_int("hidden_size", 1, kMaxDim));
  m.num_attention_heads = to_int(r.required_int("num_attention_heads", 1, kMaxDim));
  m.num_kv_heads = to_int(r.optional_int("num_kv_heads", m.num_attention_heads, 1, kMaxDim));
  m.ffn_hidden_size =
      to_int(r.optional_int("ffn_hidden_size", std::int64_t{4} * m.hidden_size, 1, kMaxDim));
  const std::string activation =
      r.optional_enum("ffn_activation", "gelu", {"gelu", "swiglu", "squared-relu", "geglu"});
  for (FfnActivation a : {FfnActivation::kGelu, FfnActivation::kSwiglu, FfnActivation::kSquaredRelu,
                          FfnActivation::kGeglu}) {
    if (activation == to_string(a))
      m.ffn_activation = a;
  }
  const std::string attention =
      r.optional_enum("attention", "flash", {"flash", "materialized", "triton", "cudnn"});
  for (AttentionKernel a : {AttentionKernel::kFlash, AttentionKernel::kMaterialized,
                            AttentionKernel::kTriton, AttentionKernel::kCudnn}) {
    if (attention == to_string(a))
      m.attention = a;
  }
  const std::string cross_entropy =
      r.optional_enum("cross_entropy", "fused", {"unfused", "fused", "single-kernel"});
  m.cross_entropy = cross_entropy == "unfused" ? CrossEntropyKernel::kUnfused
                    : cross_entropy == "fused" ? CrossEntropyKernel::kFused
                                               : CrossEntropyKernel::kSingleKernel;
  if (r.has("dropout"))
    m.dropout = r.optional_bool("dropout", false);
  m.seq_length = to_int(r.required_int("seq_length", 1, kMaxDim));
  m.vocab_size = to_int(r.required_int("vocab_size", 1, kMaxDim));
  // GPT/Megatron ties input and output embeddings by default; Llama does not.
  m.tied_embeddings = r.optional_bool("tied_embeddings", m.ffn_activation == FfnActivation::kGelu);
  if (auto moe = r.optional_object("moe"))
    m.moe = read_moe(*moe, m.num_layers, m.ffn_activation);
  if (auto mla = r.optional_object("mla")) {
    m.mla = read_mla(*mla);
    check_mla_attention(r, m);
  }
  m.explicit_head_dim = to_int(r.optional_int("head_dim", 0, 1, kMaxDim));
  m.mtp_layers = to_int(r.optional_int("mtp_layers", 0, 0, m.num_layers));
  if (auto window = r.optional_object("window_attention"))
    m.window_attention = read_window_attention(*window, m);
  m.rope_fusion = r.optional_bool("rope_fusion", true);
  // An explicit head_dim (Megatron --kv-channels) or MLA's own dimensions free the heads from
  // splitting hidden_size.
  const bool heads_split_hidden = !r.has("head_dim") && !m.mla.has_value();
  if (heads_split_hidden && m.hidden_size % m.num_attention_heads != 0) {
    throw r.error("num_attention_heads", "hidden_size " + std::to_string(m.hidden_size) +
                                             " is not divisible by num_attention_heads " +
                                             std::to_string(m.num_attention_heads));
  }
  if (m.num_attention_heads % m.num_kv_heads != 0) {
    throw r.error("num_kv_heads", "num_kv_heads " + std::to_string(m.num_kv_heads) +
                                      " does not divide num_attention_heads " +
                                      std::to_string(m.num_attention_heads));
  }
  r.finish();
  return m;
}

namespace {

// Whether the scenario's cluster names, by a string, a GPU the catalog does not know (yet).
bool names_unknown_gpu(const nlohmann::json& scenario, const Catalog& catalog) {
  const auto cluster = scenario.find("cluster");
  if (cluster == scenario.end() || !cluster->is_object())
    return false;
  const auto gpu = cluster->find("gpu");
  return gpu != cluster->end() && gpu->is_string() &&
         catalog.find_gpu(gpu->get<std::string>()) == nullptr;
}

}  // namespace

Scenario read_scenario(JsonReader& r, bool require_schema, Catalog& catalog) {
  Scenario sc;
  if (require_schema || r.has("schema"))
    r.expect_schema(kScenarioSchema);
  sc.name = r.optional_string("name", "scenario");
  if (r.has("stack"))
    sc.stack = &read_training_stack(r, "stack");
  // A profile fitted on new hardware defines its GPU: learn it before the cluster names it
  // (only then: a validation file's cases would otherwise read the profile once each).
  if (r.has("profile") && r.json().at("profile").is_string() &&
      names_unknown_gpu(r.json(), catalog))
    define_gpu_of_profile(r.json().at("profile").get<std::string>(), r.file(),
                          r.pointer_to("profile"), catalog);
  {
    auto model = r.object("model");
    sc.model = read_model(model);
    if (sc.stack != nullptr) {
      apply_stack_kernels(
          sc.stack->settings,
          [&model](std::string_view key) { return model.has(std::string(key)); }, sc.model);
    }
  }
  {
    auto cluster = r.object("cluster");
    sc.cluster = read_cluster(cluster, catalog);
  }
  {
    auto par = r.object("parallelism");
    sc.parallelism = read_parallelism(par, sc.model.moe.has_value(),
                                      sc.stack != nullptr ? &sc.stack->settings : nullptr);
  }
  sc.profile_path = r.optional_string("profile", "");
  if (r.has("profile") && sc.profile_path.empty())
    throw r.error("profile", "expected a profile file path, got \"\"");
  r.finish();
  r.throw_key_problems();  // the cross-field rules would judge stand-ins for missing keys
  const std::vector<estimate::LayoutProblem> problems =
      estimate::layout_problems(sc.model, sc.cluster, sc.parallelism);
  if (!problems.empty())
    throw InputError(r.file(), r.pointer() + problems.front().pointer, problems.front().message);
  return sc;
}

std::variant<Parallelism, InputError> read_parallelism_document(
    const Scenario& base, const nlohmann::json& parallelism_doc, const std::string& file) {
  Parallelism parallelism = JsonReader::read_document(
      parallelism_doc, file,
      [&base](JsonReader& r) {
        return read_parallelism(r, base.model.moe.has_value(),
                                base.stack != nullptr ? &base.stack->settings : nullptr);
      },
      "/parallelism");
  const std::vector<estimate::LayoutProblem> problems =
      estimate::layout_problems(base.model, base.cluster, parallelism);
  if (!problems.empty())
    return InputError(file, problems.front().pointer, problems.front().message);
  return parallelism;
}

namespace {

// Rejects an array index on the path of `target` beyond the array's end: nlohmann would fill the
// gap with nulls (and makes an array of a missing value on a numeric token), so a --set of
// index 99999999 would allocate gigabytes. Appending (the index equal to the size, or "-") is
// allowed.
void check_override_indices(const nlohmann::json& scenario,
                            const nlohmann::json::json_pointer& target, const std::string& file,
                            const std::string& where) {
  std::vector<std::string> tokens;
  for (auto p = target; !p.empty(); p = p.parent_pointer())
    tokens.push_back(p.back());
  const nlohmann::json* at = &scenario;  // nullptr: created by the --set
  for (auto token = tokens.rbegin(); token != tokens.rend(); ++token) {
    if (at != nullptr && at->is_object()) {
      const auto next = at->find(*token);
      at = next == at->end() ? nullptr : &*next;
      continue;
    }
    const bool grows = at == nullptr || at->is_null() || at->is_array();
    if (!grows || *token == "-" || token->empty() ||
        !std::all_of(token->begin(), token->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      if (!grows)
        return;  // a scalar on the path: nlohmann rejects the --set
      at = nullptr;
      continue;
    }
    const std::size_t size = at != nullptr && at->is_array() ? at->size() : 0;
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(token->data(), token->data() + token->size(), index);
    if (ec != std::errc() || index > size) {
      throw InputError(file, where,
                       "--set index " + *token + " is beyond the end of the array (" +
                           std::to_string(size) +
                           " elements); an index may at most append one "
                           "element (index " +
                           std::to_string(size) + ")");
    }
    at = index < size ? &(*at)[index] : nullptr;
  }
}

}  // namespace

void apply_overrides(nlohmann::json& scenario, const std::vector<ScenarioOverride>& overrides,
                     const std::string& file, const std::string& pointer) {
  for (const ScenarioOverride& o : overrides) {
    try {
      const nlohmann::json::json_pointer target(o.pointer);
      check_override_indices(scenario, target, file, pointer + o.pointer);
      scenario[target] = nlohmann::json::parse(o.value_json);
    } catch (const nlohmann::json::exception&) {
      throw InputError(file, pointer + o.pointer,
                       "--set cannot set this key: a value on its path is not an object");
    }
  }
}

Scenario read_scenario(JsonReader& reader, bool require_schema) {
  Catalog catalog;
  return read_scenario(reader, require_schema, catalog);
}

Scenario load_scenario(const std::string& path, Catalog& catalog,
                       const std::vector<ScenarioOverride>& overrides) {
  nlohmann::json doc = JsonReader::parse_file(path);
  if (doc.is_object())
    apply_overrides(doc, overrides, path, "");
  Scenario sc = JsonReader::read_document(
      doc, path, [&catalog](JsonReader& reader) { return read_scenario(reader, true, catalog); });
  sc.profile_path = resolve_profile_path(sc.profile_path, path, "/profile");
  return sc;
}

Scenario load_scenario(const std::string& path, const std::vector<ScenarioOverride>& overrides) {
  Catalog catalog;
  return load_scenario(path, catalog, overrides);
}

namespace {

// Every key of the mixture-of-experts block, defaults too: a reader sees the whole layer.
// `layer_interval` only where it is not 1 (experts on every layer after the dense ones).
nlohmann::json moe_to_json(const MoeSpec& moe) {
  nlohmann::json j = {{"num_experts", moe.num_experts},
                      {"top_k", moe.top_k},
                      {"ffn_hidden_size", moe.ffn_hidden_size},
                      {"shared_expert_ffn_hidden_size", moe.shared_expert_ffn_hidden_size},
                      {"first_dense_layers", moe.first_dense_layers},
                      {"load_imbalance", moe.load_imbalance},
                      {"router_score", to_string(moe.router_score)},
                      {"router_groups", moe.router_groups},
                      {"router_group_top_k", moe.router_group_top_k},
                      {"rank_capacity_factor", moe.rank_capacity_factor},
                      {"activation_clamp", moe.activation_clamp},
                      {"linear_bias", moe.linear_bias},
                      {"fused_grouped_mlp", moe.fused_grouped_mlp}};
  if (moe.layer_interval != 1)
    j["layer_interval"] = moe.layer_interval;
  return j;
}

nlohmann::json mla_to_json(const MlaSpec& mla) {
  return {{"q_lora_rank", mla.q_lora_rank},
          {"kv_lora_rank", mla.kv_lora_rank},
          {"qk_head_dim", mla.qk_head_dim},
          {"qk_pos_emb_head_dim", mla.qk_pos_emb_head_dim},
          {"v_head_dim", mla.v_head_dim}};
}

// Writes the stack keys of `p` that differ from what reading them unsaid gives: `implied`
// applied to p's layout (a reader leaves every key unsaid that equals it). Set values only:
// an unsaid key always reads back as its implied value.
void write_stack_keys(const Parallelism& p, const StackSettings& implied, nlohmann::json& par) {
  Parallelism unsaid = p;
  apply_stack_settings(
      implied, [](std::string_view) { return false; }, unsaid);
  // The parameter gather's unsaid value follows the gradients' setting as written.
  const bool writes_grad_overlap = p.overlap_grad_reduce != unsaid.overlap_grad_reduce;
  if (writes_grad_overlap) {
    unsaid = p;
    apply_stack_settings(
        implied, [](std::string_view key) { return key == "overlap_grad_reduce"; }, unsaid);
  }
  if (p.fp8_params != unsaid.fp8_params)
    par["fp8_params"] = p.fp8_params;
  if (p.grad_reduce_precision && p.grad_reduce_precision != unsaid.grad_reduce_precision)
    par["grad_reduce_precision"] = to_string(*p.grad_reduce_precision);
  if (p.optimizer_state_precision &&
      p.optimizer_state_precision != unsaid.optimizer_state_precision)
    par["optimizer_state_precision"] = to_string(*p.optimizer_state_precision);
  if (p.master_weights && p.master_weights != unsaid.master_weights)
    par["master_weights"] = to_string(*p.master_weights);
  if (p.dp_buckets_every_chunk != unsaid.dp_buckets_every_chunk)
    par["dp_bucket_layout"] = p.dp_buckets_every_chunk ? "every-chunk" : "megatron-core";
  if (p.dp_bucket_bytes > 0.0 && p.dp_bucket_bytes != unsaid.dp_bucket_bytes)
    par["dp_bucket_size"] = printf_string("%.0fB", p.dp_bucket_bytes);
  if (writes_grad_overlap)
    par["overlap_grad_reduce"] = p.overlap_grad_reduce;
  if (p.overlap_param_gather != unsaid.overlap_param_gather)
    par["overlap_param_gather"] = p.overlap_param_gather;
  if (p.tp_comm_overlap != unsaid.tp_comm_overlap)
    par["tp_comm_overlap"] = p.tp_comm_overlap;
  if (p.tp_backward_overlap != unsaid.tp_backward_overlap)
    par["tp_backward_overlap"] = p.tp_backward_overlap;
}

}  // namespace

nlohmann::json scenario_to_json(const Scenario& sc) {
  using nlohmann::json;
  const auto& m = sc.model;
  const auto& c = sc.cluster;
  const auto& p = sc.parallelism;
  json model = {{"name", m.name},
                {"num_layers", m.num_layers},
                {"hidden_size", m.hidden_size},
                {"num_attention_heads", m.num_attention_heads},
                {"num_kv_heads", m.num_kv_heads},
                {"ffn_hidden_size", m.ffn_hidden_size},
                {"ffn_activation", to_string(m.ffn_activation)},
                {"seq_length", m.seq_length},
                {"vocab_size", m.vocab_size}};
  model["tied_embeddings"] = m.tied_embeddings;
  // The kernels and stack keys are written where they differ from what the reader would give
  // them unsaid: the stack's settings when the scenario names one, else the defaults.
  const StackSettings implied = sc.stack != nullptr ? sc.stack->settings : StackSettings{};
  if (m.attention != implied.attention)
    model["attention"] = to_string(m.attention);
  if (m.cross_entropy != implied.cross_entropy)
    model["cross_entropy"] = to_string(m.cross_entropy);
  if (m.dropout.has_value())
    model["dropout"] = *m.dropout;
  if (m.explicit_head_dim > 0)
    model["head_dim"] = m.explicit_head_dim;
  if (m.moe)
    model["moe"] = moe_to_json(*m.moe);
  if (m.mla)
    model["mla"] = mla_to_json(*m.mla);
  if (m.mtp_layers > 0)
    model["mtp_layers"] = m.mtp_layers;
  if (m.window_attention) {
    model["window_attention"] = {{"size", m.window_attention->size},
                                 {"every", m.window_attention->every}};
  }
  if (!m.rope_fusion)
    model["rope_fusion"] = false;
  json cluster = json::object();
  // An instance a plan defined is written out in full, so the file stands on its own.
  const bool by_instance = !c.instance.empty() && is_builtin_instance(c.instance);
  if (by_instance) {
    cluster["instance"] = c.instance;
  } else {
    cluster["gpu"] = gpu_reference_json(c.gpu);
    cluster["gpus_per_node"] = c.gpus_per_node;
  }
  cluster["num_nodes"] = c.num_nodes;
  if (c.nvlink_domain > 0)
    cluster["nvlink_domain"] = c.nvlink_domain;
  const auto as_gigabits_per_s = [](double bytes_per_s) {
    return printf_string("%.6gGbps", bytes_per_s * 8.0 / 1e9);
  };
  const auto as_gigabytes_per_s = [](double bytes_per_s) {
    return printf_string("%.6gGBps", bytes_per_s / 1e9);
  };
  cluster["intra_node"] = {{"fabric", "nvswitch"},
                           {"bandwidth", as_gigabytes_per_s(c.intra_node_bandwidth_bytes_per_s)}};
  if (!by_instance || c.num_nodes > 1) {
    json inter = {{"fabric", to_string(c.inter_node_fabric)},
                  {"nics_per_node", c.nics_per_node},
                  {"nic_bandwidth", as_gigabits_per_s(c.nic_bandwidth_bytes_per_s)},
                  {"topology", to_string(c.topology)}};
    if (c.oversubscription > 1.0) {
      inter["oversubscription"] = c.oversubscription;
      inter["nodes_per_leaf"] = c.nodes_per_leaf;
    }
    cluster["inter_node"] = inter;
  }
  json par = {{"tensor", p.tensor},
              {"pipeline", p.pipeline},
              {"data", p.data},
              {"context", p.context},
              {"micro_batch_size", p.micro_batch_size},
              {"global_batch_size", p.global_batch_size},
              {"virtual_pipeline_stages", p.virtual_pipeline_stages},
              {"schedule", to_string(p.schedule)},
              {"recompute", to_string(p.recompute)},
              {"sequence_parallel", p.sequence_parallel},
              {"zero_stage", p.zero_stage},
              {"precision", to_string(p.precision)}};
  if (p.microbatch_group_size > 0)
    par["microbatch_group_size"] = p.microbatch_group_size;
  if (p.recompute == Recompute::kSelective && p.recompute_modules != kDefaultRecomputeModules) {
    json modules = json::array();
    for (const RecomputeModule module : kAllRecomputeModules) {
      if ((p.recompute_modules & module) != 0)
        modules.push_back(to_string(module));
    }
    par["recompute_modules"] = modules;
  }
  if (!p.stage_layers.empty())
    par["stage_layers"] = p.stage_layers;
  if (p.partition_method)
    par["partition_method"] = to_string(*p.partition_method);
  if (p.activation_input_fp8)
    par["activation_input_fp8"] = true;
  if (p.fp8_attention)
    par["fp8_attention"] = true;
  write_stack_keys(p, implied, par);
  if (p.expert != 1)
    par["expert"] = p.expert;
  if (p.expert_tensor)
    par["expert_tensor"] = *p.expert_tensor;
  if (p.token_dispatcher != TokenDispatcher::kAllToAll)
    par["token_dispatcher"] = to_string(p.token_dispatcher);
  if (p.moe_a2a_overlap)
    par["moe_a2a_overlap"] = true;
  if (m.moe && !p.memory_efficient_permutation)
    par["memory_efficient_permutation"] = false;
  json out = {{"schema", kScenarioSchema},
              {"name", sc.name},
              {"model", model},
              {"cluster", cluster},
              {"parallelism", par}};
  if (sc.stack != nullptr)
    out["stack"] = {{"name", sc.stack->name}, {"version", sc.stack->version}};
  if (!sc.profile_path.empty())
    out["profile"] = sc.profile_path;
  return out;
}

}  // namespace capsim::io
