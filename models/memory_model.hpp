#pragma once

#include <vector>

#include "models/byte_units.hpp"
#include "models/gpu_catalog.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Memory held by one GPU of one pipeline stage at its peak (bytes). Components follow
// Korthikanti et al. 2022 (activations, Table 2) and Rajbhandari et al. 2020 (ZeRO states).
struct StageMemory {
  int stage = 0;
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;         // master weights + Adam moments, after ZeRO
  double activations_bytes = 0.0;       // all micro-batches in flight
  double embedding_logits_bytes = 0.0;  // embedding output / logits + loss buffers
  double communication_bytes = 0.0;     // NCCL and DP bucket buffers, ZeRO-3 gathered params
  double reserve_bytes = 0.0;           // CUDA context, allocator fragmentation
  int micro_batches_in_flight = 0;      // interleaved: model-chunk micro-batches / v, rounded up
  double parameters = 0.0;              // parameters held before ZeRO sharding (after TP)
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

// Bytes per parameter of the model states under Megatron-LM's mixed-precision convention:
// weights in the compute precision (fp8 runs keep bf16 weights), gradients in fp32 for bf16/fp8
// (Megatron forces fp32 main-grad accumulation for bf16) and fp16 for fp16, optimizer = fp32
// master copy + two fp32 Adam moments. fp16: 2+2+12 = 16 (Rajbhandari et al. 2020 §3.1);
// bf16/fp8: 2+4+12 = 18 (Megatron theoretical_memory_usage.py); fp32: 4+4+8 = 16.
struct BytesPerParameter {
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;
  [[nodiscard]] double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes;
  }
};

// Returns the bytes per parameter of weights, gradients and Adam state for a precision.
[[nodiscard]] BytesPerParameter bytes_per_parameter(Precision precision);

// Returns the optimizer's bytes per parameter before ZeRO: the master copy plus Adam's two
// moments, master_weight_bytes() + 2 x optimizer_state_bytes_per_element() (12 by default for
// 16-bit and fp8 training, 8 for fp32; Apex with dtype=bf16: 2 + 2 x 2 = 6; remainders: 10).
[[nodiscard]] double optimizer_bytes_per_parameter(const Parallelism& parallelism);

// Returns the bytes one Adam step moves per parameter of the local shard (memory bound): 34 by
// default, following the master's and the moments' storage.
[[nodiscard]] double adam_step_bytes_per_parameter(const Parallelism& parallelism);

// How attention keeps its softmax for the backward pass: kFlash (and kTriton, the same algorithm)
// stores no s x s scores; kMaterialized stores scores, dropout mask and output (Korthikanti's
// 5as/h term).
using AttentionMemory = AttentionKernel;

// Returns the activation memory (bytes) one transformer layer keeps for one micro-batch on one
// GPU: Korthikanti et al. 2022 Table 2 (sbh(34 + 5as/h) without parallelism; /t with TP+SP;
// selective recompute drops the 5as/h term; full recompute keeps only the 2sbh layer input).
// The default (kFlash) drops the 5as/h term for every recompute mode; kMaterialized gives the
// paper's figures. Sequence length is divided by the context-parallel size.
[[nodiscard]] double activation_bytes_per_layer(
    const ModelSpec& model, const Parallelism& parallelism,
    AttentionMemory attention = AttentionMemory::kFlash);

// Returns, for one pipeline stage, the micro-batches whose activations it holds at its peak in
// units of the stage's full layer set: 1F1B / ZB-H1 min(p - i, m), GPipe m, interleaved
// Megatron's warmup count ((p - i - 1)·2 + (v - 1)·p + 1 chunk micro-batches) / v, DualPipeV
// (2p + 1) / 2 on every stage.
// REQUIRES: 0 <= stage < parallelism.pipeline
[[nodiscard]] double micro_batches_in_flight(const Parallelism& parallelism, int stage);

// Returns, for one pipeline stage under ZB-H1, the micro-batches whose weight gradients (W) it
// has deferred at its peak, beyond micro_batches_in_flight: stage i defers up to i W passes
// (estimate/pipeline_schedule.cpp), min(p, m) - min(p - i, m); 0 for the other schedules
// (DualPipeV defers W passes only in its cool-down, where the forwards it holds and the W passes
// it defers together stay within its 2p + 1 chunks). Each keeps the layers' linear inputs and
// output gradients until its W runs.
// REQUIRES: 0 <= stage < parallelism.pipeline
[[nodiscard]] double weight_gradients_pending(const Parallelism& parallelism, int stage);

// Framework reserve: CUDA context, cuBLAS workspaces and NCCL internal buffers (a chosen
// figure, 1 GiB; see docs/memory.md), plus 5% of activations for allocator fragmentation
// (Megatron's overhead factor 1.05 in theoretical_memory_usage.py).
inline constexpr double kFrameworkReserveBytes = kGiB;
inline constexpr double kFragmentationFraction = 0.05;

// Returns the per-GPU memory of every pipeline stage and the peak.
[[nodiscard]] MemoryEstimate estimate_memory(const ModelSpec& model, const Parallelism& parallelism,
                                             const GpuSpec& gpu,
                                             AttentionMemory attention = AttentionMemory::kFlash);

}  // namespace capsim
