#include "estimate/pipeline_schedule.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <stdexcept>
#include <utility>

namespace capsim::estimate {

DualPipeVPairs dualpipev_pairs(int stages, int stage, int micro_batches, int chunk) {
  const int main = micro_batches - 2 * stages + stage + 1 - (stage == stages - 1 ? 1 : 0);
  const int with_step_5 = micro_batches - stages;
  return chunk == 0 ? DualPipeVPairs{main, with_step_5} : DualPipeVPairs{with_step_5, main};
}

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
  void forward(int mb, int chunk, bool paired = false) {
    ops.push_back({OpKind::kForward, mb, chunk, paired});
  }
  void backward(OpKind kind, int mb, int chunk, bool paired = false) {
    if (recompute)
      ops.push_back({OpKind::kRecompute, mb, chunk});
    ops.push_back({kind, mb, chunk, paired});
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

// DualPipeV's order on stage `stage` (dualpipev.py, DualPipeV.step): each chunk's forwards and
// backwards go through the micro-batches in order; a backward with `zero_bubble` leaves its
// weight gradients (W) to the next `weight()`, oldest first (WeightGradStore).
class DualPipeV {
 public:
  DualPipeV(Emitter& e, int stages, int stage, int m) : e_(e), p_(stages), s_(stage), m_(m) {}

  void emit() {
    const bool last = s_ == p_ - 1;
    for (int i = 0; i < (p_ - s_ - 1) * 2; ++i)  // step 1: nF0
      forward(0);
    for (int i = 0; i < s_ + 1; ++i) {  // step 2: nF0F1
      forward(0);
      forward(1);
    }
    for (int i = 0; i < p_ - s_ - 1; ++i) {  // step 3: nB1W1F1
      backward(1, true);
      weight();
      forward(1);
    }
    for (int i = 0; i < m_ - 2 * p_ + s_ + 1; ++i) {  // step 4: nF0B1F1B0
      // The last stage runs its first pair one after the other, to shorten the bubble.
      const bool paired = !(i == 0 && last);
      forward(0, paired);
      backward(1, false, paired);
      forward(1, true);
      backward(0, false, true);
    }
    for (int i = 0; i < p_ - s_ - 1; ++i) {  // step 5: nB1F1B0
      backward(1, false);
      forward(1, true);
      backward(0, false, true);
    }
    bool zero_bubble = false;  // step 6: nB1B0, the second half split
    for (int i = 0; i < s_ + 1; ++i) {
      if (i == (s_ + 1) / 2 && s_ % 2 == 1)
        zero_bubble = true;
      backward(1, zero_bubble);
      if (i == (s_ + 1) / 2 && s_ % 2 == 0)
        zero_bubble = true;
      backward(0, zero_bubble);
    }
    for (int i = 0; i < p_ - s_ - 1; ++i) {  // step 7: nWB0
      weight();
      backward(0, true);
    }
    while (!deferred_.empty())  // step 8: nW
      weight();
  }

 private:
  void forward(int chunk, bool paired = false) {
    e_.forward(forwards_[static_cast<size_t>(chunk)]++, chunk, paired);
  }
  void backward(int chunk, bool zero_bubble, bool paired = false) {
    const int mb = backwards_[static_cast<size_t>(chunk)]++;
    e_.backward(zero_bubble ? OpKind::kBackwardInput : OpKind::kBackward, mb, chunk, paired);
    if (zero_bubble)
      deferred_.push_back({mb, chunk});
  }
  void weight() {
    e_.weight(deferred_.front().first, deferred_.front().second);
    deferred_.pop_front();
  }

  Emitter& e_;
  int p_;
  int s_;
  int m_;
  std::array<int, 2> forwards_{};
  std::array<int, 2> backwards_{};
  std::deque<std::pair<int, int>> deferred_;  // (micro-batch, chunk) of the W's to do
};

}  // namespace

std::vector<std::vector<PipelineOp>> build_schedule(Schedule schedule, int stages,
                                                    int micro_batches, int chunks, bool recompute,
                                                    int micro_batch_group) {
  if (stages < 1 || micro_batches < 1 || chunks < 1) {
    throw std::invalid_argument("build_schedule: stages, micro_batches and chunks must be >= 1");
  }
  if (schedule == Schedule::kDualPipeV) {
    if (chunks != 2 || micro_batches < 2 * stages)
      throw std::invalid_argument("build_schedule: DualPipeV needs 2 chunks and M >= 2P");
  } else if (chunks > 1 && schedule != Schedule::kInterleaved) {
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
      case Schedule::kDualPipeV:
        DualPipeV(e, stages, s, micro_batches).emit();
        break;
    }
  }
  return out;
}

}  // namespace capsim::estimate
