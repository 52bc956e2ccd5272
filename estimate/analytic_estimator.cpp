#include "estimate/analytic_estimator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "models/as_double.hpp"
#include "models/collective_cost.hpp"
#include "models/gpu_catalog.hpp"
#include "models/memory_model.hpp"
#include "models/overlap.hpp"
#include "models/param_gather_overlap.hpp"

#include "estimate/iteration_model.hpp"
#include "estimate/leaf_uplinks.hpp"
#include "estimate/pipeline_replay.hpp"
#include "estimate/pipeline_schedule.hpp"
#include "estimate/zero3_streams.hpp"

namespace capsim::estimate {
namespace {

// A breakdown part that is a difference of two makespans, which add the same op times in
// different orders: below 1e-12 of the step it is rounding, not time (a step without buckets
// or bubbles must report none), and never negative.
double beyond_rounding(double difference_s, double step_s) {
  return difference_s > 1e-12 * step_s ? difference_s : 0.0;
}

// Per-micro-batch time of one stage, split into its parts (seconds).
struct StageStep {
  double compute_s = 0.0;
  double tp_s = 0.0;
  double cp_s = 0.0;
  double ep_s = 0.0;                   // exposed expert-parallel exchanges
  double zero3_s = 0.0;                // exposed ZeRO-3 gathers / reduce-scatters
  double zero3_once_s = 0.0;           // ZeRO-3 streams' start and end, once per iteration
  double first_chunk_forward_s = 0.0;  // the first virtual chunk's forward
  [[nodiscard]] double busy_s() const { return compute_s + tp_s + cp_s + ep_s; }  // its own work
  [[nodiscard]] double total_s() const { return busy_s() + zero3_s; }
};

// ZeRO-3 / FSDP: each layer's parameters are all-gathered before its forward and again before
// its backward, and its gradients reduce-scattered, every micro-batch (PyTorch FSDP without
// no_sync; Zhao et al. 2023, FSDP §3.3), on two streams beside compute: played layer by layer
// as the event engine runs them (estimate/zero3_streams.hpp). Per micro-batch each op pays its
// steady-state exposure; the first gather of the iteration and the last reduce-scatters are
// paid once.
struct Zero3Exposed {
  double forward_s = 0.0;
  double backward_s = 0.0;  // the whole backward, or B under ZB-H1
  double weight_s = 0.0;    // W under ZB-H1
  double once_s = 0.0;      // start and end of the streams, once per iteration
  [[nodiscard]] double per_micro_batch_s() const { return forward_s + backward_s + weight_s; }
};

Zero3Exposed zero3_exposed(const IterationCosts& costs, const GroupShape& dp,
                           const HardwareProfile& profile, const ChunkCosts& chunk, bool split,
                           double lead_s, int gpipe_micro_batches) {
  if (chunk.num_layers == 0 || dp.ranks <= 1)
    return {};
  // A collective's latency (a timed wait in the event engine) and the rest, on the wire.
  const auto split_time = [&](CollectiveKind kind, double bytes) {
    const double latency = collective_time_s(profile, kind, kLatencyProbeBytes, dp);
    return std::pair{latency, collective_time_s(profile, kind, bytes, dp) - latency};
  };
  Zero3Collectives c;
  std::tie(c.gather_latency_s, c.gather_wire_s) =
      split_time(CollectiveKind::kAllGather,
                 chunk.layer_parameter_count * costs.layer_param_bytes_per_element);
  std::tie(c.scatter_latency_s, c.scatter_wire_s) = split_time(
      CollectiveKind::kReduceScatter, chunk.layer_parameter_count * costs.grad_bytes_per_element);
  // A stack that issues one collective per tensor pays each one's latency.
  c.gather_latency_s *= costs.zero3_gathers_per_layer;
  c.scatter_latency_s *= costs.zero3_scatters_per_layer;
  const bool root = chunk.has_root_unit();
  if (root) {
    std::tie(c.root_gather_latency_s, c.root_gather_wire_s) = split_time(
        CollectiveKind::kAllGather, chunk.root_parameter_count() * costs.param_bytes_per_element);
    std::tie(c.root_scatter_latency_s, c.root_scatter_wire_s) =
        split_time(CollectiveKind::kReduceScatter,
                   chunk.root_parameter_count() * costs.grad_bytes_per_element);
  }
  // As the event engine runs them: recompute fused into the backward's layers; under ZB-H1 the
  // input-gradient op gathers and the weight-gradient op scatters; FSDP's root unit gathered
  // before the forward and reduce-scattered after the op that scatters.
  // Each pass's host time runs after each layer's communication, as the event engine runs it,
  // and counts as exposed.
  const double weight_s = split ? chunk.backward_weight_s : 0.0;
  const int regathers = costs.zero3_backward_gather_passes;
  const std::array<double, 3> host_s{zero3_host_s(costs, chunk, 1, false),
                                     zero3_host_s(costs, chunk, regathers, !split),
                                     split ? zero3_host_s(costs, chunk, 0, true) : 0.0};
  std::vector<Zero3Pass> passes{
      {chunk.forward_compute_s,
       chunk.forward_tp_comm_s + chunk.forward_cp_comm_s + chunk.forward_ep_comm_s + host_s[0],
       true, false, root, false, lead_s},
      {chunk.backward_input_s + chunk.backward_weight_s - weight_s + chunk.recompute_s,
       chunk.backward_tp_comm_s + chunk.backward_cp_comm_s + chunk.backward_ep_comm_s +
           chunk.recompute_tp_comm_s + host_s[1],
       true, !split, false, root && !split, 0.0, regathers}};
  if (split)
    passes.push_back({weight_s, host_s[2], false, true, false, root});
  if (gpipe_micro_batches > 1) {
    // GPipe runs every forward, then every backward: the first forward's gathers start cold and
    // the others are prefetched across forwards; the first backward's first gather is
    // prefetched during the last forward, the others start after the previous drain. Three of
    // each show both kinds; the micro-batches' mean is charged to each.
    const int m = gpipe_micro_batches;
    const int k = std::min(m, 3);
    const Zero3Pass forward = passes[0];
    const Zero3Pass backward = passes[1];
    std::vector<Zero3Pass> runs(static_cast<size_t>(k), forward);
    runs.insert(runs.end(), static_cast<size_t>(k), backward);
    const Zero3Play play =
        play_zero3_streams(runs, chunk.num_layers, c, costs.compute_rate_during_comm);
    const auto mean = [m](double first, double rest) { return (first + (m - 1) * rest) / m; };
    const auto ku = static_cast<size_t>(k);
    Zero3Exposed z;
    z.forward_s = mean(play.exposed_s[0], play.exposed_s[1]) + host_s[0];
    z.backward_s = mean(play.exposed_s[ku], play.exposed_s[ku + 1]) + host_s[1];
    z.once_s = play.once_s;
    return z;
  }
  const Zero3Play play =
      play_zero3_streams(passes, chunk.num_layers, c, costs.compute_rate_during_comm);
  Zero3Exposed z;
  z.forward_s = play.exposed_s[0] + host_s[0];
  z.backward_s = play.exposed_s[1] + host_s[1];
  z.weight_s = split ? play.exposed_s[2] + host_s[2] : 0.0;
  z.once_s = play.once_s;
  return z;
}

// Per stage and chunk; empty unless ZeRO-3.
using Zero3Table = std::vector<std::vector<Zero3Exposed>>;

void fill_zero3_table(const IterationCosts& costs, const GroupShape& dp,
                      const HardwareProfile& profile, const Parallelism& par, Zero3Table& table) {
  table.resize(costs.stages.size());
  for (auto& stage : table)
    stage.clear();
  if (par.zero_stage != 3)
    return;
  const bool split = par.schedule == Schedule::kZeroBubble;
  for (size_t s = 0; s < costs.stages.size(); ++s) {
    for (const ChunkCosts& ch : costs.stages[s].chunks) {
      // Chunk 0's forward starts with the framework's per-micro-batch overhead, during which
      // the event engine's gathers already run.
      const double lead_s = table[s].empty() ? profile.per_microbatch_overhead_s : 0.0;
      const int gpipe = par.schedule == Schedule::kGpipe ? costs.micro_batches : 0;
      table[s].push_back(zero3_exposed(costs, dp, profile, ch, split, lead_s, gpipe));
    }
  }
}

StageStep stage_step(const HardwareProfile& profile, const StageCosts& stage,
                     const std::vector<Zero3Exposed>& zero3) {
  StageStep step;
  for (const Zero3Exposed& z : zero3)
    step.zero3_s += z.per_micro_batch_s();
  // The stage's one gather queue prefetches across ops and chunks: only the iteration's first
  // gather (chunk 0's forward) waits, and its last backward (chunk 0's) drains the scatters.
  if (!zero3.empty())
    step.zero3_once_s = zero3.front().once_s;
  for (const ChunkCosts& ch : stage.chunks) {
    step.compute_s +=
        ch.forward_compute_s + ch.backward_input_s + ch.backward_weight_s + ch.recompute_s;
    step.tp_s += ch.forward_tp_comm_s + ch.backward_tp_comm_s + ch.recompute_tp_comm_s;
    step.cp_s += ch.forward_cp_comm_s + ch.backward_cp_comm_s;
    step.ep_s += ch.forward_ep_comm_s + ch.backward_ep_comm_s;
  }
  const ChunkCosts& first = stage.chunks.front();
  step.first_chunk_forward_s = first.forward_compute_s + first.forward_tp_comm_s +
                               first.forward_cp_comm_s + first.forward_ep_comm_s;
  step.compute_s += profile.per_microbatch_overhead_s;
  return step;
}

// DualPipeV: each stage's exposed expert-parallel time per micro-batch with its paired ops'
// exchanges as their pairs leave them (dualpipev_pairs).
void hide_paired_exchanges(const IterationCosts& costs, std::vector<StageStep>& steps) {
  const int p = static_cast<int>(costs.stages.size());
  const int m = costs.micro_batches;
  for (int s = 0; s < p; ++s) {
    const auto& chunks = costs.stages[static_cast<size_t>(s)].chunks;
    double ep_s = 0.0;
    for (int c = 0; c < static_cast<int>(chunks.size()); ++c) {
      const ChunkCosts& ch = chunks[static_cast<size_t>(c)];
      const DualPipeVPairs pairs = dualpipev_pairs(p, s, m, c);
      ep_s += (m - pairs.forwards) * ch.forward_ep_comm_s +
              pairs.forwards * ch.paired_forward_ep_comm_s +
              (m - pairs.backwards) * ch.backward_ep_comm_s +
              pairs.backwards * ch.paired_backward_ep_comm_s;
    }
    steps[static_cast<size_t>(s)].ep_s = ep_s / m;
  }
}

// The collective times of a chunk's last bucket and of a full one (the same when it has one
// bucket); `bytes` are the chunk's, split as dp_bucket_split says.
struct BucketTimes {
  double last_s = 0.0;
  double full_s = 0.0;
  [[nodiscard]] double total_s(const DpBucketSplit& split) const {
    return last_s + (split.count - 1) * full_s;
  }
};

// collective_time_s with one profile, remembering its last few answers: a pipeline's middle
// stages hold the same chunks, so one estimate asks for the same buckets' times stage after
// stage.
class CollectiveTimes {
 public:
  explicit CollectiveTimes(const HardwareProfile& profile) : profile_(&profile) {}
  [[nodiscard]] const HardwareProfile& profile() const { return *profile_; }

  double operator()(CollectiveKind kind, double bytes, const GroupShape& group) {
    for (const Answer& a : answers_) {
      if (a.kind == kind && a.bytes == bytes && a.group == group)
        return a.time_s;
    }
    const double time_s = collective_time_s(*profile_, kind, bytes, group);
    answers_[next_] = {kind, bytes, group, time_s};
    next_ = (next_ + 1) % answers_.size();
    return time_s;
  }

 private:
  struct Answer {
    CollectiveKind kind = CollectiveKind::kAllReduce;
    double bytes = -1.0;  // none yet
    GroupShape group;
    double time_s = 0.0;
  };
  const HardwareProfile* profile_;
  std::array<Answer, 4> answers_{};
  size_t next_ = 0;
};

BucketTimes bucket_times(CollectiveTimes& collective, CollectiveKind kind, double bytes,
                         const DpBucketSplit& split, const GroupShape& dp) {
  BucketTimes t;
  t.last_s = collective(kind, bytes * split.last_share(), dp);
  t.full_s = split.count > 1 ? collective(kind, bytes * split.full_share, dp) : t.last_s;
  return t;
}

// The time on the wire of one stage's gradient buckets (or parameter-gather buckets), chunk by
// chunk as dp_bucket_split splits them. `chunk_bytes` is chunk_gradient_bytes or
// chunk_param_gather_bytes.
double bucket_total_s(const IterationCosts& costs, CollectiveTimes& collective, CollectiveKind kind,
                      double (*chunk_bytes)(const IterationCosts&, const ChunkCosts&),
                      size_t stage_index, const GroupShape& dp) {
  double total_s = 0.0;
  const StageCosts& stage = costs.stages[stage_index];
  for (size_t c = 0; c < stage.chunks.size(); ++c) {
    const double bytes = chunk_bytes(costs, stage.chunks[c]);
    if (bytes <= 0.0)
      continue;
    const DpBucketSplit split = dp_bucket_split(costs, stage_index, c);
    total_s += bucket_times(collective, kind, bytes, split, dp).total_s(split);
  }
  return total_s;
}

// Each stage's PP send times, per boundary (inside or across a leaf), as the event engine
// plays them. Under 1F1B and GPipe Megatron waits on every send (p2p_communication.py), so a
// forward ends once its activations reached the next stage and a backward once its gradients
// reached the previous one: the sends are part of the ops. The interleaved schedule
// (overlap_p2p_comm) and ZB-H1 overlap them: the sender goes on, and the op that needs the
// data waits for it to arrive (ChunkOpTimes' arrival delays). Either way the replay places them
// exactly, fill, drain and steady state alike. Empty for a single stage.
struct PipelineSends {
  bool blocking = false;
  bool v_shape = false;            // DualPipeV (add_sends)
  std::vector<double> forward_s;   // per stage: its forward's send to the next (virtual) stage
  std::vector<double> backward_s;  // per stage: its backward's send to the previous one
};

void fill_pipeline_sends(const IterationCosts& costs, const HardwareProfile& profile,
                         const LeafLimitedGroups& groups, const Parallelism& par,
                         PipelineSends& sends) {
  sends.blocking = false;
  sends.v_shape = par.schedule == Schedule::kDualPipeV;
  sends.forward_s.clear();
  sends.backward_s.clear();
  const int p = par.pipeline;
  if (p <= 1)
    return;
  sends.blocking = par.schedule == Schedule::kOneFOneB || par.schedule == Schedule::kGpipe;
  const double bytes = costs.stages.front().chunks.front().activation_bytes;
  const double inside_s =
      collective_time_s(profile, CollectiveKind::kSendRecv, bytes, groups.pp_inside_leaf);
  const double between_s =
      collective_time_s(profile, CollectiveKind::kSendRecv, bytes, groups.pp_between_leaves);
  sends.forward_s.assign(static_cast<size_t>(p), 0.0);
  sends.backward_s.assign(static_cast<size_t>(p), 0.0);
  // Interleaved, the last stage feeds the first (the next chunk) and the first the last.
  const bool wraps = par.virtual_pipeline_stages > 1 && !sends.v_shape;
  for (int st = 0; st < p; ++st) {
    const auto s = static_cast<size_t>(st);
    if (st + 1 < p || wraps)
      sends.forward_s[s] = groups.forward_crosses(st) ? between_s : inside_s;
    if (st > 0 || wraps)
      sends.backward_s[s] = groups.backward_crosses(st) ? between_s : inside_s;
  }
}

// Puts the sends into stage s's op times: its own into its blocking ops' communication, or
// (overlapped) as the arrival delays of what its chunks receive: activations from the previous
// virtual stage (the last stage's chunk c - 1 for stage 0) and gradients from the next (stage
// 0's chunk c + 1 for the last stage); the first virtual stage receives no activations and the
// last no gradients (it makes them from the loss).
void add_sends(const PipelineSends& sends, size_t s, std::vector<ChunkOpTimes>& chunks) {
  if (sends.forward_s.empty())
    return;
  if (sends.blocking) {  // one chunk per stage
    chunks.front().forward_comm_s += sends.forward_s[s];
    chunks.front().backward_comm_s += sends.backward_s[s];
    return;
  }
  const size_t p = sends.forward_s.size();
  if (sends.v_shape) {
    // DualPipeV: chunk 0 takes activations from stage s - 1 and gradients from s + 1, chunk 1
    // the other way round, over the same links; the turn at the last stage stays on the GPU.
    // forward_s[b] crosses the link from stage b to b + 1, backward_s[b + 1] the same link back.
    ChunkOpTimes& down = chunks[0];
    ChunkOpTimes& up = chunks[1];
    if (s > 0) {
      down.activations_arrival_s = sends.forward_s[s - 1];
      up.gradients_arrival_s = sends.forward_s[s - 1];
    }
    if (s + 1 < p) {
      down.gradients_arrival_s = sends.backward_s[s + 1];
      up.activations_arrival_s = sends.backward_s[s + 1];
    }
    return;
  }
  const size_t previous = (s + p - 1) % p;
  const size_t next = (s + 1) % p;
  for (size_t c = 0; c < chunks.size(); ++c) {
    if (s > 0 || c > 0)
      chunks[c].activations_arrival_s = sends.forward_s[previous];
    if (s + 1 < p || c + 1 < chunks.size())
      chunks[c].gradients_arrival_s = sends.backward_s[next];
  }
}

// The per-micro-batch ops of every stage and chunk as the event engine runs them
// (sim/iteration_simulator.cpp run_compute): compute, which buckets on the wire slow; then
// what they do not slow: TP/CP collectives, exposed ZeRO-3 gathers and scatters, the
// micro-batch overhead (before chunk 0's forward there; its place does not change when the
// op ends, since no bucket is on the wire during a forward of chunk 0); and each chunk's
// DP gradient buckets (ZeRO 0-2: all-reduce, or reduce-scatter for the distributed optimizer;
// Megatron-Core's layout, dp_bucket_split). Fills `times`, whose vectors keep their storage: a
// candidate with P stages would otherwise allocate P + 1 of them.
void fill_op_times(const IterationCosts& costs, const GroupShape& dp, CollectiveTimes& collective,
                   const Parallelism& par, const Zero3Table& zero3, const PipelineSends& sends,
                   std::vector<std::vector<ChunkOpTimes>>& times) {
  const bool split = par.schedule == Schedule::kZeroBubble;
  const bool dual = par.schedule == Schedule::kDualPipeV;
  const bool recompute_op = par.recompute != Recompute::kNone;
  const bool reduces = dp.ranks > 1 && par.zero_stage != 3;
  const CollectiveKind kind =
      par.zero_stage == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  times.resize(costs.stages.size());
  for (size_t s = 0; s < costs.stages.size(); ++s) {
    const StageCosts& stage = costs.stages[s];
    std::vector<ChunkOpTimes>& chunks = times[s];
    chunks.clear();
    for (const ChunkCosts& ch : stage.chunks) {
      const size_t c = chunks.size();
      const Zero3Exposed z = zero3[s].empty() ? Zero3Exposed{} : zero3[s][c];
      ChunkOpTimes t;
      t.forward_s = ch.forward_compute_s;
      t.forward_comm_s =
          ch.forward_tp_comm_s + ch.forward_cp_comm_s + ch.forward_ep_comm_s + z.forward_s;
      // Without a recompute op (no recompute, or ZeRO-3 fusing it) it is part of the backward.
      (recompute_op ? t.recompute_s : t.backward_s) += ch.recompute_s;
      (recompute_op ? t.recompute_comm_s : t.backward_comm_s) += ch.recompute_tp_comm_s;
      // W's exposed reduce-scatters ride on its time (ZeRO-3 has no buckets to slow it).
      t.weight_s = split ? ch.backward_weight_s + z.weight_s : 0.0;
      t.backward_s += ch.backward_input_s + (split ? 0.0 : ch.backward_weight_s);
      t.backward_comm_s +=
          ch.backward_tp_comm_s + ch.backward_cp_comm_s + ch.backward_ep_comm_s + z.backward_s;
      if (dual) {  // whole backwards, some split into B and W, some paired with a forward
        t.weight_s = ch.backward_weight_s;
        t.input_backward_s = t.backward_s - ch.backward_weight_s;
        t.weight_in_backward = true;
        t.paired_forward_comm_s =
            t.forward_comm_s - ch.forward_ep_comm_s + ch.paired_forward_ep_comm_s;
        t.paired_backward_comm_s =
            t.backward_comm_s - ch.backward_ep_comm_s + ch.paired_backward_ep_comm_s;
      }
      if (reduces && par.overlap_grad_reduce) {
        t.gradient_buckets = dp_bucket_split(costs, s, c);
        const BucketTimes bucket =
            bucket_times(collective, kind, chunk_gradient_bytes(costs, ch), t.gradient_buckets, dp);
        t.bucket_s = bucket.full_s;
        t.last_bucket_s = bucket.last_s;
      }
      chunks.push_back(t);
    }
    chunks.front().forward_comm_s += collective.profile().per_microbatch_overhead_s;
    if (dual)
      chunks.front().paired_forward_comm_s += collective.profile().per_microbatch_overhead_s;
    add_sends(sends, s, chunks);
  }
}

// Distributed optimizer (ZeRO-1/2): stage s's updated parameter shards are all-gathered after
// the step, bucket after bucket in forward order. Megatron overlaps the gather with the next
// iteration's forward (overlap_param_gather): the first micro-batch's first-chunk forward runs
// each bucket's layers once it is gathered (param_gather_overlap.hpp); `slack_s` (how much later
// than stage 0 the stage starts its first forward) widens the window, as the event engine
// charges it.
double stage_param_gather_exposed_s(const IterationCosts& costs, const GroupShape& dp,
                                    CollectiveTimes& collective, const StageStep& step, size_t s,
                                    const Parallelism& par, double slack_s) {
  if (dp.ranks <= 1 || par.zero_stage == 0 || par.zero_stage == 3)
    return 0.0;
  // Without overlap_param_gather the step waits for the whole gather, in the stage's slack
  // first (it would start its next forward that much after stage 0 anyway).
  if (!par.overlap_param_gather) {
    const double total_s = bucket_total_s(costs, collective, CollectiveKind::kAllGather,
                                          chunk_param_gather_bytes, s, dp);
    return std::max(0.0, total_s - slack_s);
  }
  // Per chunk: its split and its buckets' times; then the buckets in forward order (each chunk's
  // last gradient bucket, its first layers, first), chunk 0's carrying the forward's layers.
  struct ChunkGather {
    DpBucketSplit split;
    BucketTimes times;
    double forward_layers = 0.0;  // 1 for chunk 0; later chunks' layers are not in this forward
  };
  thread_local std::vector<ChunkGather> chunks;
  chunks.clear();
  double all_gathered_s = 0.0;
  const StageCosts& stage = costs.stages[s];
  for (size_t c = 0; c < stage.chunks.size(); ++c) {
    const double bytes = chunk_param_gather_bytes(costs, stage.chunks[c]);
    if (bytes <= 0.0)
      continue;
    ChunkGather g;
    g.split = dp_bucket_split(costs, s, c);
    g.times = bucket_times(collective, CollectiveKind::kAllGather, bytes, g.split, dp);
    g.forward_layers = c == 0 ? 1.0 : 0.0;
    all_gathered_s += g.times.total_s(g.split);
    chunks.push_back(g);
  }
  ForwardBehindGathers forward(step.first_chunk_forward_s, slack_s, all_gathered_s,
                               costs.compute_rate_during_comm);
  double end_s = 0.0;
  for (const ChunkGather& g : chunks) {
    end_s += g.times.last_s;
    forward.bucket(end_s, g.forward_layers * g.split.last_share());
    forward.bucket_run(end_s + g.times.full_s, g.times.full_s, g.split.count - 1,
                       g.forward_layers * g.split.full_share);
    end_s += (g.split.count - 1) * g.times.full_s;
  }
  return forward.exposed_s();
}

// What follows the pipeline flush: each stage finishes reducing its gradients (replayed with its
// ops), steps its optimizer and gathers its parameters; the slowest stage paces the iteration. A
// stage that starts its first forward later than stage 0 gathers in that slack.
struct AfterFlush {
  double dp_s = 0.0;  // exposed gradient reduction and parameter gather
  double optimizer_s = 0.0;
};

AfterFlush after_flush(const IterationCosts& costs, const GroupShape& dp,
                       CollectiveTimes& collective, const std::vector<StageStep>& steps,
                       const Parallelism& par, const PipelineTimeline& timeline) {
  AfterFlush pacing;
  double pacing_tail_s = 0.0;
  for (size_t s = 0; s < costs.stages.size(); ++s) {
    // ZeRO-3's one-off exposure (the iteration's first gather, the last scatters) extends the
    // stage's own timeline.
    const double reduction_s =
        timeline.reduction_end_s[s] - timeline.makespan_s + steps[s].zero3_once_s;
    const double gather_s = stage_param_gather_exposed_s(costs, dp, collective, steps[s], s, par,
                                                         timeline.first_forward_start_s[s]);
    const double optimizer_s = costs.stages[s].optimizer_s;
    // The routed experts' reduction and gather over expert data parallelism follow the DP
    // reduction (StageCosts::expert_dp_s).
    const double reduced_s = reduction_s + costs.stages[s].expert_dp_s;
    // Past the pipeline's end (negative: inside the stage's slack): its reduction, its
    // optimizer step, then the exposed part of its gather (the window counted from the step's
    // end, as the event engine counts it). The stage that ends the pipeline has no slack, so
    // the pacing tail is never negative.
    const double tail_s = reduced_s + optimizer_s + gather_s;
    if (s == 0 || tail_s > pacing_tail_s) {
      pacing_tail_s = tail_s;
      pacing.optimizer_s = std::clamp(reduced_s + optimizer_s, 0.0, optimizer_s);
      pacing.dp_s = tail_s - pacing.optimizer_s;
    }
  }
  return pacing;
}

// Returns the stage with the most work per micro-batch (compute and exposed TP/CP, not its
// waits), as the event engine picks its GPU: the first such stage on ties.
size_t bottleneck_stage(const std::vector<StageStep>& steps) {
  size_t bottleneck = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].busy_s() > steps[bottleneck].busy_s())
      bottleneck = s;
  }
  return bottleneck;
}

// A lower bound on the iteration time from the stages' work alone, before the schedule is
// played. Stage s cannot start before every stage ahead of it has run its first forward (chunk
// 0's, micro-batch 0's), then runs m micro-batches of its own work, and, under every schedule
// but ZB-H1 (whose last ops may be W), ends on a backward that each stage ahead of it must follow
// with its own backward of that micro-batch and chunk. For equal stages under 1F1B that is the
// textbook makespan (p - 1)(F + B) + m(F + B) (Narayanan et al. 2021 §2.2). The played makespan
// is at least this path (the replay's steady-state extrapolation adds at least P times the
// busiest stage's work per P micro-batches), and the iteration time adds only non-negative
// parts to it, so the bound never exceeds the estimate (EstimateBoundTest).
double iteration_lower_bound_s(const IterationCosts& costs, const std::vector<StageStep>& steps,
                               const Parallelism& par) {
  const double m = costs.micro_batches;
  // ZB-H1 and DualPipeV may end on W's, which need nothing from the stages ahead.
  const bool drains = par.schedule != Schedule::kZeroBubble && par.schedule != Schedule::kDualPipeV;
  double fill_s = 0.0;   // the first forwards of the stages ahead
  double drain_s = 0.0;  // their shortest backwards
  double bound_s = 0.0;
  for (size_t s = 0; s < steps.size(); ++s) {
    bound_s = std::max(bound_s, fill_s + m * steps[s].total_s() + drain_s);
    fill_s += steps[s].first_chunk_forward_s;
    if (drains) {
      double shortest_s = std::numeric_limits<double>::infinity();
      for (const ChunkCosts& ch : costs.stages[s].chunks) {
        shortest_s = std::min(shortest_s, ch.backward_input_s + ch.backward_weight_s +
                                              ch.backward_tp_comm_s + ch.backward_cp_comm_s +
                                              ch.backward_ep_comm_s);
      }
      drain_s += shortest_s;
    }
  }
  // The sums above and the estimate's add the same times in other orders.
  return bound_s * (1.0 - 1e-9);
}

// Without overlap_grad_reduce each stage reduces all its buckets after its last op, so its
// reduction ends that long after the op instead of where the replay overlapped it.
void reduce_after_last_op(const IterationCosts& costs, CollectiveTimes& collective,
                          const GroupShape& dp, const Parallelism& par,
                          PipelineTimeline& timeline) {
  if (dp.ranks <= 1 || par.zero_stage == 3 || par.overlap_grad_reduce)
    return;
  const CollectiveKind kind =
      par.zero_stage == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  for (size_t s = 0; s < costs.stages.size(); ++s) {
    timeline.reduction_end_s[s] =
        timeline.last_op_end_s[s] +
        bucket_total_s(costs, collective, kind, chunk_gradient_bytes, s, dp);
  }
}

// estimate_iteration's time and breakdown (without its notes, throughput and memory), or nullopt
// when the lower bound shows at most `floor_tokens_per_s`.
std::optional<SimulationResult> estimate(const Scenario& scenario, const IterationCosts& costs,
                                         const HardwareProfile& profile, EstimateDetail detail,
                                         double floor_tokens_per_s) {
  const Parallelism& par = scenario.parallelism;
  const double m = costs.micro_batches;
  // Scratch kept per thread, as the replay's: the planner's screen estimates millions of
  // layouts.
  thread_local Zero3Table zero3;
  thread_local std::vector<StageStep> steps;
  thread_local PipelineSends sends;
  thread_local PipelineTimeline timeline;
  // Oversubscribed fabrics: DP rings and PP sends that leave their leaf share its uplinks.
  const LeafLimitedGroups groups = leaf_limited_groups(scenario, costs);
  fill_zero3_table(costs, groups.dp, profile, par, zero3);
  steps.clear();
  for (const auto& stage : costs.stages) {
    steps.push_back(stage_step(profile, stage, zero3[steps.size()]));
  }
  if (par.schedule == Schedule::kDualPipeV)
    hide_paired_exchanges(costs, steps);
  const size_t busiest = bottleneck_stage(steps);
  const StageStep& b = steps[busiest];
  const double busy_s = m * b.total_s();
  // Without a floor (every estimate but the screen's once its pool is full) nothing is bounded.
  const bool has_floor = floor_tokens_per_s > -std::numeric_limits<double>::infinity();
  if (has_floor && costs.tokens_per_iteration / iteration_lower_bound_s(costs, steps, par) <=
                       floor_tokens_per_s) {
    return std::nullopt;
  }

  // Fill and drain: the schedule's op order played with these op times (pipeline_replay.hpp).
  // For equal stages it gives the textbook bubbles — (p-1) steps for 1F1B and GPipe
  // (Narayanan et al. 2021 §2.2), divided by v when interleaved, (p-1)(F + B - W) for ZB-H1
  // (Qi et al. 2024 §3.1) — and it stays exact for uneven stages and few micro-batches, where
  // those closed forms do not.
  thread_local std::vector<std::vector<ChunkOpTimes>> times;
  fill_pipeline_sends(costs, profile, groups, par, sends);
  CollectiveTimes collective(profile);
  fill_op_times(costs, groups.dp, collective, par, zero3, sends, times);
  replay_pipeline(par.schedule, times, costs.micro_batches, par.recompute != Recompute::kNone,
                  costs.compute_rate_during_comm, timeline, par.microbatch_group_size);
  reduce_after_last_op(costs, collective, groups.dp, par, timeline);
  // Blocking sends are in the played ops: the busiest stage's own count as exposed PP, the
  // waits they cause it as bubble (the event engine counts a wait as bubble until the sender
  // put the message on the wire). Overlapped sends: what they add to the pipeline, the replay
  // with and without their arrival delays apart.
  double pp_s = 0.0;
  if (sends.blocking) {
    pp_s = m * (sends.forward_s[busiest] + sends.backward_s[busiest]);
  } else if (!sends.forward_s.empty() && detail == EstimateDetail::kBreakdown) {
    // Only the unslowed makespan is compared, so the buckets, which only slow compute, are
    // left off too: the whole replay then runs the branch-free loop.
    for (auto& stage : times) {
      for (ChunkOpTimes& t : stage) {
        t.activations_arrival_s = t.gradients_arrival_s = 0.0;
        t.bucket_s = t.last_bucket_s = 0.0;
      }
    }
    const PipelineTimeline instant =
        replay_pipeline(par.schedule, times, costs.micro_batches, par.recompute != Recompute::kNone,
                        costs.compute_rate_during_comm, par.microbatch_group_size);
    pp_s = std::max(0.0, timeline.unslowed_makespan_s - instant.unslowed_makespan_s);
  }
  const double bubble_s =
      beyond_rounding(timeline.unslowed_makespan_s - busy_s - pp_s, timeline.makespan_s);
  // Compute slowed by gradient buckets beside it counts as DP communication, as in the event
  // engine's breakdown.
  const double slowed_s =
      beyond_rounding(timeline.makespan_s - timeline.unslowed_makespan_s, timeline.makespan_s);

  const AfterFlush after = after_flush(costs, groups.dp, collective, steps, par, timeline);
  const double optimizer_s = after.optimizer_s;
  const double dp_s = after.dp_s + slowed_s + m * b.zero3_s;

  SimulationResult r;
  r.engine = "analytic";
  r.set_profile(profile);
  r.breakdown.compute_s = m * (b.compute_s - profile.per_microbatch_overhead_s);
  r.breakdown.other_s = m * profile.per_microbatch_overhead_s;
  r.breakdown.tp_comm_exposed_s = m * b.tp_s;
  r.breakdown.cp_comm_exposed_s = m * b.cp_s;
  r.breakdown.ep_comm_exposed_s = m * b.ep_s;
  r.breakdown.pp_comm_exposed_s = pp_s;
  r.breakdown.dp_comm_exposed_s = dp_s;
  r.breakdown.bubble_s = bubble_s;
  r.breakdown.optimizer_s = optimizer_s;
  r.breakdown.stage = static_cast<int>(busiest);
  double total_busy_s = 0.0;
  for (const StageStep& step : steps)
    total_busy_s += step.busy_s();
  if (total_busy_s > 0.0)
    r.breakdown.busiest_over_mean_busy =
        b.busy_s() * static_cast<double>(steps.size()) / total_busy_s;
  if (detail == EstimateDetail::kBreakdown) {
    for (const StageStep& step : steps)
      r.breakdown.stage_busy_s.push_back(m * step.busy_s());
  }
  r.iteration_time_s = busy_s - m * b.zero3_s + bubble_s + pp_s + dp_s + optimizer_s;
  return r;
}

// finish_result's figures but the memory.
void fill_throughput(const Scenario& scenario, const IterationCosts& costs,
                     SimulationResult& result) {
  const GpuSpec& gpu = scenario.cluster.gpu;
  const double gpus = scenario.parallelism.num_gpus();
  const double t = result.iteration_time_s;
  const double peak = gpu.peak_flop_per_s(scenario.parallelism.precision);
  result.scenario_name = scenario.name;
  result.num_gpus = scenario.parallelism.num_gpus();
  result.micro_batches = costs.micro_batches;
  result.tokens_per_s = costs.tokens_per_iteration / t;
  result.tokens_per_s_per_gpu = result.tokens_per_s / gpus;
  result.model_tflops_per_gpu = costs.model_flop_per_iteration / t / gpus / 1e12;
  result.mfu = costs.model_flop_per_iteration / (t * gpus * peak);
  result.hfu = costs.hardware_flop_per_iteration / (t * gpus * peak);
}

}  // namespace

SimulationResult estimate_iteration(const Scenario& scenario, const HardwareProfile& profile,
                                    EstimateDetail detail) {
  const IterationCosts costs = compute_iteration_costs(scenario, profile);
  return estimate_iteration(scenario, costs, profile, nullptr, detail);
}

SimulationResult estimate_iteration(const Scenario& scenario, const IterationCosts& costs,
                                    const HardwareProfile& profile, const MemoryEstimate* memory,
                                    EstimateDetail detail) {
  SimulationResult r =
      *estimate(scenario, costs, profile, detail, -std::numeric_limits<double>::infinity());
  r.notes.emplace_back(
      "analytic engine: uncontended collective times (on oversubscribed fabrics, each traffic "
      "class's share of the leaf uplinks); NIC and fabric sharing between PP, DP and CP traffic "
      "is not modelled (use --engine event)");
  finish_result(scenario, costs, r, memory);
  return r;
}

std::optional<ScreenEstimate> estimate_iteration_faster_than(const Scenario& scenario,
                                                             const IterationCosts& costs,
                                                             const HardwareProfile& profile,
                                                             double tokens_per_s) {
  std::optional<SimulationResult> r =
      estimate(scenario, costs, profile, EstimateDetail::kTimeOnly, tokens_per_s);
  if (!r)
    return std::nullopt;
  fill_throughput(scenario, costs, *r);
  return ScreenEstimate{r->iteration_time_s, r->tokens_per_s, r->mfu,
                        r->breakdown.busiest_over_mean_busy};
}

void finish_result(const Scenario& scenario, const IterationCosts& costs, SimulationResult& result,
                   const MemoryEstimate* memory) {
  fill_throughput(scenario, costs, result);
  const GpuSpec& gpu = scenario.cluster.gpu;
  result.memory = memory != nullptr ? *memory
                                    : estimate_memory(scenario.model, scenario.parallelism, gpu,
                                                      scenario.model.attention);
}

}  // namespace capsim::estimate
