#pragma once

#include <vector>

#include "models/scenario.hpp"

namespace capsim::estimate {

// What a pipeline stage does in one step of its schedule.
enum class OpKind {
  kForward,
  kRecompute,       // forward recomputation right before the backward (selective/full)
  kBackward,        // input + weight gradients (GPipe, 1F1B, interleaved, DualPipeV)
  kBackwardInput,   // B of ZB-H1 (and DualPipeV's split steps): input gradient, sent upstream
  kBackwardWeight,  // W of ZB-H1 (and DualPipeV's split steps): weight gradient, local
};

// One step of a stage's schedule: a micro-batch through one of its model chunks.
struct PipelineOp {
  OpKind kind = OpKind::kForward;
  int micro_batch = 0;
  int chunk = 0;  // the stage's model chunk (models/pipeline_placement.hpp)
  // DualPipeV: a forward and the backward after it run as one overlapped pair, each one's
  // expert-parallel exchanges beside the other's compute; the forward's activations leave with
  // the backward's gradients, when both are done (dualpipev.py, _forward_backward_chunk).
  bool paired = false;
  bool operator==(const PipelineOp&) const = default;
};

// Returns the ordered ops of every pipeline stage (outer index) for one iteration:
//   GPipe: all forwards, then all backwards (Huang et al. 2019);
//   1F1B: P-s-1 warm-up forwards, then one forward / one backward, then the cool-down
//         (PipeDream-Flush, Narayanan et al. 2021 §2.2);
//   interleaved 1F1B: Megatron-LM's order (schedules.py,
//         forward_backward_pipelining_with_interleaving): micro-batches in groups of N
//         (`micro_batch_group`, 0 for P), each group through chunk 0..v-1, warm-up
//         (P-s-1)*2 + (v-1)*N, all forwards first when M == P or when the groups do not fit
//         (interleaved_groups_fit);
//   ZB-H1: 1F1B with the backward split into B and W, stage s deferring up to s W's to fill
//         the drain (Qi et al. 2024, "Zero Bubble Pipeline Parallelism" §3.1; same peak
//         activation memory as 1F1B).
//   DualPipeV: DeepSeek's DualPipe repository's V-shaped order (dualpipev.py, DualPipeV.step,
//         its eight steps), two chunks per stage, chunk 0 flowing from stage 0 to P-1 and
//         chunk 1 back; its main steps pair a forward with a backward of the other chunk
//         (PipelineOp::paired), and its ramp-up and cool-down split some backwards into B and W
//         (WeightGradStore). Needs M >= 2P.
// With `recompute`, a kRecompute op precedes every backward (B) op.
// REQUIRES: stages >= 1, micro_batches >= 1, chunks >= 1 (chunks > 1 only for interleaved;
// 2 for DualPipeV, with micro_batches >= 2 * stages).
[[nodiscard]] std::vector<std::vector<PipelineOp>> build_schedule(Schedule schedule, int stages,
                                                                  int micro_batches, int chunks,
                                                                  bool recompute,
                                                                  int micro_batch_group = 0);

// How many of chunk `chunk`'s forwards and backwards stage `stage` runs paired under DualPipeV
// (PipelineOp::paired) with `micro_batches` micro-batches on `stages` stages: those of its main
// step (M - 2P + s + 1 of each chunk's, bar the last stage's first pair) and, for chunk 1's
// forwards and chunk 0's backwards, those of its step 5 (P - s - 1).
struct DualPipeVPairs {
  int forwards = 0;
  int backwards = 0;
};
[[nodiscard]] DualPipeVPairs dualpipev_pairs(int stages, int stage, int micro_batches, int chunk);

// Whether Megatron-Core runs the interleaved schedule with groups of `group_size` micro-batches:
// P <= N <= M, and a last group of 0 or at least P (schedules.py, the checks of
// forward_backward_pipelining_with_interleaving).
[[nodiscard]] bool interleaved_groups_fit(int stages, int micro_batches, int group_size);

// The smallest group size that fits (P when P's do), or 0 when none does (fewer micro-batches
// than stages).
[[nodiscard]] int smallest_fitting_group(int stages, int micro_batches);

}  // namespace capsim::estimate
