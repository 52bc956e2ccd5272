#include "models/pipeline_replay.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "models/param_gather_overlap.hpp"
#include "models/pipeline_schedule.hpp"

namespace capsim {
namespace {

constexpr int kNone = -1;

// Widens a non-negative count or index, so that index arithmetic multiplies in size_t.
size_t as_size(int i) {
  return static_cast<size_t>(i);
}

// One op of the replay, in an order where every op comes after the ops it waits for.
// Steps are numbered from 1; slot 0 of the end times is the start of the iteration, so that an
// op with nothing to wait for reads 0 without a branch.
struct Step {
  int32_t waits_for;  // the step it waits for besides its stage's previous op (0: none)
  int32_t previous;   // its stage's previous op (0: none)
  int32_t stage;
  int32_t cost;  // index into the per-call table: (stage * chunks + chunk) * kRow + kind, negated
                 // (minus one) for the op that ends its chunk's weight gradients
  [[nodiscard]] bool releases_buckets() const { return cost < 0; }
  [[nodiscard]] size_t cost_index() const {
    return static_cast<size_t>(cost < 0 ? -cost - 1 : cost);
  }
};

// Per (stage, chunk) row of the per-call table: for each op kind (cost_kind) its total, compute
// and communication time, then the chunk's bucket count, and a full bucket's and the last
// bucket's share of its gradients and reduction time.
constexpr int kRow = 17;
constexpr int kCompute = 1;  // offsets from an op's total
constexpr int kComm = 2;
constexpr int kBucketCount = 12;
constexpr int kFullBucket = 13;  // share, then time
constexpr int kLastBucket = 15;

// The dependency graph of one schedule shape, independent of op times: computed once per
// (schedule, stages, micro-batches, chunks, recompute) and reused by every replay of that shape.
struct ReplayGraph {
  uint64_t id = 0;                     // unique among the graphs a thread builds
  std::vector<Step> steps;             // steps[0] is a placeholder for the start
  size_t first_release = 0;            // the first step that releases buckets
  std::vector<int32_t> first_forward;  // per stage: its first forward's step
  std::vector<int32_t> last_op;        // per stage: its last step
  // Its first steps that the graph of the same shape with P more micro-batches has too: both
  // place the same ops until some stage reaches an op where their schedules differ.
  size_t steps_shared_with_longer = 0;
};

// Where an op kind's times start in its row.
int cost_kind(OpKind kind) {
  switch (kind) {
    case OpKind::kForward:
      return 0;
    case OpKind::kRecompute:
      return 3;
    case OpKind::kBackward:
    case OpKind::kBackwardInput:
      return 6;
    case OpKind::kBackwardWeight:
      return 9;
  }
  return 0;
}

// The steps placed so far of each forward and backward (B), by (stage, chunk, micro-batch);
// 0 until placed.
class PlacedSteps {
 public:
  PlacedSteps(int p, int m, int v)
      : p_(p),
        m_(m),
        v_(v),
        forward_(as_size(p) * as_size(v) * as_size(m), 0),
        backward_(forward_.size(), 0) {}

  // Returns the step `op` on stage s waits for: 0 when nothing, kNone when that is not placed
  // yet.
  [[nodiscard]] int32_t dependency(int s, const PipelineOp& op) const {
    int32_t step = 0;
    switch (op.kind) {
      case OpKind::kForward:
        if (s > 0)
          step = forward_[key(s - 1, op.chunk, op.micro_batch)];
        else if (op.chunk > 0)
          step = forward_[key(p_ - 1, op.chunk - 1, op.micro_batch)];
        else
          return 0;
        break;
      case OpKind::kRecompute:
      case OpKind::kBackward:
      case OpKind::kBackwardInput:
        if (s + 1 < p_)
          step = backward_[key(s + 1, op.chunk, op.micro_batch)];
        else if (op.chunk + 1 < v_)
          step = backward_[key(0, op.chunk + 1, op.micro_batch)];
        else
          return 0;  // the last virtual stage makes its gradient from the loss
        break;
      case OpKind::kBackwardWeight:
        return 0;
    }
    return step == 0 ? kNone : step;
  }

  // Records that `op` on stage s is step `index`, when later ops wait for it.
  void place(int s, const PipelineOp& op, int32_t index) {
    if (op.kind == OpKind::kForward) {
      forward_[key(s, op.chunk, op.micro_batch)] = index;
    } else if (op.kind == OpKind::kBackward || op.kind == OpKind::kBackwardInput) {
      backward_[key(s, op.chunk, op.micro_batch)] = index;
    }
  }

 private:
  [[nodiscard]] size_t key(int s, int c, int mb) const {
    return (as_size(s) * as_size(v_) + as_size(c)) * as_size(m_) + as_size(mb);
  }

  int p_;
  int m_;
  int v_;
  std::vector<int32_t> forward_;
  std::vector<int32_t> backward_;
};

// Builds a ReplayGraph one step at a time, in the order the schedule is played.
class GraphBuilder {
 public:
  GraphBuilder(Schedule schedule, int p, int m, int v)
      : v_(v),
        makes_gradients_(schedule == Schedule::kZeroBubble ? OpKind::kBackwardWeight
                                                           : OpKind::kBackward),
        placed_(p, m, v),
        last_gradient_step_(as_size(p) * as_size(v), 0) {
    g_.steps.push_back({0, 0, 0, 0});
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
        {waits_for, g_.last_op[stage], s, (s * v_ + op.chunk) * kRow + cost_kind(op.kind)});
    placed_.place(s, op, index);
    if (op.kind == OpKind::kForward && g_.first_forward[stage] == 0)
      g_.first_forward[stage] = index;
    if (op.kind == makes_gradients_)
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
      releasing.cost = -releasing.cost - 1;
      g_.first_release = std::min(g_.first_release, static_cast<size_t>(step));
    }
    return std::move(g_);
  }

 private:
  int v_;
  OpKind makes_gradients_;
  PlacedSteps placed_;
  std::vector<int32_t> last_gradient_step_;  // per (stage, chunk)
  ReplayGraph g_;
};

// Orders the ops by playing the schedule: a stage takes its next op once the op it waits for
// (the previous virtual stage's forward, or the next one's backward) is placed. One op per stage
// per pass, so the order interleaves the stages and playing it the CPU overlaps their chains.
ReplayGraph build_graph(Schedule schedule, int p, int m, int v, bool recompute) {
  const auto ops = build_schedule(schedule, p, m, v, recompute);
  const auto longer_ops = build_schedule(schedule, p, m + p, v, recompute);
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

// The planner replays the same few hundred shapes thousands of times, so each thread keeps
// the graphs it has built.
// At most 1,024 graphs or 8M steps (~130 MB) are kept; past either, the cache starts again.
const ReplayGraph& graph_of(Schedule schedule, int p, int m, int v, bool recompute) {
  using Key = std::tuple<Schedule, int, int, int, bool>;
  thread_local std::map<Key, ReplayGraph> seen;
  thread_local size_t steps_kept = 0;
  constexpr size_t kMaxGraphs = 1024;
  constexpr size_t kMaxSteps = size_t{8} << 20;
  const Key key{schedule, p, m, v, recompute};
  thread_local uint64_t graphs_built = 0;
  auto it = seen.find(key);
  if (it == seen.end()) {
    ReplayGraph graph = build_graph(schedule, p, m, v, recompute);
    graph.id = ++graphs_built;
    if (seen.size() >= kMaxGraphs || steps_kept + graph.steps.size() > kMaxSteps) {
      seen.clear();
      steps_kept = 0;
    }
    steps_kept += graph.steps.size();
    it = seen.emplace(key, std::move(graph)).first;
  }
  return it->second;
}

// Fills `cost` with the per-call table the steps index: a row of kRow per (stage, chunk).
void fill_cost_table(const std::vector<std::vector<ChunkOpTimes>>& times,
                     std::vector<double>& cost) {
  cost.clear();
  for (const auto& stage : times) {
    for (const ChunkOpTimes& t : stage) {
      const auto op = [&](double compute_s, double comm_s) {
        cost.insert(cost.end(), {compute_s + comm_s, compute_s, comm_s});
      };
      op(t.forward_s, t.forward_comm_s);
      op(t.recompute_s, t.recompute_comm_s);
      op(t.backward_s, t.backward_comm_s);
      op(t.weight_s, 0.0);
      const DpBucketSplit& buckets = t.gradient_buckets;
      cost.insert(cost.end(), {static_cast<double>(buckets.count), buckets.full_share, t.bucket_s,
                               buckets.last_share(), t.last_bucket_s});
    }
  }
}

// Returns whether cost tables a and b have the same bits in every op total (what the steps
// before the first release read).
bool same_totals(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t row = 0; row < a.size(); row += kRow) {
    for (size_t kind = 0; kind < kBucketCount; kind += 3) {
      if (std::bit_cast<uint64_t>(a[row + kind]) != std::bit_cast<uint64_t>(b[row + kind]))
        return false;
    }
  }
  return true;
}

// The end times of a graph's steps before its first release depend on the op totals only. The
// screen plays the same graph with the same totals for layouts that differ only in their
// gradient buckets (ZeRO 0, 1 and 2): in the default plan, half of the steps before a first
// release are found here. Each thread keeps the ends of its last few plays of graphs up to
// 128k steps (1 MB each); longer graphs are played in full.
class PrefixMemo {
 public:
  // Returns the end times to play `g` with `cost` into, and whether their steps before the
  // first release already hold that graph's ends for those totals.
  std::pair<std::vector<double>&, bool> ends_for(const ReplayGraph& g,
                                                 const std::vector<double>& cost) {
    if (g.steps.size() > kMaxSlotSteps)
      return {long_graph_end_, false};
    ++clock_;
    Slot* oldest = &slots_.front();
    for (Slot& slot : slots_) {
      if (slot.graph_id == g.id && same_totals(slot.cost, cost)) {
        slot.last_used = clock_;
        return {slot.end, true};
      }
      if (slot.last_used < oldest->last_used)
        oldest = &slot;
    }
    oldest->graph_id = g.id;
    oldest->cost = cost;
    oldest->last_used = clock_;
    return {oldest->end, false};
  }

 private:
  struct Slot {
    uint64_t graph_id = 0;  // 0: empty
    std::vector<double> cost;
    std::vector<double> end;
    uint64_t last_used = 0;
  };
  // Enough for the plays between two layouts that differ in the ZeRO stage only (sequence
  // parallelism and precision vary between them, each playing two or three graphs).
  static constexpr size_t kSlots = 8;
  static constexpr size_t kMaxSlotSteps = size_t{1} << 17;
  std::array<Slot, kSlots> slots_;
  std::vector<double> long_graph_end_;
  uint64_t clock_ = 0;
};

// The end times a play left, of which the first `pure_steps` (those before its first release)
// depend on the op totals only.
struct PlayedEnds {
  const std::vector<double>* end = nullptr;
  size_t pure_steps = 0;
};

// Plays `g` with the op times of `cost` into `out` (whose vectors keep their storage) and
// returns its end times (valid until the next play). `longer`, when set, is what the play of
// the same shape with P more micro-batches and the same costs left: the steps the two graphs
// share are copied from it, not played.
PlayedEnds play(const ReplayGraph& g, const std::vector<double>& cost, size_t p, double rate,
                PipelineTimeline& out, const PlayedEnds* longer = nullptr) {
  // Scratch kept per thread: the planner's screen plays millions of small graphs.
  thread_local PrefixMemo memo;
  thread_local std::vector<double> unslowed;   // from the first release on: end, unslowed
  thread_local std::vector<double> link_free;  // per stage: when its last bucket is done
  // Every element of `end` is written before it is read.
  // (Named, not a structured binding: the lambdas below capture `end`.)
  const auto ends = memo.ends_for(g, cost);
  std::vector<double>& end = ends.first;
  const bool prefix_known = ends.second;
  // Never shrunk, so that playing a longer graph after a shorter one zeroes nothing.
  if (end.size() < g.steps.size())
    end.resize(g.steps.size());
  end[0] = 0.0;
  // Until the first bucket goes out nothing slows compute: the branch-free common case.
  const size_t first_release = g.first_release;
  size_t i = prefix_known ? first_release : 1;
  if (!prefix_known && longer != nullptr) {
    const size_t shared = std::min({g.steps_shared_with_longer, longer->pure_steps, first_release});
    if (longer->end != &end)  // else (graphs too long to keep) they are already in place
      std::copy_n(longer->end->begin(), shared, end.begin());
    i = std::max(i, shared);
  }
  for (; i < first_release; ++i) {
    const Step& step = g.steps[i];
    end[i] = std::max(end[static_cast<size_t>(step.previous)],
                      end[static_cast<size_t>(step.waits_for)]) +
             cost[step.cost_index()];
  }
  link_free.assign(p, 0.0);
  if (unslowed.size() < g.steps.size())
    unslowed.resize(g.steps.size());
  const auto unslowed_end = [&](int32_t step) {
    const auto j = static_cast<size_t>(step);
    return j < first_release ? end[j] : unslowed[j];
  };
  for (; i < g.steps.size(); ++i) {
    const Step& step = g.steps[i];
    const auto s = static_cast<size_t>(step.stage);
    const size_t index = step.cost_index();
    const double compute_s = cost[index + kCompute];
    const double comm_s = cost[index + kComm];
    unslowed[i] = std::max(unslowed_end(step.previous), unslowed_end(step.waits_for)) + cost[index];
    double t =
        std::max(end[static_cast<size_t>(step.previous)], end[static_cast<size_t>(step.waits_for)]);
    if (!step.releases_buckets()) {
      t += slowed_compute_s(t, compute_s, link_free[s], rate) + comm_s;
    } else {
      // Each slice of the op, its bucket's share, hands that bucket to the stage's queue (as
      // the event engine's compute_with_buckets does).
      const size_t row = index - index % kRow;
      const int buckets = std::max(1, static_cast<int>(cost[row + kBucketCount]));
      for (int k = 0; k < buckets; ++k) {
        const size_t bucket = row + (k + 1 == buckets ? kLastBucket : kFullBucket);
        const double share = cost[bucket];
        const double bucket_s = cost[bucket + 1];
        const double slice_s = compute_s * share;
        t += slowed_compute_s(t, slice_s, link_free[s], rate) + comm_s * share;
        if (bucket_s > 0.0)
          link_free[s] = std::max(link_free[s], t) + bucket_s;
      }
    }
    end[i] = t;
  }
  out.first_forward_start_s.resize(p);
  out.last_op_end_s.resize(p);
  out.reduction_end_s.resize(p);
  out.unslowed_makespan_s = 0.0;
  for (size_t s = 0; s < p; ++s) {
    const auto first = static_cast<size_t>(g.first_forward[s]);
    out.first_forward_start_s[s] = end[first] - cost[g.steps[first].cost_index()];
    out.last_op_end_s[s] = end[static_cast<size_t>(g.last_op[s])];
    out.reduction_end_s[s] = std::max(out.last_op_end_s[s], link_free[s]);
    out.unslowed_makespan_s = std::max(out.unslowed_makespan_s, unslowed_end(g.last_op[s]));
  }
  out.makespan_s = *std::max_element(out.last_op_end_s.begin(), out.last_op_end_s.end());
  return {&end, first_release};
}

}  // namespace

namespace detail {

PipelineTimeline replay_every_micro_batch(Schedule schedule,
                                          const std::vector<std::vector<ChunkOpTimes>>& times,
                                          int micro_batches, bool recompute,
                                          double compute_rate_during_comm) {
  const int p = static_cast<int>(times.size());
  const int v = static_cast<int>(times.front().size());
  std::vector<double> cost;
  fill_cost_table(times, cost);
  PipelineTimeline out;
  play(graph_of(schedule, p, micro_batches, v, recompute), cost, times.size(),
       compute_rate_during_comm, out);
  return out;
}

}  // namespace detail

namespace {

// Whether everything that is extrapolated moved by `step_s` from run a to run b (P micro-batches
// apart): every stage's end and last reduction, and the makespan without bucket slowdown (which
// can still be in its transient when the slowed ends already pace), with every stage started at
// the same time.
bool moved_by(const PipelineTimeline& a, const PipelineTimeline& b, double step_s) {
  const double tolerance_s = 1e-12 * b.makespan_s;
  if (std::abs(b.unslowed_makespan_s - a.unslowed_makespan_s - step_s) > tolerance_s)
    return false;
  for (size_t s = 0; s < b.last_op_end_s.size(); ++s) {
    if (std::abs(b.last_op_end_s[s] - a.last_op_end_s[s] - step_s) > tolerance_s ||
        std::abs(b.reduction_end_s[s] - a.reduction_end_s[s] - step_s) > tolerance_s ||
        b.first_forward_start_s[s] != a.first_forward_start_s[s]) {
      return false;
    }
  }
  return true;
}

}  // namespace

PipelineTimeline replay_pipeline(Schedule schedule,
                                 const std::vector<std::vector<ChunkOpTimes>>& times,
                                 int micro_batches, bool recompute,
                                 double compute_rate_during_comm) {
  const int p = static_cast<int>(times.size());
  const int v = static_cast<int>(times.front().size());
  const int m = micro_batches;
  // Scratch kept per thread: the cost table shared by every run below, and the runs compared
  // before the last.
  thread_local std::vector<double> cost;
  thread_local PipelineTimeline a;
  thread_local PipelineTimeline b;
  fill_cost_table(times, cost);
  const auto run = [&](int count, PipelineTimeline& out, const PlayedEnds* longer = nullptr) {
    return play(graph_of(schedule, p, count, v, recompute), cost, times.size(),
                compute_rate_during_comm, out, longer);
  };
  // 1F1B and ZB-H1 run, in steady state, at the pace of their busiest stage (every cycle of
  // their dependency graph has a mean of at most one stage's per-micro-batch work), so once two
  // runs P micro-batches apart (the same count modulo P: the same schedule shape) move every
  // stage by exactly P times that work, each further P micro-batches add the same. The
  // interleaved order's pace can hang on other stages' chunks, so it needs three runs moving
  // every stage by one common step twice — evidence, not proof: with random, very unequal chunk
  // times on one stage a review found 3 in 5,000 cases where the pace still grew later (up to
  // 2.4% low), and 1 in 5,000 with random buckets at a 0.07 overlap rate; none with the chunk
  // times the lowering produces. Until then the window moves twice as far each time, and a run
  // too short to gain from it is replayed whole, as runs that do every forward first (GPipe,
  // and interleaved with M not a multiple of P; pace: slowest forward plus slowest backward)
  // always are.
  const bool interleaved = schedule == Schedule::kInterleaved;
  const bool forwards_first = schedule == Schedule::kGpipe || (interleaved && m % p != 0);
  double busiest_s = 0.0;
  for (const auto& stage : times) {
    double work_s = 0.0;
    for (const ChunkOpTimes& t : stage)
      work_s += t.total_s();
    busiest_s = std::max(busiest_s, work_s);
  }
  // (At least 2P when interleaved: with M == P its warm-up differs.)
  int first = interleaved ? 2 * p : p + m % p;
  PipelineTimeline c;
  for (;; first = 2 * first - m % p) {
    const int runs = interleaved ? 3 : 2;
    if (forwards_first || m <= runs * (first + p)) {
      run(m, c);
      return c;
    }
    // Longest first: each shorter run starts from the steps it shares with the one before.
    if (!interleaved) {
      const PlayedEnds longer = run(first + p, b);
      run(first, a, &longer);
      if (moved_by(a, b, p * busiest_s)) {
        c = b;
        std::swap(a, b);
        break;
      }
      continue;
    }
    const PlayedEnds longest = run(first + 2 * p, c);
    const PlayedEnds longer = run(first + p, b, &longest);
    run(first, a, &longer);
    const double step_s = c.makespan_s - b.makespan_s;
    const bool possible = step_s >= p * busiest_s * (1.0 - 1e-12);  // no stage goes faster
    if (possible && moved_by(b, c, step_s) && moved_by(a, b, step_s)) {
      first += p;
      break;
    }
  }
  // first == m (mod p) throughout the search above, so the periods left are a whole number.
  const int periods_left = (m - first - p) / p;
  const double extra_s = periods_left * (c.makespan_s - b.makespan_s);
  for (double& end_s : c.last_op_end_s)
    end_s += extra_s;
  for (double& end_s : c.reduction_end_s)
    end_s += extra_s;
  c.makespan_s += extra_s;
  c.unslowed_makespan_s += extra_s;
  return c;
}

}  // namespace capsim
