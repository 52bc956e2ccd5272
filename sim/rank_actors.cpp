#include "sim/detail/rank_actors.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "models/collective_cost.hpp"
#include "models/param_gather_overlap.hpp"

namespace capsim::sim::detail {
namespace sg4 = simgrid::s4u;
namespace {

// Trace threads, one per stream that runs concurrently (slices of one thread must not overlap
// in Perfetto): the compute actor's kernels and its own communication (TP/CP, PP sends and
// waits), then each collective actor (iteration_simulator.cpp names them).
constexpr int kComputeStream = 0;
constexpr int kCommStream = 1;
constexpr int kDpStream = 2;
constexpr int kGatherStream = 3;
constexpr int kScatterStream = 4;

double now() {
  return sg4::Engine::get_clock();
}

void sleep(Sim& sim, double seconds) {
  if (seconds <= 0.0)
    return;
  ++sim.activities;
  sg4::this_actor::sleep_for(seconds);
}

// Whether a DP or ZeRO collective may hold part of the rank's GPU during its next compute: one
// runs, or compute has handed the DP stream a bucket it has not begun. Only compute hands out
// that work, so when neither holds, none can start before the compute ends, and the compute is a
// timed wait (cheaper than an exec, and it may join the waits beside it).
bool gpu_may_be_shared(const Sim& sim, const Rank& rank) {
  return sim.collective_share > 0.0 && (sim.zero3 || rank.collectives_running > 0 ||
                                        rank.buckets_released != rank.buckets_started);
}

void release_bucket(Rank& rank) {
  ++rank.buckets_released;
  rank.bucket_ready->release();
}

// Runs `seconds` of compute (at the full GPU) on the rank's host. Collectives running beside it
// hold part of the host (begin_collective), so it may take longer: the extra time is charged to
// exposed DP communication, which caused it.
void compute(Sim& sim, Rank& rank, double seconds) {
  if (seconds <= 0.0)
    return;
  if (!gpu_may_be_shared(sim, rank)) {
    sleep(sim, seconds);
    return;
  }
  ++sim.activities;
  const double t0 = now();
  sg4::this_actor::execute(seconds * Platform::kGpuWorkPerSecond);
  rank.acc.dp += std::max(0.0, now() - t0 - seconds);
}

// `before_s` of waiting, `seconds` of compute, then `after_s` of waiting (TP/CP communication):
// one timed wait when no collective can share the GPU meanwhile.
void compute_between(Sim& sim, Rank& rank, double before_s, double seconds, double after_s) {
  if (!gpu_may_be_shared(sim, rank)) {
    sleep(sim, std::max(before_s, 0.0) + std::max(seconds, 0.0) + std::max(after_s, 0.0));
    return;
  }
  sleep(sim, before_s);
  compute(sim, rank, seconds);
  sleep(sim, after_s);
}

// A DP or ZeRO collective starts beside compute: while any runs, an exec bounded to the SMs
// the collectives hold shares the GPU host with compute (NCCL CTAs do not share an SM). Its
// sharing weight is share / (1 - share) against compute's 1, so that it gets its whole share
// even above half the host (equal weights would cap it there, SimGrid's max-min fairness).
void begin_collective(Sim& sim, Rank& rank) {
  // Once the stage's last op has run no compute exec follows on the rank's host (the optimizer
  // step and the parameter gathers are timed waits and flows), so there is nothing to share.
  if (sim.collective_share <= 0.0 || rank.collectives_running++ > 0 || rank.compute_done)
    return;
  ++sim.activities;
  const double speed = Platform::kGpuWorkPerSecond;
  const double share = sim.collective_share;
  rank.sm_occupancy = sg4::this_actor::exec_init(1e12 * speed)
                          ->set_bound(share * speed)
                          ->set_priority(share / (1.0 - share))
                          ->start();
}

void end_collective(Sim& sim, Rank& rank) {
  if (sim.collective_share <= 0.0 || --rank.collectives_running > 0 || !rank.sm_occupancy)
    return;
  rank.sm_occupancy->cancel();
  rank.sm_occupancy = nullptr;
}

// Runs one DP-group collective for `rank`: the uncontended time comes from the profile's
// collective model; its latency part is a timed wait (plus the route latency) and its bandwidth
// part a flow over the rank's NIC share (inter-node groups) or its NVSwitch port (groups inside
// a node), sized so that it takes exactly that time when nothing else shares the links.
// Concurrent PP, bucket or ZeRO flows then slow it down.
void run_collective(Sim& sim, Rank& rank, const Collective& c, const char* label, int stream) {
  const double start = now();
  const GroupShape& group = sim.costs->dp_group;
  const double total_s =
      collective_time_s(*sim.profile, c.kind, c.bytes, group) + c.extra_latency_s;
  if (!sim.dp_inter_node && !sim.dp_intra_node) {
    sleep(sim, total_s);
  } else {
    const double latency_s =
        collective_time_s(*sim.profile, c.kind, kLatencyProbeBytes, group) + c.extra_latency_s;
    sleep(sim, latency_s - sim.dp_route_latency_s);
    // The route's latency is the PP send's (the links are shared); where it exceeds the
    // collective's own latency (A100 profiles: a 71 us send/recv fit against ~10 us for an
    // intra-node reduce-scatter), the flow carries that much less so the total stays total_s.
    const double link_bytes_per_s =
        sim.dp_inter_node ? sim.nic_share_bytes_per_s : sim.nvlink_bytes_per_s;
    const double wire =
        std::max(0.0, total_s - std::max(latency_s, sim.dp_route_latency_s)) * link_bytes_per_s;
    if (wire >= 1.0) {
      ++sim.activities;
      sim.count_flow(rank.gpu, rank.dp_peer, std::floor(wire));
      // The sink is the permanent receiver: the put returns when the transfer is done.
      static int payload = 0;
      rank.dp_out->put(&payload, static_cast<uint64_t>(wire));
    } else {
      sleep(sim, total_s - (now() - start));  // too small for a flow: all of it is latency
    }
  }
  sim.slice(rank, stream, label, "dp", start, now());
}

// Runs one collective of a DP or ZeRO stream, holding its share of the GPU while on the wire.
void run_beside_compute(Sim& sim, Rank& rank, const Collective& c, const char* label, int stream) {
  begin_collective(sim, rank);
  run_collective(sim, rank, c, label, stream);
  end_collective(sim, rank);
}

void receive(Sim& sim, Rank& rank, sg4::Mailbox* mailbox, int micro_batch) {
  const double t0 = now();
  const auto* msg = mailbox->get<Message>();
  const double t1 = now();
  ++sim.activities;
  if (msg->micro_batch != micro_batch) {
    throw std::logic_error("event engine: pipeline messages out of order on " +
                           mailbox->get_name());
  }
  // Waiting before the sender put the message on the wire is pipeline bubble; waiting for
  // the transfer itself is exposed PP communication.
  const double ts = msg->sent_at_s;
  rank.acc.bubble += std::max(0.0, std::min(ts, t1) - t0);
  rank.acc.pp += std::max(0.0, t1 - std::max(t0, ts));
  if (t1 > t0)
    sim.slice(rank, kCommStream, "wait PP", "pp", t0, t1);
}

void send(Sim& sim, Rank& rank, int to, sg4::Mailbox* mailbox, double wire, int micro_batch) {
  rank.outbox.push_back({micro_batch, now()});
  ++sim.activities;
  const auto bytes = static_cast<uint64_t>(std::max(wire, 0.0));
  sim.count_flow(rank.gpu, to, static_cast<double>(bytes));
  if (!sim.blocking_p2p) {
    mailbox->put_init(&rank.outbox.back(), bytes)->detach();
    return;
  }
  // The receiver is permanent, so the put returns when the transfer is done.
  const double t0 = now();
  mailbox->put(&rank.outbox.back(), bytes);
  rank.acc.pp += now() - t0;
  if (now() > t0)
    sim.slice(rank, kCommStream, "send PP", "pp", t0, now());
}

// Computes for `busy_s` with `comm_s` of TP/CP collectives in between, releasing each gradient
// bucket of `release` once its share of the op is done (the backward pass produces gradients
// layer by layer, Li et al. 2020 §3.2).
void compute_with_buckets(Sim& sim, Rank& rank, double busy_s, double comm_s,
                          const DpBucketSplit& release) {
  if (release.count <= 0) {
    compute_between(sim, rank, 0.0, busy_s, comm_s);
    return;
  }
  for (int k = 0; k < release.count; ++k) {
    const double share = k + 1 < release.count ? release.full_share : release.last_share();
    compute_between(sim, rank, 0.0, busy_s * share, comm_s * share);
    release_bucket(rank);
  }
}

// Waits for the next ZeRO-3 all-gather to finish; the wait is exposed DP time.
void wait_for_gather(Sim& sim, Rank& rank, const char* label) {
  const double t0 = now();
  rank.ag_done->acquire();
  rank.acc.dp += now() - t0;
  if (now() > t0)
    sim.slice(rank, kCommStream, label, "dp", t0, now());
}

// ZeRO-3: per layer, wait for its gathered parameters (prefetched one layer ahead), compute,
// and hand its gradients to the reduce-scatter stream. An op that scatters ends its micro-batch's
// backward: like FSDP (the post-backward callback waits for the reduce-scatter stream, and the
// next forward's unshard waits for compute) and DeepSpeed ZeRO-3 (the stream is synchronised
// every micro-step), it waits for its scatters to drain, and only then may the next gather start.
// `root`: the chunk holds FSDP's root unit (stage_plan.cpp), gathered before a `forward`'s
// first layer and reduce-scattered after the last layer of the op that scatters.
// `host_s`: the op's host time for its collectives (IterationCosts::zero3_host_s_per_collective),
// a share after each layer's communication, exposed.
void compute_zero3(Sim& sim, Rank& rank, double busy_s, double comm_s, double host_s, int layers,
                   bool gather, bool scatter, bool forward, bool root) {
  layers = std::max(layers, 1);
  const bool has_dp = sim.costs->dp_group.ranks > 1;
  const bool root_gather = root && forward && has_dp;
  const bool root_scatter = root && scatter && has_dp;
  if (root_gather) {
    wait_for_gather(sim, rank, "wait ZeRO-3 root gather");
    rank.ag_credit->release();
  }
  for (int l = 0; l < layers; ++l) {
    const bool ends_backward = scatter && l == layers - 1;
    if (gather) {
      wait_for_gather(sim, rank, "wait ZeRO-3 gather");
      if (!ends_backward)
        rank.ag_credit->release();
    }
    compute(sim, rank, busy_s / layers);
    sleep(sim, comm_s / layers);
    if (host_s > 0.0) {
      const double t0 = now();
      sleep(sim, host_s / layers);
      rank.acc.dp += host_s / layers;
      sim.slice(rank, kCommStream, "ZeRO-3 host copies", "dp", t0, now());
    }
    if (scatter) {
      rank.rs_ready->release();
      ++rank.scatters_in_flight;
    }
  }
  if (!scatter)
    return;
  if (root_scatter) {
    rank.rs_ready->release();
    ++rank.scatters_in_flight;
  }
  const double t0 = now();
  if (rank.rs_done) {
    for (; rank.scatters_in_flight > 0; --rank.scatters_in_flight)
      rank.rs_done->acquire();
  }
  rank.scatters_in_flight = 0;
  rank.acc.dp += now() - t0;
  if (now() > t0)
    sim.slice(rank, kCommStream, "drain ZeRO-3 reduce-scatters", "dp", t0, now());
  if (gather)
    rank.ag_credit->release();
}

// What one op of the compute stream leaves for the next.
struct OpCarry {
  // ZeRO-3 fuses recompute into the backward's layers.
  double pending_recompute_s = 0.0;
  double pending_recompute_comm_s = 0.0;
  bool grad_received = false;  // the recompute before the backward received its gradient
  // A paired forward's activations (chunk, micro-batch), sent after its pair's backward.
  int deferred_chunk = -1;
  int deferred_micro_batch = 0;
};

// Returns the trace label of `op`: `kind`, the micro-batch and, with virtual stages, the chunk.
std::string op_label(const Sim& sim, const char* kind, const estimate::PipelineOp& op) {
  const std::string suffix = sim.layout.chunks > 1 ? " c" + std::to_string(op.chunk) : "";
  return kind + std::to_string(op.micro_batch) + suffix;
}

// The trace slices of an op's exposed communication, which ends now: TP/CP first, then the
// expert-parallel exchanges (`ep_s` of it) as their own slice.
void comm_slices(Sim& sim, Rank& rank, const char* pass, int micro_batch, double comm_start,
                 double ep_s) {
  const double ep_start = now() - ep_s;
  const std::string suffix = pass + std::to_string(micro_batch);
  if (ep_s <= 0.0) {
    sim.slice(rank, kCommStream, "TP/CP " + suffix, "tp", comm_start, now());
    return;
  }
  if (ep_start > comm_start)
    sim.slice(rank, kCommStream, "TP/CP " + suffix, "tp", comm_start, ep_start);
  sim.slice(rank, kCommStream, "EP all-to-all " + suffix, "ep", ep_start, now());
}

void run_forward(Sim& sim, Rank& rank, const estimate::PipelineOp& op, OpCarry& carry) {
  const auto c = static_cast<size_t>(op.chunk);
  const ChunkCosts& cc = chunk_costs(sim, rank.s, op.chunk);
  if (rank.fwd_in[c] != nullptr)
    receive(sim, rank, rank.fwd_in[c], op.micro_batch);
  const double t0 = now();
  if (rank.first_forward_start_s < 0.0)
    rank.first_forward_start_s = t0;
  const double extra = op.chunk == 0 ? sim.profile->per_microbatch_overhead_s : 0.0;
  const double busy = cc.forward_compute_s;
  const double ep = op.paired ? cc.paired_forward_ep_comm_s : cc.forward_ep_comm_s;
  const double comm = cc.forward_tp_comm_s + cc.forward_cp_comm_s + ep;
  if (sim.zero3) {
    sleep(sim, extra);
    compute_zero3(sim, rank, busy, comm, zero3_host_s(*sim.costs, cc, 1, false), cc.num_layers,
                  true, false, true, cc.has_root_unit());
  } else {
    compute_between(sim, rank, extra, busy, comm);
  }
  rank.acc.compute += cc.forward_compute_s;
  rank.acc.other += extra;
  rank.acc.tp += cc.forward_tp_comm_s;
  rank.acc.cp += cc.forward_cp_comm_s;
  rank.acc.ep += ep;
  const double comm_start = now() - comm;
  sim.slice(rank, kComputeStream, op_label(sim, "F", op), "compute", t0, comm_start);
  comm_slices(sim, rank, "F", op.micro_batch, comm_start, ep);
  if (rank.fwd_to[c] < 0)
    return;
  if (op.paired) {
    carry.deferred_chunk = op.chunk;
    carry.deferred_micro_batch = op.micro_batch;
  } else {
    send(sim, rank, rank.fwd_to[c], rank.fwd_out[c], rank.fwd_wire[c], op.micro_batch);
  }
}

// Sends the activations of a paired forward, once its pair is done.
void send_deferred_forward(Sim& sim, Rank& rank, OpCarry& carry) {
  if (carry.deferred_chunk < 0)
    return;
  const auto c = static_cast<size_t>(carry.deferred_chunk);
  send(sim, rank, rank.fwd_to[c], rank.fwd_out[c], rank.fwd_wire[c], carry.deferred_micro_batch);
  carry.deferred_chunk = -1;
}

void run_recompute(Sim& sim, Rank& rank, const estimate::PipelineOp& op, OpCarry& carry) {
  const auto c = static_cast<size_t>(op.chunk);
  const ChunkCosts& cc = chunk_costs(sim, rank.s, op.chunk);
  if (rank.bwd_in[c] != nullptr) {
    receive(sim, rank, rank.bwd_in[c], op.micro_batch);
    carry.grad_received = true;
  }
  const double t0 = now();
  if (sim.zero3) {
    carry.pending_recompute_s = cc.recompute_s;
    carry.pending_recompute_comm_s = cc.recompute_tp_comm_s;
  } else {
    compute_between(sim, rank, 0.0, cc.recompute_s, cc.recompute_tp_comm_s);
    sim.slice(rank, kComputeStream, op_label(sim, "R", op), "compute", t0,
              now() - cc.recompute_tp_comm_s);
  }
  rank.acc.compute += cc.recompute_s;
  rank.acc.tp += cc.recompute_tp_comm_s;
}

// A full backward, or ZB-H1's input-gradient half; `releases` gradient buckets fill during it.
void run_backward(Sim& sim, Rank& rank, const estimate::PipelineOp& op,
                  const DpBucketSplit& releases, OpCarry& carry) {
  const auto c = static_cast<size_t>(op.chunk);
  const ChunkCosts& cc = chunk_costs(sim, rank.s, op.chunk);
  if (rank.bwd_in[c] != nullptr && !carry.grad_received) {
    receive(sim, rank, rank.bwd_in[c], op.micro_batch);
  }
  carry.grad_received = false;
  const bool full = op.kind == estimate::OpKind::kBackward;
  const double busy = cc.backward_input_s + (full ? cc.backward_weight_s : 0.0);
  const double ep = op.paired ? cc.paired_backward_ep_comm_s : cc.backward_ep_comm_s;
  const double comm = cc.backward_tp_comm_s + cc.backward_cp_comm_s + ep;
  const double t0 = now();
  if (sim.zero3) {
    compute_zero3(sim, rank, busy + carry.pending_recompute_s,
                  comm + carry.pending_recompute_comm_s,
                  zero3_host_s(*sim.costs, cc, sim.costs->zero3_backward_gather_passes, full),
                  cc.num_layers, true, full, false, cc.has_root_unit());
    carry.pending_recompute_s = 0.0;
    carry.pending_recompute_comm_s = 0.0;
  } else {
    compute_with_buckets(sim, rank, busy, comm, releases);
  }
  rank.acc.compute += busy;
  rank.acc.tp += cc.backward_tp_comm_s;
  rank.acc.cp += cc.backward_cp_comm_s;
  rank.acc.ep += ep;
  const double comm_start = now() - comm;
  sim.slice(rank, kComputeStream, op_label(sim, full ? "B" : "Bi", op), "compute", t0, comm_start);
  comm_slices(sim, rank, "B", op.micro_batch, comm_start, ep);
  if (op.paired)
    send_deferred_forward(sim, rank, carry);
  if (rank.bwd_to[c] >= 0)
    send(sim, rank, rank.bwd_to[c], rank.bwd_out[c], rank.bwd_wire[c], op.micro_batch);
}

// ZB-H1's weight-gradient half; `releases` gradient buckets fill during it.
void run_backward_weight(Sim& sim, Rank& rank, const estimate::PipelineOp& op,
                         const DpBucketSplit& releases) {
  const ChunkCosts& cc = chunk_costs(sim, rank.s, op.chunk);
  const double t0 = now();
  if (sim.zero3) {
    compute_zero3(sim, rank, cc.backward_weight_s, 0.0, zero3_host_s(*sim.costs, cc, 0, true),
                  cc.num_layers, false, true, false, cc.has_root_unit());
  } else {
    compute_with_buckets(sim, rank, cc.backward_weight_s, 0.0, releases);
  }
  rank.acc.compute += cc.backward_weight_s;
  sim.slice(rank, kComputeStream, op_label(sim, "W", op), "compute", t0, now());
}

// Waits for the rank's collective streams: the time they outlast compute is exposed DP time.
void wait_for_collectives(Rank& rank) {
  const double compute_end = now();
  for (const auto& actor : {rank.dp_actor, rank.ag_actor, rank.rs_actor}) {
    if (actor)
      actor->join();
  }
  rank.acc.dp += now() - compute_end;
}

void run_optimizer(Sim& sim, Rank& rank) {
  // The routed experts' gradients reduce (and their parameters gather) over expert data
  // parallelism before the step, a timed wait (StageCosts::expert_dp_s).
  const double expert_dp_s = sim.costs->stages[static_cast<size_t>(rank.s)].expert_dp_s;
  if (expert_dp_s > 0.0) {
    const double t0 = now();
    sleep(sim, expert_dp_s);
    rank.acc.dp += expert_dp_s;
    sim.slice(rank, kDpStream, "expert-DP gradients", "dp", t0, now());
  }
  const double opt_start = now();
  const double optimizer_s = sim.costs->stages[static_cast<size_t>(rank.s)].optimizer_s;
  sleep(sim, optimizer_s);
  rank.acc.optimizer += optimizer_s;
  rank.optimizer_end_s = now();
  sim.slice(rank, kComputeStream, "optimizer", "optimizer", opt_start, now());
}

// ZeRO-1/2: all-gather the updated parameter shards bucket by bucket, overlapped with the next
// iteration's first forward (Megatron overlap_param_gather), which runs each bucket's layers
// once it is gathered, slowed while gathers run (param_gather_overlap.hpp); what exceeds that
// forward is exposed. The stage starts that forward as late after stage 0 as it did in this
// iteration: idle slack in which the gather runs at full speed.
void gather_updated_parameters(Sim& sim, Rank& rank) {
  const StagePlan& plan = *rank.plan;
  const double opt_end = now();
  std::vector<double> gather_end_s;
  gather_end_s.reserve(plan.param_gathers.size());
  for (const Collective& gather : plan.param_gathers) {
    run_collective(sim, rank, gather, "param all-gather", kDpStream);
    gather_end_s.push_back(now() - opt_end);
  }
  const double slack_s = std::max(0.0, rank.first_forward_start_s - sim.iteration_start_s);
  // Without overlap_param_gather the step waits for the whole gather; the stage would start
  // its next forward `slack_s` after stage 0 anyway.
  double exposed_s = std::max(0.0, now() - opt_end - slack_s);
  if (sim.scenario->parallelism.overlap_param_gather) {
    ForwardBehindGathers forward(plan.first_forward_s, slack_s, now() - opt_end,
                                 sim.costs->compute_rate_during_comm);
    for (size_t k = 0; k < gather_end_s.size(); ++k)
      forward.bucket(gather_end_s[k], plan.param_gather_forward_share[k]);
    exposed_s = forward.exposed_s();
  }
  rank.stage_end_s = opt_end + exposed_s;
  rank.acc.dp += rank.stage_end_s - opt_end;
}

}  // namespace

void run_compute(Sim& sim, Rank& rank) {
  const StagePlan& plan = *rank.plan;
  OpCarry carry;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const estimate::PipelineOp& op = plan.ops[i];
    switch (op.kind) {
      case estimate::OpKind::kForward:
        run_forward(sim, rank, op, carry);
        break;
      case estimate::OpKind::kRecompute:
        run_recompute(sim, rank, op, carry);
        break;
      case estimate::OpKind::kBackward:
      case estimate::OpKind::kBackwardInput:
        run_backward(sim, rank, op, plan.bucket_releases[i], carry);
        break;
      case estimate::OpKind::kBackwardWeight:
        run_backward_weight(sim, rank, op, plan.bucket_releases[i]);
        break;
    }
  }
  rank.compute_done = true;
  for (int k = 0; k < plan.releases_after_compute; ++k)
    release_bucket(rank);
  rank.last_op_end_s = now();
  rank.acc_at_last_op = rank.acc;
  wait_for_collectives(rank);
  run_optimizer(sim, rank);
  gather_updated_parameters(sim, rank);
  set_pp_receiver(rank, nullptr);
}

void run_dp(Sim& sim, Rank& rank) {
  const auto& buckets = rank.plan->buckets;
  for (const auto& bucket : buckets) {
    rank.bucket_ready->acquire();
    ++rank.buckets_started;
    run_beside_compute(
        sim, rank, bucket,
        bucket.kind == CollectiveKind::kAllReduce ? "DP all-reduce" : "DP reduce-scatter",
        kDpStream);
  }
}

void run_gathers(Sim& sim, Rank& rank) {
  for (const Collective& c : rank.plan->gathers) {
    rank.ag_credit->acquire();
    run_beside_compute(sim, rank, c, "ZeRO-3 all-gather", kGatherStream);
    rank.ag_done->release();
  }
}

void run_scatters(Sim& sim, Rank& rank) {
  for (const Collective& c : rank.plan->scatters) {
    rank.rs_ready->acquire();
    run_beside_compute(sim, rank, c, "ZeRO-3 reduce-scatter", kScatterStream);
    rank.rs_done->release();
  }
}

void set_pp_receiver(Rank& rank, const ActorPtr& receiver) {
  for (auto* mb : rank.fwd_in) {
    if (mb != nullptr)
      mb->set_receiver(receiver);
  }
  for (auto* mb : rank.bwd_in) {
    if (mb != nullptr)
      mb->set_receiver(receiver);
  }
}

}  // namespace capsim::sim::detail
