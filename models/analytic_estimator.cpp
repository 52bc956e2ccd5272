#include "models/analytic_estimator.hpp"

#include <algorithm>
#include <cmath>

#include "models/as_double.hpp"
#include "models/collective_cost.hpp"
#include "models/gpu_catalog.hpp"
#include "models/iteration_model.hpp"
#include "models/leaf_uplinks.hpp"
#include "models/memory_model.hpp"
#include "models/overlap.hpp"
#include "models/pipeline_replay.hpp"

namespace capsim {
namespace {

// Per-micro-batch time of one stage, split into its parts (seconds).
struct StageStep {
  double compute_s = 0.0;
  double tp_s = 0.0;
  double cp_s = 0.0;
  double zero3_s = 0.0;                // exposed ZeRO-3 gathers / reduce-scatters
  double first_chunk_forward_s = 0.0;  // the first virtual chunk's forward
  [[nodiscard]] double total_s() const { return compute_s + tp_s + cp_s + zero3_s; }
};

// ZeRO-3 / FSDP: each layer's parameters are all-gathered before its forward and again before
// its backward, and its gradients reduce-scattered, every micro-batch (PyTorch FSDP without
// no_sync). Prefetch hides a gather behind the previous layer's compute (slowed meanwhile,
// overlap.hpp); the first gather of each pass and the last reduce-scatter stay exposed (Zhao
// et al. 2023, FSDP §3.3).
struct Zero3Exposed {
  double forward_s = 0.0;
  double backward_s = 0.0;
};

Zero3Exposed zero3_exposed(const IterationCosts& costs, const GroupShape& dp,
                           const HardwareProfile& profile, const ChunkCosts& chunk) {
  if (chunk.num_layers == 0)
    return {};
  const double layers = chunk.num_layers;
  const double layer_params = chunk.parameter_count / layers;
  const double gather_s = collective_time_s(profile, CollectiveKind::kAllGather,
                                            layer_params * costs.param_bytes_per_element, dp);
  const double scatter_s = collective_time_s(profile, CollectiveKind::kReduceScatter,
                                             layer_params * costs.grad_bytes_per_element, dp);
  const double fwd_layer_s = (chunk.forward_compute_s + chunk.forward_tp_comm_s) / layers;
  const double bwd_layer_s = (chunk.backward_input_s + chunk.backward_weight_s + chunk.recompute_s +
                              chunk.backward_tp_comm_s) /
                             layers;
  // In the backward the gather and scatter streams run side by side (FSDP's unshard and
  // post-backward streams): their latencies overlap, their bytes share the links.
  const double shared_latency_s =
      std::min(collective_time_s(profile, CollectiveKind::kAllGather, kLatencyProbeBytes, dp),
               collective_time_s(profile, CollectiveKind::kReduceScatter, kLatencyProbeBytes, dp));
  const double backward_comm_s = gather_s + scatter_s - shared_latency_s;
  const double rate = costs.compute_rate_during_comm;
  const double forward =
      gather_s + (layers - 1.0) * overlapped_exposed_s(gather_s, fwd_layer_s, rate);
  const double backward =
      backward_comm_s + (layers - 1.0) * overlapped_exposed_s(backward_comm_s, bwd_layer_s, rate);
  return {forward, backward};
}

StageStep stage_step(const IterationCosts& costs, const GroupShape& dp,
                     const HardwareProfile& profile, const StageCosts& stage, int zero_stage) {
  StageStep step;
  for (const ChunkCosts& ch : stage.chunks) {
    step.compute_s +=
        ch.forward_compute_s + ch.backward_input_s + ch.backward_weight_s + ch.recompute_s;
    step.tp_s += ch.forward_tp_comm_s + ch.backward_tp_comm_s + ch.recompute_tp_comm_s;
    step.cp_s += ch.forward_cp_comm_s + ch.backward_cp_comm_s;
    if (zero_stage == 3) {
      const Zero3Exposed z = zero3_exposed(costs, dp, profile, ch);
      step.zero3_s += z.forward_s + z.backward_s;
    }
  }
  const ChunkCosts& first = stage.chunks.front();
  step.first_chunk_forward_s =
      first.forward_compute_s + first.forward_tp_comm_s + first.forward_cp_comm_s;
  step.compute_s += profile.per_microbatch_overhead_s;
  return step;
}

// Gradient (or parameter) buckets of one stage, chunk by chunk as dp_bucket_count splits them:
// the total time on the wire and one bucket of the first chunk (the last gradient bucket
// produced, the first parameter bucket needed).
struct BucketTimes {
  double total_s = 0.0;
  double first_chunk_bucket_s = 0.0;
};

BucketTimes bucket_times(const IterationCosts& costs, const HardwareProfile& profile,
                         CollectiveKind kind, double bytes_per_element, size_t stage_index,
                         const GroupShape& dp) {
  BucketTimes times;
  const StageCosts& stage = costs.stages[stage_index];
  for (size_t c = 0; c < stage.chunks.size(); ++c) {
    const double bytes = stage.chunks[c].parameter_count * bytes_per_element;
    if (bytes <= 0.0)
      continue;
    const int n = dp_bucket_count(costs, stage_index, c);
    const double bucket_s = collective_time_s(profile, kind, bytes / n, dp);
    times.total_s += n * bucket_s;
    if (c == 0)
      times.first_chunk_bucket_s = bucket_s;
  }
  return times;
}

// The per-micro-batch ops of every stage and chunk as the event engine runs them
// (sim/iteration_simulator.cpp run_compute): compute, which buckets on the wire slow; then
// what they do not slow: TP/CP collectives, exposed ZeRO-3 gathers and scatters, the
// micro-batch overhead (before chunk 0's forward there; its place does not change when the
// op ends, since no bucket is on the wire during a forward of chunk 0); and each chunk's
// DP gradient buckets (ZeRO 0-2: all-reduce, or reduce-scatter for the distributed optimizer;
// Megatron-Core's layout, dp_bucket_count).
std::vector<std::vector<ChunkOpTimes>> op_times(const IterationCosts& costs, const GroupShape& dp,
                                                const HardwareProfile& profile,
                                                const Parallelism& par) {
  const bool split = par.schedule == Schedule::kZeroBubble;
  const bool recompute_op = par.recompute != Recompute::kNone;
  const bool reduces = dp.ranks > 1 && par.zero_stage != 3;
  const CollectiveKind kind =
      par.zero_stage == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  std::vector<std::vector<ChunkOpTimes>> times;
  times.reserve(costs.stages.size());
  for (size_t s = 0; s < costs.stages.size(); ++s) {
    const StageCosts& stage = costs.stages[s];
    std::vector<ChunkOpTimes>& chunks = times.emplace_back();
    chunks.reserve(stage.chunks.size());
    for (const ChunkCosts& ch : stage.chunks) {
      const Zero3Exposed z =
          par.zero_stage == 3 ? zero3_exposed(costs, dp, profile, ch) : Zero3Exposed{};
      ChunkOpTimes t;
      t.forward_s = ch.forward_compute_s;
      t.forward_comm_s = ch.forward_tp_comm_s + ch.forward_cp_comm_s + z.forward_s;
      // Without a recompute op (no recompute, or ZeRO-3 fusing it) it is part of the backward.
      (recompute_op ? t.recompute_s : t.backward_s) += ch.recompute_s;
      (recompute_op ? t.recompute_comm_s : t.backward_comm_s) += ch.recompute_tp_comm_s;
      t.weight_s = split ? ch.backward_weight_s : 0.0;
      t.backward_s += ch.backward_input_s + ch.backward_weight_s - t.weight_s;
      t.backward_comm_s += ch.backward_tp_comm_s + ch.backward_cp_comm_s + z.backward_s;
      if (reduces) {
        t.gradient_buckets = dp_bucket_count(costs, s, chunks.size());
        t.bucket_s = collective_time_s(
            profile, kind, ch.parameter_count * costs.grad_bytes_per_element / t.gradient_buckets,
            dp);
      }
      chunks.push_back(t);
    }
    chunks.front().forward_comm_s += profile.per_microbatch_overhead_s;
  }
  return times;
}

// Distributed optimizer (ZeRO-1/2): stage s's updated parameter shards are all-gathered after
// the step. Megatron overlaps the gather with the next iteration's forward
// (overlap_param_gather), so only what exceeds the first micro-batch's first-chunk forward is
// exposed, and that forward waits for the first bucket; `slack_s` (how much later than stage 0
// the stage starts its first forward) widens the window, as the event engine charges it.
double param_gather_exposed_s(const IterationCosts& costs, const GroupShape& dp,
                              const HardwareProfile& profile, const StageStep& step, size_t s,
                              int zero_stage, double slack_s) {
  if (dp.ranks <= 1 || zero_stage == 0 || zero_stage == 3)
    return 0.0;
  const BucketTimes buckets = bucket_times(costs, profile, CollectiveKind::kAllGather,
                                           costs.param_bytes_per_element, s, dp);
  // Gathered at full speed in the idle slack, the rest beside the first forward.
  const double overlap_s =
      overlapped_exposed_s(std::max(0.0, buckets.total_s - slack_s), step.first_chunk_forward_s,
                           costs.compute_rate_during_comm);
  return std::max(buckets.first_chunk_bucket_s - slack_s, overlap_s);
}

// What follows the pipeline flush: each stage finishes reducing its gradients (replayed with its
// ops), steps its optimizer and gathers its parameters; the slowest stage paces the iteration. A
// stage that starts its first forward later than stage 0 gathers in that slack.
struct AfterFlush {
  double dp_s = 0.0;  // exposed gradient reduction and parameter gather
  double optimizer_s = 0.0;
};

AfterFlush after_flush(const IterationCosts& costs, const GroupShape& dp,
                       const HardwareProfile& profile, const std::vector<StageStep>& steps,
                       const Parallelism& par, const PipelineTimeline& timeline) {
  AfterFlush pacing;
  double pacing_tail_s = 0.0;
  for (size_t s = 0; s < costs.stages.size(); ++s) {
    const double reduction_s = timeline.reduction_end_s[s] - timeline.makespan_s;
    const double gather_s = param_gather_exposed_s(costs, dp, profile, steps[s], s, par.zero_stage,
                                                   timeline.first_forward_start_s[s]);
    const double optimizer_s = costs.stages[s].optimizer_s;
    // Past the pipeline's end (negative: inside the stage's slack): its reduction, its
    // optimizer step, then the exposed part of its gather (the window counted from the step's
    // end, as the event engine counts it). The stage that ends the pipeline has no slack, so
    // the pacing tail is never negative.
    const double tail_s = reduction_s + optimizer_s + gather_s;
    if (s == 0 || tail_s > pacing_tail_s) {
      pacing_tail_s = tail_s;
      pacing.optimizer_s = std::clamp(reduction_s + optimizer_s, 0.0, optimizer_s);
      pacing.dp_s = tail_s - pacing.optimizer_s;
    }
  }
  return pacing;
}

}  // namespace

SimulationResult estimate_iteration(const Scenario& scenario, const HardwareProfile& profile) {
  const IterationCosts costs = compute_iteration_costs(scenario, profile);
  SimulationResult result = estimate_iteration(scenario, costs, profile);
  return result;
}

SimulationResult estimate_iteration(const Scenario& scenario, const IterationCosts& costs,
                                    const HardwareProfile& profile, const MemoryEstimate* memory) {
  const Parallelism& par = scenario.parallelism;
  const double m = costs.micro_batches;
  const int p = par.pipeline;
  // Oversubscribed fabrics: DP rings and PP sends that leave their leaf share its uplinks.
  const LeafLimitedGroups groups = leaf_limited_groups(scenario, costs);
  std::vector<StageStep> steps;
  steps.reserve(costs.stages.size());
  for (const auto& stage : costs.stages) {
    steps.push_back(stage_step(costs, groups.dp, profile, stage, par.zero_stage));
  }
  size_t bottleneck = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].total_s() > steps[bottleneck].total_s())
      bottleneck = s;
  }
  const StageStep& b = steps[bottleneck];
  const double busy_s = m * b.total_s();

  // Fill and drain: the schedule's op order played with these op times (pipeline_replay.hpp).
  // For equal stages it gives the textbook bubbles — (p-1) steps for 1F1B and GPipe
  // (Narayanan et al. 2021 §2.2), divided by v when interleaved, (p-1)(F + B - W) for ZB-H1
  // (Qi et al. 2024 §3.1) — and it stays exact for uneven stages and few micro-batches, where
  // those closed forms do not.
  const PipelineTimeline timeline =
      replay_pipeline(par.schedule, op_times(costs, groups.dp, profile, par), costs.micro_batches,
                      par.recompute != Recompute::kNone, costs.compute_rate_during_comm);
  // Compute slowed by gradient buckets beside it counts as DP communication, as in the event
  // engine's breakdown.
  const double bubble_s = std::max(0.0, timeline.unslowed_makespan_s - busy_s);
  const double slowed_s = timeline.makespan_s - timeline.unslowed_makespan_s;

  // Point-to-point: every micro-batch sends activations forward and gradients back; Megatron's
  // 1F1B (and GPipe) block on them in steady state (p2p_communication.py waits), while the
  // interleaved schedule (overlap_p2p_comm) and ZB-H1 overlap them with compute.
  double pp_s = 0.0;
  if (p > 1) {
    const double bytes = costs.stages.front().chunks.front().activation_bytes;
    const auto hop_s = [&](const GroupShape& link) {
      return collective_time_s(profile, CollectiveKind::kSendRecv, bytes, link);
    };
    const double inside_s = hop_s(groups.pp_inside_leaf);
    const double between_s = hop_s(groups.pp_between_leaves);
    const bool blocking = par.schedule == Schedule::kOneFOneB || par.schedule == Schedule::kGpipe;
    const double v = par.virtual_pipeline_stages;
    // Overlapped, a hop hides behind the next chunk's forward or backward (on average half of
    // the bottleneck stage's per-micro-batch work per chunk); only the excess is exposed.
    const auto exposed_s = [&](double hop) {
      return blocking ? hop : std::max(0.0, hop - b.total_s() / (2.0 * v));
    };
    // Steady state: each micro-batch (per chunk) crosses the boundaries above and below a
    // stage once each way; blocking, a stage pays about one hop per boundary and direction pair
    // (the uniform case: 2v hops). An end stage without interleaving sends and receives both
    // through its one boundary. Hops are equal unless an oversubscribed fabric makes some
    // boundaries leave their leaf; then the slowest stage with its boundaries paces the
    // pipeline, and a stage with slack absorbs its slower hops.
    const auto boundary_s = [&](int s) {  // between stage s and s + 1 (mod p)
      return exposed_s(groups.forward_crosses(s) ? between_s : inside_s);
    };
    const bool wraps = par.virtual_pipeline_stages > 1;
    double paced_extra_s = 0.0;
    for (int s = 0; s < p; ++s) {
      const int below = s > 0 ? s - 1 : (wraps ? p - 1 : s);
      const int above = s + 1 < p || wraps ? s : s - 1;
      const double extra_s = steps[static_cast<size_t>(s)].total_s() - b.total_s() +
                             v * (boundary_s(below) + boundary_s(above));
      paced_extra_s = s == 0 ? extra_s : std::max(paced_extra_s, extra_s);
    }
    // Fill and drain: the first micro-batch crosses every chunk boundary, p·v - 1 hops, each way
    // (forward from stage k mod p to k + 1, backward the reverse).
    double crossing = 0.0;
    for (int k = 0; k + 1 < p * par.virtual_pipeline_stages; ++k) {
      crossing += groups.forward_crosses(k % p) ? 1.0 : 0.0;
      crossing += groups.backward_crosses((k + 1) % p) ? 1.0 : 0.0;
    }
    pp_s = m * paced_extra_s + (2.0 * (p * v - 1.0) - crossing) * inside_s + crossing * between_s;
  }

  const AfterFlush after = after_flush(costs, groups.dp, profile, steps, par, timeline);
  const double optimizer_s = after.optimizer_s;
  const double dp_s = after.dp_s + slowed_s + m * b.zero3_s;

  SimulationResult r;
  r.engine = "analytic";
  r.profile_name = profile.name;
  r.breakdown.compute_s = m * (b.compute_s - profile.per_microbatch_overhead_s);
  r.breakdown.other_s = m * profile.per_microbatch_overhead_s;
  r.breakdown.tp_comm_exposed_s = m * b.tp_s;
  r.breakdown.cp_comm_exposed_s = m * b.cp_s;
  r.breakdown.pp_comm_exposed_s = pp_s;
  r.breakdown.dp_comm_exposed_s = dp_s;
  r.breakdown.bubble_s = bubble_s;
  r.breakdown.optimizer_s = optimizer_s;
  r.iteration_time_s = busy_s - m * b.zero3_s + bubble_s + pp_s + dp_s + optimizer_s;
  r.notes.push_back(
      "analytic engine: uncontended collective times (on oversubscribed fabrics, each traffic "
      "class's share of the leaf uplinks); NIC and fabric sharing between PP, DP and CP traffic "
      "is not modelled (use --engine event)");
  finish_result(scenario, costs, r, memory);
  return r;
}

void finish_result(const Scenario& scenario, const IterationCosts& costs, SimulationResult& result,
                   const MemoryEstimate* memory) {
  const GpuSpec& gpu = *find_gpu(scenario.cluster.gpu);
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
  result.memory = memory != nullptr ? *memory
                                    : estimate_memory(scenario.model, scenario.parallelism, gpu,
                                                      scenario.model.attention);
}

}  // namespace capsim
