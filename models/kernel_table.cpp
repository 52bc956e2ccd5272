#include "models/kernel_table.hpp"

#include <algorithm>

#include "models/gpu_catalog.hpp"
#include "models/op_cost.hpp"

namespace capsim {

KernelTable kernel_table(const Scenario& scenario, const HardwareProfile& profile) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  const GpuSpec& gpu = scenario.cluster.gpu;
  KernelTable table;
  table.hbm_bytes_per_s = gpu.hbm_bandwidth_bytes_per_s;
  const std::vector<int> layers = layers_per_stage(m, p);
  table.max_layers_per_stage = *std::max_element(layers.begin(), layers.end());
  const auto add = [&](ModelPart part, const std::vector<Op>& ops) {
    for (const Op& op : ops) {
      KernelRow row;
      row.part = part;
      row.op = op;
      row.precision = op_precision(op, p.precision);
      row.time_s = op_time_s(op, profile, gpu, p.precision, attention_kernel_seq_length(m, p));
      row.peak_flop_per_s = gpu.peak_flop_per_s(row.precision);
      table.rows.push_back(row);
    }
  };
  std::vector<LayerKind> kinds;
  for (int layer = 0; layer < m.num_layers; ++layer) {
    const LayerKind kind = layer_kind(m, layer);
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
      kinds.push_back(kind);
  }
  for (const LayerKind& kind : kinds)
    add(layer_part(kind), lower_layer(m, p, kind));
  add(ModelPart::kEmbedding, lower_embedding(m, p));
  add(ModelPart::kHead, lower_head(m, p));
  if (m.mtp_layers > 0)
    add(ModelPart::kMtpModule, lower_mtp_module(m, p));
  return table;
}

ModelPart layer_part(LayerKind kind) {
  if (kind.moe)
    return kind.windowed ? ModelPart::kWindowedMoeLayer : ModelPart::kMoeLayer;
  return kind.windowed ? ModelPart::kWindowedLayer : ModelPart::kLayer;
}

bool is_layer_part(ModelPart part) {
  return part == ModelPart::kLayer || part == ModelPart::kMoeLayer ||
         part == ModelPart::kWindowedLayer || part == ModelPart::kWindowedMoeLayer;
}

const char* to_string(ModelPart part) {
  switch (part) {
    case ModelPart::kLayer:
      return "layer";
    case ModelPart::kEmbedding:
      return "embedding";
    case ModelPart::kHead:
      return "head";
    case ModelPart::kMoeLayer:
      return "moe_layer";
    case ModelPart::kWindowedLayer:
      return "win_layer";
    case ModelPart::kWindowedMoeLayer:
      return "win_moe_layer";
    case ModelPart::kMtpModule:
      return "mtp";
  }
  return "layer";
}

const char* to_string(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return "forward";
    case Pass::kBackwardInput:
      return "backward_input";
    case Pass::kBackwardWeight:
      return "backward_weight";
  }
  return "forward";
}

}  // namespace capsim
