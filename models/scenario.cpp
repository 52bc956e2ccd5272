#include "models/scenario.hpp"

#include <algorithm>
#include <array>

#include "models/pipeline_partition.hpp"

namespace capsim {

double Parallelism::grad_reduce_bytes_per_element() const {
  if (grad_reduce_precision)
    return *grad_reduce_precision == Precision::kFp32 ? 4.0 : 2.0;
  const bool megatron_fp32 = zero_stage < 3 && precision != Precision::kFp16;
  return megatron_fp32 ? 4.0 : 2.0;
}

double Parallelism::dp_bucket_bytes_or_default() const {
  if (dp_bucket_bytes > 0.0)
    return dp_bucket_bytes;
  // Megatron-Core sizes by the data-parallel group without context parallelism, although the
  // buckets are then reduced over data x context.
  return std::max(kMegatronBucketMinParams, kMegatronBucketParamsPerDpRank * data) *
         grad_reduce_bytes_per_element();
}

double Parallelism::optimizer_state_bytes_per_element() const {
  return optimizer_state_precision.value_or(Precision::kFp32) == Precision::kFp32 ? 4.0 : 2.0;
}

MasterWeights Parallelism::master_weights_or_default() const {
  if (master_weights)
    return *master_weights;
  return precision == Precision::kFp32 ? MasterWeights::kNone : MasterWeights::kFp32;
}

double Parallelism::master_weight_bytes() const {
  switch (master_weights_or_default()) {
    case MasterWeights::kFp32:
      return 4.0;
    case MasterWeights::kFp32Remainders:  // int16 remainders (Apex distributed_fused_adam.py)
    case MasterWeights::kBf16:
    case MasterWeights::kFp16:
      return 2.0;
    case MasterWeights::kNone:
      return 0.0;
  }
  return 4.0;
}

bool is_megatron_embedding_loss_split(int layers, int virtual_stages) {
  return virtual_stages > 1 && layers % virtual_stages != 0 && (layers + 2) % virtual_stages == 0;
}

std::vector<int> layers_per_stage(const ModelSpec& model, const Parallelism& parallelism) {
  if (!parallelism.stage_layers.empty())
    return parallelism.stage_layers;
  if (parallelism.partition_method)
    return deepspeed_stage_layers(model, parallelism, *parallelism.partition_method);
  const int p = parallelism.pipeline;
  const int v = parallelism.virtual_pipeline_stages;
  if (parallelism.schedule != Schedule::kDualPipeV &&
      is_megatron_embedding_loss_split(model.num_layers, p * v)) {
    // Megatron-Core transformer_block.py (get_num_layers_to_build): (L + 2) / (p·v) layers per
    // virtual stage, one less on the first (embedding) and the last (loss).
    std::vector<int> out(static_cast<size_t>(p), (model.num_layers + 2) / (p * v) * v);
    out.front() -= 1;
    out.back() -= 1;
    return out;
  }
  // NOLINTNEXTLINE(modernize-return-braced-init-list): braces would pick the initializer_list ctor
  return std::vector<int>(static_cast<size_t>(p), model.num_layers / p);
}

int layers_in_chunk(int stage_layers, int stage, int chunk, int pipeline, int virtual_stages,
                    Schedule schedule) {
  const int base = stage_layers / virtual_stages;
  const int extra = stage_layers % virtual_stages;
  const bool holds_loss =
      schedule == Schedule::kDualPipeV || (stage == pipeline - 1 && pipeline > 1);
  if (holds_loss)
    return base + (chunk < extra ? 1 : 0);
  return base + (chunk >= virtual_stages - extra ? 1 : 0);
}

const char* to_string(Schedule schedule) {
  switch (schedule) {
    case Schedule::kGpipe:
      return "gpipe";
    case Schedule::kOneFOneB:
      return "1f1b";
    case Schedule::kInterleaved:
      return "interleaved-1f1b";
    case Schedule::kZeroBubble:
      return "zero-bubble";
    case Schedule::kDualPipeV:
      return "dualpipev";
  }
  return "?";
}

const char* to_string(Recompute recompute) {
  switch (recompute) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp8Cs:
      return "fp8-cs";
    case Precision::kFp8Blockwise:
      return "fp8-blockwise";
    case Precision::kMxfp8:
      return "mxfp8";
    case Precision::kNvfp4:
      return "nvfp4";
  }
  return "?";
}

const char* to_string(FfnActivation activation) {
  switch (activation) {
    case FfnActivation::kGelu:
      return "gelu";
    case FfnActivation::kSwiglu:
      return "swiglu";
    case FfnActivation::kSquaredRelu:
      return "squared-relu";
    case FfnActivation::kGeglu:
      return "geglu";
  }
  return "?";
}

const char* to_string(AttentionKernel attention) {
  switch (attention) {
    case AttentionKernel::kFlash:
      return "flash";
    case AttentionKernel::kMaterialized:
      return "materialized";
    case AttentionKernel::kTriton:
      return "triton";
    case AttentionKernel::kCudnn:
      return "cudnn";
  }
  return "?";
}

const char* to_string(CrossEntropyKernel cross_entropy) {
  switch (cross_entropy) {
    case CrossEntropyKernel::kUnfused:
      return "unfused";
    case CrossEntropyKernel::kFused:
      return "fused";
    case CrossEntropyKernel::kSingleKernel:
      return "single-kernel";
  }
  return "unfused";
}

const char* to_string(RouterScore score) {
  return score == RouterScore::kSigmoid ? "sigmoid" : "softmax";
}

const char* to_string(TokenDispatcher dispatcher) {
  switch (dispatcher) {
    case TokenDispatcher::kAllToAll:
      return "alltoall";
    case TokenDispatcher::kAllGather:
      return "allgather";
    case TokenDispatcher::kDeepEp:
      return "deepep";
  }
  return "?";
}

const char* to_string(PartitionMethod method) {
  return method == PartitionMethod::kUniform ? "uniform" : "parameters";
}

const char* to_string(Fabric fabric) {
  switch (fabric) {
    case Fabric::kNvSwitch:
      return "nvswitch";
    case Fabric::kInfiniband:
      return "infiniband";
    case Fabric::kRoce:
      return "roce";
    case Fabric::kEfa:
      return "efa";
    case Fabric::kEthernet:
      return "ethernet";
    case Fabric::kOmniPath:
      return "omni-path";
    case Fabric::kSlingshot:
      return "slingshot";
    case Fabric::kTcpx:
      return "tcpx";
    case Fabric::kTcpxo:
      return "tcpxo";
  }
  return "?";
}

const char* to_string(Topology topology) {
  switch (topology) {
    case Topology::kFatTree:
      return "fat-tree";
    case Topology::kRailOptimized:
      return "rail-optimized";
    case Topology::kOversubscribed:
      return "oversubscribed";
  }
  return "?";
}

const char* to_string(MasterWeights master_weights) {
  switch (master_weights) {
    case MasterWeights::kFp32:
      return "fp32";
    case MasterWeights::kFp32Remainders:
      return "fp32-remainders";
    case MasterWeights::kBf16:
      return "bf16";
    case MasterWeights::kFp16:
      return "fp16";
    case MasterWeights::kNone:
      return "none";
  }
  return "?";
}

namespace {

// Finds the enumerator among `values` whose canonical name is `name`.
template <typename Enum, size_t N>
std::optional<Enum> from_string(std::string_view name, const std::array<Enum, N>& values) {
  for (Enum v : values) {
    if (name == to_string(v))
      return v;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Schedule> schedule_from_string(std::string_view name) {
  static constexpr std::array kAll{Schedule::kGpipe, Schedule::kOneFOneB, Schedule::kInterleaved,
                                   Schedule::kZeroBubble, Schedule::kDualPipeV};
  return from_string(name, kAll);
}

std::optional<Recompute> recompute_from_string(std::string_view name) {
  static constexpr std::array kAll{Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  return from_string(name, kAll);
}

std::optional<Precision> precision_from_string(std::string_view name) {
  static constexpr std::array kAll{Precision::kFp16,  Precision::kBf16,  Precision::kFp8,
                                   Precision::kFp32,  Precision::kFp8Cs, Precision::kFp8Blockwise,
                                   Precision::kMxfp8, Precision::kNvfp4};
  return from_string(name, kAll);
}

constexpr std::array kAllFabrics{Fabric::kNvSwitch,  Fabric::kInfiniband, Fabric::kRoce,
                                 Fabric::kEfa,       Fabric::kEthernet,   Fabric::kOmniPath,
                                 Fabric::kSlingshot, Fabric::kTcpx,       Fabric::kTcpxo};

std::optional<Fabric> fabric_from_string(std::string_view name) {
  return from_string(name, kAllFabrics);
}

const std::vector<std::string>& fabric_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Fabric f : kAllFabrics)
      names.emplace_back(to_string(f));
    return names;
  }();
  return kNames;
}

std::optional<Topology> topology_from_string(std::string_view name) {
  static constexpr std::array kAll{Topology::kFatTree, Topology::kRailOptimized,
                                   Topology::kOversubscribed};
  return from_string(name, kAll);
}

std::optional<MasterWeights> master_weights_from_string(std::string_view name) {
  static constexpr std::array kAll{MasterWeights::kFp32, MasterWeights::kFp32Remainders,
                                   MasterWeights::kBf16, MasterWeights::kFp16,
                                   MasterWeights::kNone};
  return from_string(name, kAll);
}

std::optional<TokenDispatcher> token_dispatcher_from_string(std::string_view name) {
  static constexpr std::array kAll{TokenDispatcher::kAllToAll, TokenDispatcher::kAllGather,
                                   TokenDispatcher::kDeepEp};
  return from_string(name, kAll);
}

std::optional<PartitionMethod> partition_method_from_string(std::string_view name) {
  static constexpr std::array kAll{PartitionMethod::kUniform, PartitionMethod::kParameters};
  return from_string(name, kAll);
}

}  // namespace capsim
