#include "estimate/pipeline_replay_graph.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace capsim::estimate::replay {
namespace {

constexpr int kNone = -1;

// Widens a non-negative count or index, so that index arithmetic multiplies in size_t.
size_t as_size(int i) {
  return static_cast<size_t>(i);
}

// The steps placed so far of each forward and backward (B), by (stage, chunk, micro-batch);
// 0 until placed.
class PlacedSteps {
 public:
  PlacedSteps(Schedule schedule, int p, int m, int v)
      : schedule_(schedule),
        p_(p),
        m_(m),
        v_(v),
        forward_(as_size(p) * as_size(v) * as_size(m), 0),
        backward_(forward_.size(), 0),
        paired_forward_(as_size(p), kNoPending) {}

  // Returns the step `op` on stage s waits for: 0 when nothing, kNone when that is not placed
  // yet.
  [[nodiscard]] int32_t dependency(int s, const PipelineOp& op) const {
    int32_t step = 0;
    switch (op.kind) {
      case OpKind::kForward: {
        const std::optional<StageChunk> from = previous_chunk(schedule_, p_, s, op.chunk);
        if (!from)
          return 0;
        step = forward_[key(from->stage, from->chunk, op.micro_batch)];
        break;
      }
      case OpKind::kRecompute:
      case OpKind::kBackward:
      case OpKind::kBackwardInput: {
        const std::optional<StageChunk> from = next_chunk(schedule_, p_, v_, s, op.chunk);
        if (!from)
          return 0;  // the last virtual stage makes its gradient from the loss
        step = backward_[key(from->stage, from->chunk, op.micro_batch)];
        break;
      }
      case OpKind::kBackwardWeight:
        return 0;
    }
    return step == 0 ? kNone : step;
  }

  // Records that `op` on stage s is step `index`, when later ops wait for it. A paired
  // forward's activations leave with its pair's backward: the forward counts as placed at that
  // backward's step.
  void place(int s, const PipelineOp& op, int32_t index) {
    size_t& pending = paired_forward_[as_size(s)];
    if (op.kind == OpKind::kForward) {
      if (op.paired)
        pending = key(s, op.chunk, op.micro_batch);
      else
        forward_[key(s, op.chunk, op.micro_batch)] = index;
    } else if (op.kind == OpKind::kBackward || op.kind == OpKind::kBackwardInput) {
      backward_[key(s, op.chunk, op.micro_batch)] = index;
      if (op.paired && pending != kNoPending) {
        forward_[pending] = index;
        pending = kNoPending;
      }
    }
  }

 private:
  [[nodiscard]] size_t key(int s, int c, int mb) const {
    return (as_size(s) * as_size(v_) + as_size(c)) * as_size(m_) + as_size(mb);
  }

  Schedule schedule_;
  int p_;
  int m_;
  int v_;
  std::vector<int32_t> forward_;
  std::vector<int32_t> backward_;
  static constexpr size_t kNoPending = SIZE_MAX;
  std::vector<size_t> paired_forward_;  // per stage: the key of a paired forward not yet sent
};

// Builds a ReplayGraph one step at a time, in the order the schedule is played.
class GraphBuilder {
 public:
  GraphBuilder(Schedule schedule, int p, int m, int v)
      : v_(v),
        split_rows_(schedule == Schedule::kDualPipeV),
        placed_(schedule, p, m, v),
        last_gradient_step_(as_size(p) * as_size(v), 0) {
    // The start: the op of zeros after the rows.
    g_.steps.push_back({0, 0, 0, static_cast<uint32_t>(p * v * kRow)});
    g_.first_forward.assign(static_cast<size_t>(p), 0);
    g_.last_op.assign(static_cast<size_t>(p), 0);
  }

  // Appends `op` of stage s as the next step, or returns false when the op it waits for is not
  // placed yet.
  bool try_place(int s, const PipelineOp& op) {
    const auto stage = static_cast<size_t>(s);
    const int32_t waits_for = placed_.dependency(s, op);
    if (waits_for == kNone)
      return false;
    const auto index = static_cast<int32_t>(g_.steps.size());
    g_.steps.push_back(
        {waits_for, g_.last_op[stage], static_cast<uint32_t>(s),
         static_cast<uint32_t>((s * v_ + op.chunk) * kRow + cost_kind(op, split_rows_))});
    placed_.place(s, op, index);
    if (op.kind == OpKind::kForward && g_.first_forward[stage] == 0)
      g_.first_forward[stage] = index;
    // A chunk's weight gradients are done with its last full backward or W.
    if (op.kind == OpKind::kBackward || op.kind == OpKind::kBackwardWeight)
      last_gradient_step_[as_size(s) * as_size(v_) + as_size(op.chunk)] = index;
    g_.last_op[stage] = index;
    return true;
  }

  // Returns the number of steps placed so far, the placeholder included.
  [[nodiscard]] int32_t placed() const { return static_cast<int32_t>(g_.steps.size()); }

  // Returns the graph, with the last step making each chunk's weight gradients marked as the
  // one that releases its buckets.
  ReplayGraph finish() {
    g_.first_release = g_.steps.size();
    for (const int32_t step : last_gradient_step_) {
      Step& releasing = g_.steps[static_cast<size_t>(step)];
      releasing.stage_and_release |= Step::kReleases;
      g_.first_release = std::min(g_.first_release, static_cast<size_t>(step));
    }
    return std::move(g_);
  }

 private:
  int v_;
  bool split_rows_;
  PlacedSteps placed_;
  std::vector<int32_t> last_gradient_step_;  // per (stage, chunk)
  ReplayGraph g_;
};

// Orders the ops by playing the schedule: a stage takes its next op once the op it waits for
// (the previous virtual stage's forward, or the next one's backward) is placed. One op per stage
// per pass, so the order interleaves the stages and playing it the CPU overlaps their chains.
ReplayGraph build_graph(Schedule schedule, int p, int m, int v, bool recompute, int group) {
  const auto ops = build_schedule(schedule, p, m, v, recompute, group);
  const auto longer_ops =
      build_schedule(schedule, p, m + replay_period(schedule, p, group), v, recompute, group);
  // Per stage: the first op that differs in the longer run (or that it has and this one not).
  std::vector<size_t> differs(static_cast<size_t>(p));
  for (size_t stage = 0; stage < differs.size(); ++stage) {
    const auto& own = ops[stage];
    const auto& longer = longer_ops[stage];
    differs[stage] = static_cast<size_t>(
        std::mismatch(own.begin(), own.end(), longer.begin(), longer.end()).first - own.begin());
  }
  GraphBuilder builder(schedule, p, m, v);
  size_t shared = 0;  // set when a stage first comes to an op that differs
  std::vector<size_t> next(static_cast<size_t>(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t stage = 0; stage < next.size(); ++stage) {
      if (shared == 0 && next[stage] == differs[stage])
        shared = static_cast<size_t>(builder.placed());
      if (next[stage] == ops[stage].size() ||
          !builder.try_place(static_cast<int>(stage), ops[stage][next[stage]]))
        continue;
      ++next[stage];
      progress = true;
    }
  }
  for (size_t stage = 0; stage < next.size(); ++stage) {
    if (next[stage] != ops[stage].size())
      throw std::logic_error("pipeline replay: the schedule deadlocked");
  }
  ReplayGraph graph = builder.finish();
  graph.steps_shared_with_longer = shared;
  return graph;
}

}  // namespace

int replay_period(Schedule schedule, int p, int group) {
  return schedule == Schedule::kInterleaved && group > 0 ? group : p;
}

const ReplayGraph& graph_of(Schedule schedule, int p, int m, int v, bool recompute, int group) {
  using Key = std::tuple<Schedule, int, int, int, bool, int>;
  thread_local std::map<Key, ReplayGraph> seen;
  thread_local size_t steps_kept = 0;
  constexpr size_t kMaxGraphs = 1024;
  constexpr size_t kMaxSteps = size_t{8} << 20;
  const Key key{schedule, p, m, v, recompute, group};
  thread_local uint64_t graphs_built = 0;
  // A replay asks for two or three shapes, and the next layout mostly for the same ones: the
  // last few answers are looked at before the map (cleared with it).
  struct Recent {
    Key key;
    const ReplayGraph* graph = nullptr;
  };
  thread_local std::array<Recent, 4> recent{};
  thread_local size_t next_recent = 0;
  for (const Recent& r : recent) {
    if (r.graph != nullptr && r.key == key)
      return *r.graph;
  }
  auto it = seen.find(key);
  if (it == seen.end()) {
    ReplayGraph graph = build_graph(schedule, p, m, v, recompute, group);
    graph.id = ++graphs_built;
    if (seen.size() >= kMaxGraphs || steps_kept + graph.steps.size() > kMaxSteps) {
      seen.clear();
      recent.fill({});
      steps_kept = 0;
    }
    steps_kept += graph.steps.size();
    it = seen.emplace(key, std::move(graph)).first;
  }
  recent[next_recent] = {key, &it->second};
  next_recent = (next_recent + 1) % recent.size();
  return it->second;
}

}  // namespace capsim::estimate::replay
