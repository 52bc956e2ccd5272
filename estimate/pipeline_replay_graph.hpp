#pragma once

// The dependency graph of a pipeline schedule's ops, which estimate/pipeline_replay.cpp plays
// with op times: built once per schedule shape and kept per thread.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/parallelism.hpp"

#include "estimate/pipeline_schedule.hpp"

namespace capsim::estimate::replay {

// Per (stage, chunk) row of the per-call table: for each op kind (cost_kind) its total, compute
// and communication time and how long after the op it waits for ends its data arrives
// (overlapped sends, estimate/pipeline_replay.hpp), then the chunk's bucket count, and a full
// bucket's and the last bucket's share of its gradients and reduction time. After the last
// row, one op of zeros: the start's.
constexpr int kOpWidth = 4;
constexpr int kCompute = 1;  // offsets from an op's total
constexpr int kComm = 2;
constexpr int kArrival = 3;
constexpr int kOpKinds = 7;  // cost_kind's rows
constexpr int kBucketCount = kOpKinds * kOpWidth;
constexpr int kFullBucket = kBucketCount + 1;  // share, then time
constexpr int kLastBucket = kBucketCount + 3;
constexpr int kRow = kBucketCount + 5;

// One op of the replay, in an order where every op comes after the ops it waits for.
// Steps are numbered from 1; slot 0 of the end times is the start of the iteration, so that an
// op with nothing to wait for reads 0 without a branch.
struct Step {
  int32_t waits_for;  // the step it waits for besides its stage's previous op (0: none)
  int32_t previous;   // its stage's previous op (0: none)
  // Its stage, with kReleases set for the op that ends its chunk's weight gradients: only the
  // loop that plays buckets reads either, so the branch-free loop's index needs no mask.
  uint32_t stage_and_release;
  uint32_t cost;  // index into the per-call table, (stage * chunks + chunk) * kRow + kind
  static constexpr uint32_t kReleases = uint32_t{1} << 31;
  [[nodiscard]] bool releases_buckets() const { return (stage_and_release & kReleases) != 0; }
  [[nodiscard]] size_t stage() const { return stage_and_release & ~kReleases; }
  [[nodiscard]] size_t cost_index() const { return cost; }
};

// The dependency graph of one schedule shape, independent of op times: computed once per
// (schedule, stages, micro-batches, chunks, recompute) and reused by every replay of that shape.
struct ReplayGraph {
  uint64_t id = 0;                     // unique among the graphs a thread builds
  std::vector<Step> steps;             // steps[0] is a placeholder for the start
  size_t first_release = 0;            // the first step that releases buckets
  std::vector<int32_t> first_forward;  // per stage: its first forward's step
  std::vector<int32_t> last_op;        // per stage: its last step
  // Its first steps that the graph of the same shape with one replay_period() more
  // micro-batches has too: both place the same ops until some stage reaches an op where their
  // schedules differ.
  size_t steps_shared_with_longer = 0;
};

// Where an op's times start in its row: forward, recompute, backward (B), W, then DualPipeV's
// input-gradient half of a split backward and its paired forward and backward. Under ZB-H1 (no
// `split_rows`) every backward is split, and its B takes the backward's place.
[[nodiscard]] inline int cost_kind(const PipelineOp& op, bool split_rows) {
  switch (op.kind) {
    case OpKind::kForward:
      return (op.paired ? 5 : 0) * kOpWidth;
    case OpKind::kRecompute:
      return kOpWidth;
    case OpKind::kBackward:
      return (op.paired ? 6 : 2) * kOpWidth;
    case OpKind::kBackwardInput:
      return (split_rows ? 4 : 2) * kOpWidth;
    case OpKind::kBackwardWeight:
      return 3 * kOpWidth;
  }
  return 0;
}

// The micro-batches after which a schedule's shape repeats: the interleaved schedule's
// micro-batch group (`group`, 0 for p), else the stages p.
[[nodiscard]] int replay_period(Schedule schedule, int p, int group);

// Returns the graph of a schedule shape (stages p, micro-batches m, chunks v, the interleaved
// schedule's micro-batch group, 0 for p), built on first use by playing the schedule (a stage
// takes its next op once the op it waits for is placed). The planner replays the same few
// hundred shapes thousands of times, so each thread keeps the graphs it has built: at most
// 1,024 graphs or 8M steps (~130 MB); past either, the cache starts again. The reference is
// valid until the thread's next call.
[[nodiscard]] const ReplayGraph& graph_of(Schedule schedule, int p, int m, int v, bool recompute,
                                          int group = 0);

}  // namespace capsim::estimate::replay
