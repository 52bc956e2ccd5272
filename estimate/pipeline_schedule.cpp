#include "estimate/pipeline_schedule.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace capsim::estimate {

bool interleaved_groups_fit(int stages, int micro_batches, int group_size) {
  const int last = micro_batches % group_size;
  return group_size >= stages && group_size <= micro_batches && (last == 0 || last >= stages);
}

int smallest_fitting_group(int stages, int micro_batches) {
  for (int group = stages; group <= micro_batches; ++group) {
    if (interleaved_groups_fit(stages, micro_batches, group))
      return group;
  }
  return 0;
}

namespace {

struct Emitter {
  std::vector<PipelineOp>& ops;
  bool recompute;
  void forward(int mb, int chunk) { ops.push_back({OpKind::kForward, mb, chunk}); }
  void backward(OpKind kind, int mb, int chunk) {
    if (recompute)
      ops.push_back({OpKind::kRecompute, mb, chunk});
    ops.push_back({kind, mb, chunk});
  }
  void weight(int mb, int chunk) { ops.push_back({OpKind::kBackwardWeight, mb, chunk}); }
};

void gpipe(Emitter& e, int m) {
  for (int i = 0; i < m; ++i)
    e.forward(i, 0);
  for (int i = 0; i < m; ++i)
    e.backward(OpKind::kBackward, i, 0);
}

// PipeDream-Flush order: P-s-1 warm-up forwards, one forward / one backward, the cool-down.
// `backward(mb)` emits a micro-batch's backward.
template <typename Backward>
void one_f_one_b_order(Emitter& e, int stages, int stage, int m, Backward backward) {
  const int warmup = std::min(stages - stage - 1, m);
  int f = 0;
  int b = 0;
  for (; f < warmup; ++f)
    e.forward(f, 0);
  for (; f < m; ++f, ++b) {
    e.forward(f, 0);
    backward(b);
  }
  for (; b < m; ++b)
    backward(b);
}

void one_f_one_b(Emitter& e, int stages, int stage, int m) {
  one_f_one_b_order(e, stages, stage, m, [&](int mb) { e.backward(OpKind::kBackward, mb, 0); });
}

// Megatron-LM's interleaved order: the k-th forward (backward) of a stage. Micro-batches go in
// groups of N (the micro-batch group, P by default; the last group may be smaller); a group runs
// through chunk 0..v-1 (backward: v-1..0) before the next group starts (schedules.py,
// get_schedule_table).
struct InterleavedOrder {
  int group_size;
  int m;
  int chunks;
  PipelineOp at(int k, bool forward) const {
    const int group_ops = group_size * chunks;
    const int group = k / group_ops;
    const int start = group * group_size;
    const int size = std::min(group_size, m - start);
    const int in_group = k - group * group_ops;
    const int chunk = in_group / size;
    const int mb = start + in_group % size;
    return {forward ? OpKind::kForward : OpKind::kBackward, mb,
            forward ? chunk : chunks - 1 - chunk};
  }
};

void interleaved(Emitter& e, int stages, int stage, int m, int chunks, int group_size) {
  const InterleavedOrder order{group_size, m, chunks};
  const int total = m * chunks;
  // Megatron-Core's warmup (schedules.py, get_pp_rank_microbatches, as of Megatron-LM commit
  // 4295be1a6c, Nov 2024): with m == P only the ranks whose warmup reaches the total run
  // all-warmup.
  int warmup = (stages - stage - 1) * 2 + (chunks - 1) * group_size;
  // Megatron refuses a last group smaller than P (it would deadlock a stage's ring); such a
  // count runs every forward first (a GPipe order over the virtual stages), which cannot.
  if (!interleaved_groups_fit(stages, m, group_size))
    warmup = total;
  warmup = std::min(warmup, total);
  int f = 0;
  int b = 0;
  for (; f < warmup; ++f) {
    const PipelineOp op = order.at(f, true);
    e.forward(op.micro_batch, op.chunk);
  }
  for (; f < total; ++f, ++b) {
    const PipelineOp fo = order.at(f, true);
    e.forward(fo.micro_batch, fo.chunk);
    const PipelineOp bo = order.at(b, false);
    e.backward(OpKind::kBackward, bo.micro_batch, bo.chunk);
  }
  for (; b < total; ++b) {
    const PipelineOp bo = order.at(b, false);
    e.backward(OpKind::kBackward, bo.micro_batch, bo.chunk);
  }
}

void zero_bubble_h1(Emitter& e, int stages, int stage, int m) {
  const auto max_deferred = static_cast<size_t>(stage);
  std::deque<int> pending;  // micro-batches whose W is still to do, oldest first
  auto backward = [&](int mb) {
    e.backward(OpKind::kBackwardInput, mb, 0);
    pending.push_back(mb);
    if (pending.size() > max_deferred) {
      e.weight(pending.front(), 0);
      pending.pop_front();
    }
  };
  one_f_one_b_order(e, stages, stage, m, backward);
  for (const int mb : pending)
    e.weight(mb, 0);
}

}  // namespace

std::vector<std::vector<PipelineOp>> build_schedule(Schedule schedule, int stages,
                                                    int micro_batches, int chunks, bool recompute,
                                                    int micro_batch_group) {
  if (stages < 1 || micro_batches < 1 || chunks < 1) {
    throw std::invalid_argument("build_schedule: stages, micro_batches and chunks must be >= 1");
  }
  if (chunks > 1 && schedule != Schedule::kInterleaved) {
    throw std::invalid_argument("build_schedule: virtual stages need the interleaved schedule");
  }
  std::vector<std::vector<PipelineOp>> out(static_cast<size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    Emitter e{out[static_cast<size_t>(s)], recompute};
    switch (schedule) {
      case Schedule::kGpipe:
        gpipe(e, micro_batches);
        break;
      case Schedule::kOneFOneB:
        one_f_one_b(e, stages, s, micro_batches);
        break;
      case Schedule::kInterleaved:
        interleaved(e, stages, s, micro_batches, chunks,
                    micro_batch_group > 0 ? micro_batch_group : stages);
        break;
      case Schedule::kZeroBubble:
        zero_bubble_h1(e, stages, s, micro_batches);
        break;
    }
  }
  return out;
}

}  // namespace capsim::estimate
