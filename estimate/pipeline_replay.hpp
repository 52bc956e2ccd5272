#pragma once

#include <vector>

#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"

namespace capsim::estimate {

// Per-micro-batch time of each op of one model chunk on one pipeline stage, and the DP
// gradient buckets the chunk reduces after its last backward (or W). Each op computes (slowed
// while buckets are on the wire) and then communicates on the critical path (TP/CP collectives,
// the micro-batch overhead: not slowed), as the event engine runs it.
struct ChunkOpTimes {
  double forward_s = 0.0;  // compute
  double recompute_s = 0.0;
  double backward_s = 0.0;  // the whole backward, or its input-gradient part (B) under ZB-H1
  // The weight-gradient part (W): under ZB-H1 beside backward_s; under DualPipeV, whose
  // backward_s is whole, for the backwards it splits (with input_backward_s, their B); 0 for
  // the other schedules.
  double weight_s = 0.0;
  // Released through the op that ends the chunk's gradients, each as its share of that op is
  // done: full buckets first, the last (the rest) at its end (count 0: none).
  DpBucketSplit gradient_buckets{0, 1.0};
  double bucket_s = 0.0;        // a full bucket's reduction time
  double last_bucket_s = 0.0;   // the last bucket's
  double forward_comm_s = 0.0;  // after the op's compute
  double recompute_comm_s = 0.0;
  double backward_comm_s = 0.0;

  // Overlapped sends (interleaved, ZB-H1): how long after the previous virtual stage's forward
  // ends its activations arrive for this chunk's forward, and after the next one's backward (B)
  // its gradients for this chunk's recompute and backward. The sender goes on; only the
  // receiving op waits. Blocking sends are in the sending ops' comm times.
  double activations_arrival_s = 0.0;
  double gradients_arrival_s = 0.0;
  // DualPipeV: the input-gradient part of a backward it splits (its B; W is weight_s), and the
  // communication of a forward and a backward that run paired (PipelineOp::paired), their
  // expert-parallel exchanges hidden behind each other's compute.
  double input_backward_s = 0.0;
  bool weight_in_backward = false;  // backward_s includes weight_s
  double paired_forward_comm_s = 0.0;
  double paired_backward_comm_s = 0.0;
  [[nodiscard]] double total_s() const {
    return forward_s + recompute_s + backward_s + (weight_in_backward ? 0.0 : weight_s) +
           forward_comm_s + recompute_comm_s + backward_comm_s;
  }
};

// When each stage starts and ends its share of one iteration, from the first forward of stage 0
// (time 0) to the last op of the pipeline.
struct PipelineTimeline {
  double makespan_s = 0.0;
  std::vector<double> first_forward_start_s;  // per stage
  std::vector<double> last_op_end_s;          // per stage
  std::vector<double> reduction_end_s;        // per stage: its last gradient bucket's end
  double unslowed_makespan_s = 0.0;           // the makespan had buckets not slowed compute
};

// Plays the schedule's op order (estimate/pipeline_schedule.hpp) with fixed op times: each stage
// runs its ops in order, a forward waits for the previous virtual stage's forward of the same
// micro-batch to arrive, a backward (or B) for the next virtual stage's. Blocking sends (1F1B,
// GPipe) are part of the sending op's communication time; overlapped ones (interleaved, ZB-H1)
// delay only the receiving op, as the event engine plays them. The longest path of this graph
// is the pipeline's makespan, bubbles included, for any mix of stage times (uneven stages, a
// heavy first stage), which no closed form in the literature covers for all four schedules.
//
// Gradient buckets (PyTorch DDP, Li et al. 2020; Megatron overlap_grad_reduce) go out one after
// another per stage as their chunk's gradients are done, as the event engine issues them; while
// any is on the wire the stage computes at `compute_rate_during_comm` (the SMs NCCL holds,
// models/overlap.hpp), so early chunks' buckets hide in the cooldown and slow it.
//
// Long runs are not replayed in full: 1F1B and ZB-H1 stop once two runs of P + (M mod P) and
// 2P + (M mod P) micro-batches (the same schedule shape) move every stage by P times the
// busiest stage's work, the pace no cycle of their graph can exceed (with send delays up to
// half the shortest forward: evidence), and each further P micro-batches add that step;
// interleaved runs, and ZB-H1 with longer delays (a cycle through them can be slower than any
// stage), stop after three runs move every stage by one common step twice, which is strong
// evidence but not proof (pipeline_replay.cpp says when it failed). Otherwise the window doubles,
// and a run too short to gain from it is replayed whole, as GPipe runs always are
// (`PipelineReplayTest.ExtendsLongRunsExactly`). The graph of each shape is built once per thread;
// each thread also keeps the op ends before the first bucket release of its last few replays
// (all of them when no bucket goes on the wire, ZeRO-3 or no DP: nothing slows compute then),
// reused for the same graph and op totals (values unchanged).
//
// The interleaved schedule goes in groups of `micro_batch_group` micro-batches (0: stages), and
// its shape repeats every group rather than every P micro-batches: there the runs above are a
// group apart.
//
// REQUIRES: times.size() == stages >= 1, every times[s].size() == chunks >= 1,
// micro_batches >= 1 (interleaved with groups that do not fit, interleaved_groups_fit, runs
// every forward first, as build_schedule orders it).
[[nodiscard]] PipelineTimeline replay_pipeline(Schedule schedule,
                                               const std::vector<std::vector<ChunkOpTimes>>& times,
                                               int micro_batches, bool recompute,
                                               double compute_rate_during_comm = 1.0,
                                               int micro_batch_group = 0);

// Same, into `out`, whose vectors keep their storage.
void replay_pipeline(Schedule schedule, const std::vector<std::vector<ChunkOpTimes>>& times,
                     int micro_batches, bool recompute, double compute_rate_during_comm,
                     PipelineTimeline& out, int micro_batch_group = 0);

namespace detail {
// replay_pipeline without the steady-state shortcut (for tests).
[[nodiscard]] PipelineTimeline replay_every_micro_batch(
    Schedule schedule, const std::vector<std::vector<ChunkOpTimes>>& times, int micro_batches,
    bool recompute, double compute_rate_during_comm = 1.0, int micro_batch_group = 0);
}  // namespace detail

}  // namespace capsim::estimate
