#include "models/scenario.hpp"

namespace capsim {

std::vector<int> layers_per_stage(const ModelSpec& model, const Parallelism& parallelism) {
  if (!parallelism.stage_layers.empty())
    return parallelism.stage_layers;
  return std::vector<int>(static_cast<size_t>(parallelism.pipeline),
                          model.num_layers / parallelism.pipeline);
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
  }
  return "?";
}

const char* to_string(FfnActivation activation) {
  return activation == FfnActivation::kGelu ? "gelu" : "swiglu";
}

const char* to_string(AttentionKernel attention) {
  return attention == AttentionKernel::kFlash ? "flash" : "materialized";
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

}  // namespace capsim
