#include "estimate/pipeline_replay.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "models/overlap.hpp"

#include "estimate/pipeline_replay_graph.hpp"
#include "estimate/pipeline_schedule.hpp"

namespace capsim::estimate {
namespace {

using replay::graph_of;
using replay::kArrival;
using replay::kBucketCount;
using replay::kFullBucket;
using replay::kLastBucket;
using replay::kOpWidth;
using replay::kRow;
using replay::replay_period;
using replay::ReplayGraph;
using replay::Step;

// What a cost table holds besides op times.
struct CostTableTraits {
  bool delays = false;   // some op's data arrives with a delay
  bool buckets = false;  // some chunk reduces gradient buckets on the wire
};

// Fills `cost` with the per-call table the steps index: a row of kRow per (stage, chunk), then
// the start's op of zeros.
CostTableTraits fill_cost_table(const std::vector<std::vector<ChunkOpTimes>>& times,
                                std::vector<double>& cost) {
  cost.clear();
  CostTableTraits traits;
  const auto op = [&](double compute_s, double comm_s, double arrival_s) {
    cost.insert(cost.end(), {compute_s + comm_s, compute_s, comm_s, arrival_s});
    traits.delays = traits.delays || arrival_s > 0.0;
  };
  for (const auto& stage : times) {
    for (const ChunkOpTimes& t : stage) {
      op(t.forward_s, t.forward_comm_s, t.activations_arrival_s);
      op(t.recompute_s, t.recompute_comm_s, t.gradients_arrival_s);
      op(t.backward_s, t.backward_comm_s, t.gradients_arrival_s);
      op(t.weight_s, 0.0, 0.0);
      op(t.input_backward_s, t.backward_comm_s, t.gradients_arrival_s);
      op(t.forward_s, t.paired_forward_comm_s, t.activations_arrival_s);
      op(t.backward_s, t.paired_backward_comm_s, t.gradients_arrival_s);
      const DpBucketSplit& buckets = t.gradient_buckets;
      cost.insert(cost.end(), {static_cast<double>(buckets.count), buckets.full_share, t.bucket_s,
                               buckets.last_share(), t.last_bucket_s});
      traits.buckets = traits.buckets || t.bucket_s > 0.0 || t.last_bucket_s > 0.0;
    }
  }
  op(0.0, 0.0, 0.0);
  return traits;
}

// Returns whether cost tables a and b have the same bits in every op total and arrival delay
// (what the steps before the first release read).
bool same_totals(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return false;
  const auto same = [&](size_t i) {
    return std::bit_cast<uint64_t>(a[i]) == std::bit_cast<uint64_t>(b[i]);
  };
  for (size_t row = 0; row + kRow <= a.size(); row += kRow) {
    for (size_t kind = 0; kind < kBucketCount; kind += kOpWidth) {
      if (!same(row + kind) || !same(row + kind + kArrival))
        return false;
    }
  }
  return true;
}

// The end times of a graph's steps before its first release (all of them, when no bucket goes
// on the wire) depend on the op totals only. The screen plays the same graph with the same
// totals for layouts that differ only in their gradient buckets (ZeRO 0, 1 and 2): in the
// default plan, half of the steps before a first release are found here. Each thread keeps the
// ends of its last few plays of graphs up to 128k steps (1 MB each); longer graphs are played
// in full.
class PrefixMemo {
 public:
  // Where to play `g` with `cost`: its end times, of which the first `pure_steps` already hold
  // that graph's ends for those totals. The play sets `pure_steps` to the steps it played pure.
  struct Ends {
    std::vector<double>& end;
    size_t& pure_steps;
  };

  Ends ends_for(const ReplayGraph& g, const std::vector<double>& cost) {
    if (g.steps.size() > kMaxSlotSteps) {
      long_graph_pure_steps_ = 0;
      return {long_graph_end_, long_graph_pure_steps_};
    }
    ++clock_;
    Slot* oldest = &slots_.front();
    for (Slot& slot : slots_) {
      if (slot.graph_id == g.id && same_totals(slot.cost, cost)) {
        slot.last_used = clock_;
        return {slot.end, slot.pure_steps};
      }
      if (slot.last_used < oldest->last_used)
        oldest = &slot;
    }
    oldest->graph_id = g.id;
    oldest->cost = cost;
    oldest->last_used = clock_;
    oldest->pure_steps = 0;
    return {oldest->end, oldest->pure_steps};
  }

 private:
  struct Slot {
    uint64_t graph_id = 0;  // 0: empty
    std::vector<double> cost;
    std::vector<double> end;
    size_t pure_steps = 0;
    uint64_t last_used = 0;
  };
  // Enough for the plays between two layouts that differ in the ZeRO stage only (sequence
  // parallelism and precision vary between them, each playing two or three graphs).
  static constexpr size_t kSlots = 8;
  static constexpr size_t kMaxSlotSteps = size_t{1} << 17;
  std::array<Slot, kSlots> slots_;
  std::vector<double> long_graph_end_;
  size_t long_graph_pure_steps_ = 0;
  uint64_t clock_ = 0;
};

// The end times a play left, of which the first `pure_steps` (those before its first release,
// or all) depend on the op totals only.
struct PlayedEnds {
  const std::vector<double>* end = nullptr;
  size_t pure_steps = 0;
};

// Plays steps [from, to) of `g`, all before its first release (nothing slows compute), into
// `end`. With kSends an op waits for the other stage's op's output to arrive (its end plus the
// op's arrival delay); without, for its end (the common case, kept free of the extra read).
template <bool kSends>
void play_pure_steps(const ReplayGraph& g, const double* cost, size_t from, size_t to,
                     double* end) {
  const Step* steps = g.steps.data();
  // Most of the screen's replay time is this loop, about 14 instructions a step: unrolled, the
  // loop's own count and branch are paid once per four (5% of the screen's instructions).
#pragma GCC unroll 4
  for (size_t i = from; i < to; ++i) {
    const Step& step = steps[i];
    const size_t index = step.cost_index();
    const double total_s = cost[index];
    const double previous_end_s = end[step.previous];
    const double input_end_s = end[step.waits_for];
    if constexpr (kSends) {
      // The delay joins the op's time off the chain of ends (the replay is latency-bound).
      end[i] = std::max(previous_end_s + total_s, input_end_s + (cost[index + kArrival] + total_s));
    } else {
      end[i] = std::max(previous_end_s, input_end_s) + total_s;
    }
  }
}

// Plays `g` with the op times of `cost` (whose traits are `table`) into `out` (whose vectors
// keep their storage) and returns its end times (valid until the next play). Without buckets
// on the wire nothing slows compute and every step is played branch-free. `longer`, when set,
// is what the play of the same shape with P more micro-batches and the same costs left: the
// steps the two graphs share are copied from it, not played. kSends as for play_pure_steps.
template <bool kSends>
PlayedEnds play(const ReplayGraph& g, const std::vector<double>& cost, CostTableTraits table,
                size_t p, double rate, PipelineTimeline& out, const PlayedEnds* longer = nullptr) {
  // Scratch kept per thread: the planner's screen plays millions of small graphs.
  thread_local PrefixMemo memo;
  thread_local std::vector<double> link_free;  // per stage: when its last bucket is done
  // Every element of `end` is written before it is read.
  // (Named, not a structured binding: the lambdas below capture `end`.)
  const auto ends = memo.ends_for(g, cost);
  std::vector<double>& end = ends.end;
  // Never shrunk, so that playing a longer graph after a shorter one zeroes nothing.
  if (end.size() < g.steps.size())
    end.resize(g.steps.size());
  end[0] = 0.0;
  // Until the first bucket goes out nothing slows compute: the branch-free common case.
  const size_t first_release = table.buckets ? g.first_release : g.steps.size();
  const bool prefix_known = ends.pure_steps >= first_release;
  size_t i = std::clamp<size_t>(ends.pure_steps, 1, first_release);
  ends.pure_steps = first_release;
  if (!prefix_known && longer != nullptr) {
    const size_t shared = std::min({g.steps_shared_with_longer, longer->pure_steps, first_release});
    if (longer->end != &end)  // else (graphs too long to keep) they are already in place
      std::copy_n(longer->end->begin(), shared, end.begin());
    i = std::max(i, shared);
  }
  // When the data an op (at `index` in the table) waits for arrives, from the end `end_s` of
  // the op that sends it.
  const auto arrival = [&](size_t index, double end_s) {
    if constexpr (kSends)
      return end_s + cost[index + kArrival];
    return end_s;
  };
  play_pure_steps<kSends>(g, cost.data(), i, first_release, end.data());
  i = first_release;
  link_free.assign(p, 0.0);
  for (; i < g.steps.size(); ++i) {
    const Step& step = g.steps[i];
    const size_t s = step.stage();
    const size_t index = step.cost_index();
    const double compute_s = cost[index + replay::kCompute];
    const double comm_s = cost[index + replay::kComm];
    double t = std::max(end[static_cast<size_t>(step.previous)],
                        arrival(index, end[static_cast<size_t>(step.waits_for)]));
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
  for (size_t s = 0; s < p; ++s) {
    const auto first = static_cast<size_t>(g.first_forward[s]);
    out.first_forward_start_s[s] = end[first] - cost[g.steps[first].cost_index()];
    out.last_op_end_s[s] = end[static_cast<size_t>(g.last_op[s])];
    out.reduction_end_s[s] = std::max(out.last_op_end_s[s], link_free[s]);
  }
  out.makespan_s = *std::max_element(out.last_op_end_s.begin(), out.last_op_end_s.end());
  // Had buckets not slowed compute: the steps from the first release on played pure, over the
  // slowed ones (the steps before it are the same either way, and all a shorter run copies).
  play_pure_steps<kSends>(g, cost.data(), first_release, g.steps.size(), end.data());
  out.unslowed_makespan_s = 0.0;
  for (size_t s = 0; s < p; ++s) {
    out.unslowed_makespan_s =
        std::max(out.unslowed_makespan_s, end[static_cast<size_t>(g.last_op[s])]);
  }
  return {&end, first_release};
}

// play<> for a table with or without arrival delays.
PlayedEnds play(CostTableTraits table, const ReplayGraph& g, const std::vector<double>& cost,
                size_t p, double rate, PipelineTimeline& out, const PlayedEnds* longer = nullptr) {
  return table.delays ? play<true>(g, cost, table, p, rate, out, longer)
                      : play<false>(g, cost, table, p, rate, out, longer);
}

}  // namespace

namespace detail {

PipelineTimeline replay_every_micro_batch(Schedule schedule,
                                          const std::vector<std::vector<ChunkOpTimes>>& times,
                                          int micro_batches, bool recompute,
                                          double compute_rate_during_comm, int micro_batch_group) {
  const int p = static_cast<int>(times.size());
  const int v = static_cast<int>(times.front().size());
  std::vector<double> cost;
  const CostTableTraits table = fill_cost_table(times, cost);
  PipelineTimeline out;
  play(table, graph_of(schedule, p, micro_batches, v, recompute, micro_batch_group), cost,
       times.size(), compute_rate_during_comm, out);
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
                                 int micro_batches, bool recompute, double compute_rate_during_comm,
                                 int micro_batch_group) {
  PipelineTimeline out;
  replay_pipeline(schedule, times, micro_batches, recompute, compute_rate_during_comm, out,
                  micro_batch_group);
  return out;
}

void replay_pipeline(Schedule schedule, const std::vector<std::vector<ChunkOpTimes>>& times,
                     int micro_batches, bool recompute, double compute_rate_during_comm,
                     PipelineTimeline& out, int micro_batch_group) {
  const int p = static_cast<int>(times.size());
  const int v = static_cast<int>(times.front().size());
  const int m = micro_batches;
  // Scratch kept per thread: the cost table shared by every run below, and the runs compared
  // before the last.
  thread_local std::vector<double> cost;
  thread_local PipelineTimeline a;
  thread_local PipelineTimeline b;
  const CostTableTraits table = fill_cost_table(times, cost);
  const auto run = [&](int count, PipelineTimeline& into, const PlayedEnds* longer = nullptr) {
    return play(table, graph_of(schedule, p, count, v, recompute, micro_batch_group), cost,
                times.size(), compute_rate_during_comm, into, longer);
  };
  // 1F1B and ZB-H1 run, in steady state, at the pace of their busiest stage (every cycle of
  // their dependency graph has a mean of at most one stage's per-micro-batch work), so once two
  // runs P micro-batches apart (the same count modulo P: the same schedule shape) move every
  // stage by exactly P times that work, each further P micro-batches add the same. The
  // interleaved order's pace can hang on other stages' chunks, and a cycle through long send
  // delays can be slower than any stage, so those need three runs moving every stage by one
  // common step twice — evidence, not proof: with random, very unequal chunk times on one
  // stage, 3 in 5,000 interleaved cases have a pace that still grows later (up to 2.4% low),
  // and 1 in 5,000 with random buckets at a 0.07 overlap rate; none with the chunk
  // times the lowering produces. Until then the window moves twice as far each time, and a run
  // too short to gain from it is replayed whole, as runs that do every forward first (GPipe,
  // and interleaved with groups that do not fit; pace: slowest forward plus slowest backward)
  // always are.
  const bool interleaved = schedule == Schedule::kInterleaved;
  // DualPipeV's pace, too, hangs on both chunks of every stage.
  const bool two_way = interleaved || schedule == Schedule::kDualPipeV;
  // Runs one period apart have the same shape: the interleaved schedule's group, else P.
  const int period = replay_period(schedule, p, micro_batch_group);
  const bool forwards_first =
      schedule == Schedule::kGpipe || (interleaved && !interleaved_groups_fit(p, m, period));
  double busiest_s = 0.0;
  double longest_delay_s = 0.0;
  double shortest_forward_s = times.front().front().forward_s;
  for (const auto& stage : times) {
    double work_s = 0.0;
    for (const ChunkOpTimes& t : stage) {
      work_s += t.total_s();
      longest_delay_s = std::max({longest_delay_s, t.activations_arrival_s, t.gradients_arrival_s});
      shortest_forward_s = std::min(shortest_forward_s, t.forward_s);
    }
    busiest_s = std::max(busiest_s, work_s);
  }
  // Send delays longer than half the shortest forward stretch the warm-up: then three runs from
  // 4P (else from 2P when interleaved, where M == P warms up differently, and two from P). On
  // 10,000 random cases of each schedule (PipelineReplayTest.LongHopsStayWithinAPercent is
  // one such family): with delays up to half the shortest forward none came out wrong; with
  // delays up to two forwards of their stage 2 ZB-H1 cases came out low, by up to 0.94% (23,
  // by up to 1.7%, with three runs from 2P; more with two).
  const bool long_delays = longest_delay_s > 0.5 * shortest_forward_s;
  const bool three_runs = two_way || long_delays;
  // From 2P: DualPipeV runs at least 2P micro-batches.
  const int warm_up = long_delays ? 4 * period : two_way ? 2 * period : period;
  int first = warm_up + m % period;
  PipelineTimeline& c = out;
  for (;; first = 2 * first - m % period) {
    const int runs = three_runs ? 3 : 2;
    if (forwards_first || m <= runs * (first + period)) {
      run(m, c);
      return;
    }
    // Longest first: each shorter run starts from the steps it shares with the one before.
    if (!three_runs) {
      const PlayedEnds longer = run(first + period, b);
      run(first, a, &longer);
      if (moved_by(a, b, period * busiest_s)) {
        c = b;
        std::swap(a, b);
        break;
      }
      continue;
    }
    const PlayedEnds longest = run(first + 2 * period, c);
    const PlayedEnds longer = run(first + period, b, &longest);
    run(first, a, &longer);
    const double step_s = c.makespan_s - b.makespan_s;
    const bool possible = step_s >= period * busiest_s * (1.0 - 1e-12);  // no stage goes faster
    if (possible && moved_by(b, c, step_s) && moved_by(a, b, step_s)) {
      first += period;
      break;
    }
  }
  // first == m (mod period) throughout the search above, so the periods left are a whole number.
  const int periods_left = (m - first - period) / period;
  const double extra_s = periods_left * (c.makespan_s - b.makespan_s);
  for (double& end_s : c.last_op_end_s)
    end_s += extra_s;
  for (double& end_s : c.reduction_end_s)
    end_s += extra_s;
  c.makespan_s += extra_s;
  c.unslowed_makespan_s += extra_s;
}

}  // namespace capsim::estimate
