#pragma once

#include <vector>

#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"

namespace capsim {

// Where in the model a kernel runs: a transformer layer of one kind (dense, mixture-of-experts,
// windowed attention), the input embedding (first stage), the head (last stage: final norm,
// logits, loss) or a multi-token-prediction module (last stage).
enum class ModelPart {
  kLayer,
  kEmbedding,
  kHead,
  kMoeLayer,
  kWindowedLayer,
  kWindowedMoeLayer,
  kMtpModule
};

// Returns the part a layer of `kind` is listed under.
[[nodiscard]] ModelPart layer_part(LayerKind kind);

// Whether `part` is a transformer layer's (it runs once per layer of its kind).
[[nodiscard]] bool is_layer_part(ModelPart part);

// One kernel of one micro-batch on one GPU with its modelled time.
struct KernelRow {
  ModelPart part = ModelPart::kLayer;
  Op op;
  Precision precision = Precision::kBf16;  // what it runs at (fp8 recipes keep some in 16 bits)
  double time_s = 0.0;
  double peak_flop_per_s = 0.0;  // the GPU's dense peak at that precision
};

// The kernels the simulator costs, one micro-batch on one GPU, alone on the GPU (beside a
// collective, compute slows by IterationCosts::compute_rate_during_comm): what to compare
// with a profiler trace or with `capsim-calibrate gemm --scenario` measurements.
struct KernelTable {
  // Each layer kind's kernels (in the order the kinds first occur), then embedding, head and
  // MTP module, each in execution order.
  std::vector<KernelRow> rows;
  int max_layers_per_stage = 0;  // how often the layer kernels run on the busiest stage
  double hbm_bytes_per_s = 0.0;  // the GPU's HBM bandwidth, to read memory-bound rows against
};

// Returns the kernels of one micro-batch (the lowering of models/workload.hpp) costed as both
// engines cost them (models/op_cost.hpp). REQUIRES: the scenario breaks no layout rule
// (estimate/layout_rules.hpp) and its GPU is in the catalog.
[[nodiscard]] KernelTable kernel_table(const Scenario& scenario, const HardwareProfile& profile);

[[nodiscard]] const char* to_string(ModelPart part);
[[nodiscard]] const char* to_string(Pass pass);

}  // namespace capsim
