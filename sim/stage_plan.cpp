#include "sim/detail/stage_plan.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "models/collective_cost.hpp"

#include "estimate/pipeline_schedule.hpp"

namespace capsim::sim::detail {
namespace {

constexpr DpBucketSplit kNoBuckets{0, 1.0};

// Returns, per chunk, the index of the last op producing its weight gradients (-1: none): a
// whole backward, or the weight-gradient op of one a schedule splits.
std::vector<int> last_gradient_ops(const std::vector<estimate::PipelineOp>& ops, size_t chunks) {
  std::vector<int> last(chunks, -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    const estimate::OpKind k = ops[i].kind;
    if (k == estimate::OpKind::kBackwardWeight || k == estimate::OpKind::kBackward) {
      last[static_cast<size_t>(ops[i].chunk)] = static_cast<int>(i);
    }
  }
  return last;
}

// ZeRO 0-2: the DP gradient buckets of stage `s`, in release order. The last op producing each
// chunk's weight gradients releases that chunk's buckets.
void plan_gradient_buckets(const Sim& sim, size_t s, StagePlan& plan) {
  const Parallelism& par = sim.scenario->parallelism;
  const IterationCosts& costs = *sim.costs;
  const StageCosts& stage = costs.stages[s];
  const CollectiveKind kind =
      sim.zero12 ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce;
  const std::vector<int> last = last_gradient_ops(plan.ops, stage.chunks.size());
  std::vector<size_t> order(stage.chunks.size());
  for (size_t c = 0; c < order.size(); ++c)
    order[c] = c;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return last[a] < last[b]; });
  for (const size_t c : order) {
    const double bytes = chunk_gradient_bytes(costs, stage.chunks[c]);
    if (bytes <= 0.0 || last[c] < 0)
      continue;
    const DpBucketSplit split = dp_bucket_split(costs, s, c);
    plan.bucket_releases[static_cast<size_t>(last[c])] = split;
    for (int k = 0; k + 1 < split.count; ++k)
      plan.buckets.push_back({kind, bytes * split.full_share});
    plan.buckets.push_back({kind, bytes * split.last_share()});
  }
  // Without overlap_grad_reduce, Megatron reduces every bucket after the last backward.
  if (!par.overlap_grad_reduce) {
    plan.bucket_releases.assign(plan.ops.size(), kNoBuckets);
    plan.releases_after_compute = static_cast<int>(plan.buckets.size());
  }
}

// ZeRO 1/2: the all-gathers of stage `s`'s updated parameters, in forward order: the first
// chunk's parameters are needed first, and of each chunk its last gradient bucket (its first
// layers).
void plan_param_gathers(const IterationCosts& costs, size_t s, StagePlan& plan) {
  const StageCosts& stage = costs.stages[s];
  for (size_t c = 0; c < stage.chunks.size(); ++c) {
    const double bytes = chunk_param_gather_bytes(costs, stage.chunks[c]);
    if (bytes <= 0.0)
      continue;
    for (const double share : forward_order_shares(dp_bucket_split(costs, s, c))) {
      plan.param_gathers.push_back({CollectiveKind::kAllGather, bytes * share});
      plan.param_gather_forward_share.push_back(c == 0 ? share : 0.0);
    }
  }
}

// ZeRO-3: the per-layer all-gathers and reduce-scatters one op needs, appended in compute order.
void plan_zero3_op(const IterationCosts& costs, const HardwareProfile& profile,
                   const ChunkCosts& cc, estimate::OpKind kind, bool has_dp, StagePlan& plan) {
  const int layers = std::max(cc.num_layers, 1);
  const double param_bytes = cc.layer_parameter_count * costs.layer_param_bytes_per_element;
  const double grad_bytes = cc.layer_parameter_count * costs.grad_bytes_per_element;
  const bool gathers = kind == estimate::OpKind::kForward || kind == estimate::OpKind::kBackward ||
                       kind == estimate::OpKind::kBackwardInput;
  const bool scatters =
      kind == estimate::OpKind::kBackward || kind == estimate::OpKind::kBackwardWeight;
  // FSDP's root unit (embedding, final norm, output layer): gathered before the forward's
  // first layer and kept through the backward; its gradients reduce-scattered last.
  const bool root = has_dp && cc.has_root_unit();
  if (root && kind == estimate::OpKind::kForward) {
    plan.gathers.push_back(
        {CollectiveKind::kAllGather, cc.root_parameter_count() * costs.param_bytes_per_element});
  }
  // A stack that issues one collective per tensor pays each one's latency; a recompute that
  // gathers again doubles the backward's gathers.
  const double gather_latency_s =
      collective_time_s(profile, CollectiveKind::kAllGather, kLatencyProbeBytes, costs.dp_group);
  const double scatter_latency_s = collective_time_s(profile, CollectiveKind::kReduceScatter,
                                                     kLatencyProbeBytes, costs.dp_group);
  const int repeats = kind == estimate::OpKind::kForward ? 1 : costs.zero3_backward_gather_passes;
  const Collective gather{CollectiveKind::kAllGather, repeats * param_bytes,
                          (repeats * costs.zero3_gathers_per_layer - 1) * gather_latency_s};
  const Collective scatter{CollectiveKind::kReduceScatter, grad_bytes,
                           (costs.zero3_scatters_per_layer - 1) * scatter_latency_s};
  for (int l = 0; l < layers; ++l) {
    if (gathers && has_dp)
      plan.gathers.push_back(gather);
    if (scatters && has_dp)
      plan.scatters.push_back(scatter);
  }
  if (root && scatters) {
    plan.scatters.push_back(
        {CollectiveKind::kReduceScatter, cc.root_parameter_count() * costs.grad_bytes_per_element});
  }
}

}  // namespace

void plan_stages(Sim& sim) {
  const Parallelism& par = sim.scenario->parallelism;
  const IterationCosts& costs = *sim.costs;
  const bool recompute = par.recompute != Recompute::kNone;
  const auto schedules =
      estimate::build_schedule(par.schedule, sim.layout.pp, costs.micro_batches, sim.layout.chunks,
                               recompute, par.microbatch_group_size);
  const bool has_dp = costs.dp_group.ranks > 1;
  sim.plans.resize(schedules.size());
  for (size_t s = 0; s < schedules.size(); ++s) {
    StagePlan& plan = sim.plans[s];
    plan.ops = schedules[s];
    plan.bucket_releases.assign(plan.ops.size(), kNoBuckets);
    const StageCosts& stage = costs.stages[s];
    if (has_dp && !sim.zero3)
      plan_gradient_buckets(sim, s, plan);
    if (has_dp && sim.zero12)
      plan_param_gathers(costs, s, plan);
    if (sim.zero3) {
      for (const estimate::PipelineOp& op : plan.ops)
        plan_zero3_op(costs, *sim.profile, stage.chunks[static_cast<size_t>(op.chunk)], op.kind,
                      has_dp, plan);
    }
    const ChunkCosts& first = stage.chunks.front();
    plan.first_forward_s = first.forward_compute_s + first.forward_tp_comm_s +
                           first.forward_cp_comm_s + first.forward_ep_comm_s;
  }
}

GroupShape pp_shape(const Sim& sim, bool inter_node) {
  const ClusterSpec& cl = sim.scenario->cluster;
  GroupShape g;
  g.ranks = 2;
  if (inter_node) {
    g = sim.costs->pp_link.nodes > 1 ? sim.costs->pp_link : g;
    g.ranks = 2;
    g.ranks_per_node = 1;
    g.nodes = 2;
    if (g.nic_bandwidth_per_node_bytes_per_s <= 0.0) {
      g.nic_bandwidth_per_node_bytes_per_s =
          cl.node_nic_bandwidth_bytes_per_s() / std::max(cl.gpus_per_node, 1);
    }
  } else {
    g.ranks_per_node = 2;
    g.nodes = 1;
  }
  return g;
}

double pp_wire_bytes(const Sim& sim, double bytes, bool inter_node, double bandwidth) {
  if (bytes <= 0.0)
    return 0.0;
  const GroupShape g = pp_shape(sim, inter_node);
  const double total = collective_time_s(*sim.profile, CollectiveKind::kSendRecv, bytes, g);
  const double latency =
      collective_time_s(*sim.profile, CollectiveKind::kSendRecv, kLatencyProbeBytes, g);
  return std::max(0.0, total - latency) * bandwidth;
}

}  // namespace capsim::sim::detail
