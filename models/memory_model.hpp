#pragma once

#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Memory held by one GPU of one pipeline stage at its peak (bytes). Components follow
// Korthikanti et al. 2022 (activations, Table 2) and Rajbhandari et al. 2020 (ZeRO states).
struct StageMemory {
  int stage = 0;
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;          // fp32 master weights + Adam moments, after ZeRO
  double activations_bytes = 0.0;        // all micro-batches in flight
  double embedding_logits_bytes = 0.0;   // embedding output / logits + loss buffers
  double communication_bytes = 0.0;      // NCCL and DP bucket buffers, ZeRO-3 gathered params
  double reserve_bytes = 0.0;            // CUDA context, allocator fragmentation
  int micro_batches_in_flight = 0;
  [[nodiscard]] double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes +
           embedding_logits_bytes + communication_bytes + reserve_bytes;
  }
};

// Per-GPU memory of a layout: every stage, the worst one and whether it fits.
struct MemoryEstimate {
  std::vector<StageMemory> stages;
  int worst_stage = 0;
  double peak_bytes = 0.0;
  double capacity_bytes = 0.0;
  bool fits = false;
};

// Returns the activation memory (bytes) one transformer layer keeps for one micro-batch on one
// GPU: Korthikanti et al. 2022 Table 2 (sbh(34 + 5as/h) without parallelism; /t with TP+SP;
// selective recompute drops the 5as/h term; full recompute keeps only the 2sbh layer input).
[[nodiscard]] double activation_bytes_per_layer(const ModelSpec& model,
                                                const Parallelism& parallelism);

// Returns the per-GPU memory of every pipeline stage and the peak.
[[nodiscard]] MemoryEstimate estimate_memory(const ModelSpec& model,
                                             const Parallelism& parallelism, const GpuSpec& gpu);

}  // namespace capsim
