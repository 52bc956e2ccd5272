#include "sim/iteration_simulator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "models/analytic_estimator.hpp"
#include "models/collective_cost.hpp"
#include "models/iteration_model.hpp"
#include "models/leaf_crossings.hpp"
#include "models/overlap.hpp"
#include "models/pipeline_schedule.hpp"
#include "sim/detail/platform.hpp"
#include "sim/detail/replay_state.hpp"
#include "sim/detail/stage_plan.hpp"

#include <xbt/log.h>

namespace capsim::sim {
namespace sg4 = simgrid::s4u;
namespace {

using detail::Accounts;
using detail::chunk_costs;
using detail::Collective;
using detail::Message;
using detail::plan_stages;
using detail::pp_shape;
using detail::pp_wire_bytes;
using detail::Rank;
using detail::Sim;
using detail::StagePlan;

std::atomic<bool> g_engine_used{false};

constexpr int kComputeStream = 0;
constexpr int kCommStream = 1;

double now() {
  return sg4::Engine::get_clock();
}

void sleep(Sim& sim, double seconds) {
  if (seconds <= 0.0)
    return;
  ++sim.activities;
  sg4::this_actor::sleep_for(seconds);
}

// Runs `seconds` of compute (at the full GPU) on the rank's host. Collectives running beside it
// hold part of the host (begin_collective), so it may take longer: the extra time is charged to
// exposed DP communication, which caused it.
void compute(Sim& sim, Rank& rank, double seconds) {
  if (seconds <= 0.0)
    return;
  if (sim.collective_share <= 0.0) {
    sleep(sim, seconds);
    return;
  }
  ++sim.activities;
  const double t0 = now();
  sg4::this_actor::execute(seconds * detail::Platform::kGpuWorkPerSecond);
  rank.acc.dp += std::max(0.0, now() - t0 - seconds);
}

// A DP or ZeRO collective starts beside compute: while any runs, an exec bounded to the SMs
// the collectives hold shares the GPU host with compute (NCCL CTAs do not share an SM). Its
// sharing weight is share / (1 - share) against compute's 1, so that it gets its whole share
// even above half the host (equal weights would cap it there, SimGrid's max-min fairness).
void begin_collective(Sim& sim, Rank& rank) {
  if (sim.collective_share <= 0.0 || rank.collectives_running++ > 0)
    return;
  ++sim.activities;
  const double speed = detail::Platform::kGpuWorkPerSecond;
  const double share = sim.collective_share;
  rank.sm_occupancy = sg4::this_actor::exec_init(1e12 * speed)
                          ->set_bound(share * speed)
                          ->set_priority(share / (1.0 - share))
                          ->start();
}

void end_collective(Sim& sim, Rank& rank) {
  if (sim.collective_share <= 0.0 || --rank.collectives_running > 0)
    return;
  rank.sm_occupancy->cancel();
  rank.sm_occupancy = nullptr;
}

// Runs one DP-group collective for `rank`: the uncontended time comes from the profile's
// collective model; its latency part is a timed wait (plus the route latency) and its bandwidth
// part a flow over the rank's NIC share (inter-node groups) or its NVSwitch port (groups inside
// a node), sized so that it takes exactly that time when nothing else shares the links.
// Concurrent PP, bucket or ZeRO flows then slow it down.
void run_collective(Sim& sim, Rank& rank, const Collective& c, const char* label) {
  const double start = now();
  const GroupShape& group = sim.costs->dp_group;
  const double total_s = collective_time_s(*sim.profile, c.kind, c.bytes, group);
  if (!sim.dp_inter_node && !sim.dp_intra_node) {
    sleep(sim, total_s);
  } else {
    const double latency_s = collective_time_s(*sim.profile, c.kind, kLatencyProbeBytes, group);
    sleep(sim, latency_s - sim.dp_route_latency_s);
    const double link_bytes_per_s =
        sim.dp_inter_node ? sim.nic_share_bytes_per_s : sim.nvlink_bytes_per_s;
    const double wire = std::max(0.0, total_s - latency_s) * link_bytes_per_s;
    if (wire >= 1.0) {
      ++sim.activities;
      sg4::Comm::sendto(sim.platform->host(rank.gpu), sim.platform->host(rank.dp_peer),
                        static_cast<uint64_t>(wire));
    }
  }
  sim.slice(rank, kCommStream, label, "dp", start, now());
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

void send(Sim& sim, Rank& rank, sg4::Mailbox* mailbox, double wire, int micro_batch) {
  rank.outbox.push_back({micro_batch, now()});
  ++sim.activities;
  const auto bytes = static_cast<uint64_t>(std::max(wire, 0.0));
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

// Computes for `busy_s` with `comm_s` of TP/CP collectives in between, releasing `releases`
// gradient buckets evenly along the way (the backward pass produces gradients layer by layer,
// Li et al. 2020 §3.2).
void compute_with_buckets(Sim& sim, Rank& rank, double busy_s, double comm_s, int releases) {
  if (releases <= 0) {
    compute(sim, rank, busy_s);
    sleep(sim, comm_s);
    return;
  }
  for (int k = 0; k < releases; ++k) {
    compute(sim, rank, busy_s / releases);
    sleep(sim, comm_s / releases);
    rank.bucket_ready->release();
  }
}

// ZeRO-3: per layer, wait for its gathered parameters (prefetched one layer ahead), compute,
// and hand its gradients to the reduce-scatter stream.
void compute_zero3(Sim& sim, Rank& rank, double busy_s, double comm_s, int layers, bool gather,
                   bool scatter) {
  layers = std::max(layers, 1);
  for (int l = 0; l < layers; ++l) {
    if (gather) {
      const double t0 = now();
      rank.ag_done->acquire();
      rank.acc.dp += now() - t0;
      if (now() > t0)
        sim.slice(rank, kCommStream, "wait ZeRO-3 gather", "dp", t0, now());
      rank.ag_credit->release();
    }
    compute(sim, rank, busy_s / layers);
    sleep(sim, comm_s / layers);
    if (scatter)
      rank.rs_ready->release();
  }
}

void run_compute(Sim& sim, Rank& rank) {
  const StagePlan& plan = *rank.plan;
  const double overhead_s = sim.profile->per_microbatch_overhead_s;
  // ZeRO-3 fuses recompute into the backward's layers.
  double pending_recompute_s = 0.0;
  double pending_recompute_comm_s = 0.0;
  bool grad_received = false;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const PipelineOp& op = plan.ops[i];
    const size_t c = static_cast<size_t>(op.chunk);
    const ChunkCosts& cc = chunk_costs(sim, rank.s, op.chunk);
    const int releases = plan.bucket_releases[i];
    const std::string mb = std::to_string(op.micro_batch);
    const std::string suffix = sim.layout.chunks > 1 ? " c" + std::to_string(op.chunk) : "";
    switch (op.kind) {
      case OpKind::kForward: {
        if (rank.fwd_in[c] != nullptr)
          receive(sim, rank, rank.fwd_in[c], op.micro_batch);
        const double t0 = now();
        if (rank.first_forward_start_s < 0.0)
          rank.first_forward_start_s = t0;
        const double extra = op.chunk == 0 ? overhead_s : 0.0;
        const double busy = cc.forward_compute_s;
        const double comm = cc.forward_tp_comm_s + cc.forward_cp_comm_s;
        sleep(sim, extra);
        if (sim.zero3) {
          compute_zero3(sim, rank, busy, comm, cc.num_layers, true, false);
        } else {
          compute(sim, rank, busy);
          sleep(sim, comm);
        }
        rank.acc.compute += cc.forward_compute_s;
        rank.acc.other += extra;
        rank.acc.tp += cc.forward_tp_comm_s;
        rank.acc.cp += cc.forward_cp_comm_s;
        const double comm_start = now() - comm;
        sim.slice(rank, kComputeStream, "F" + mb + suffix, "compute", t0, comm_start);
        sim.slice(rank, kCommStream, "TP/CP F" + mb, "tp", comm_start, now());
        if (rank.fwd_to[c] >= 0)
          send(sim, rank, rank.fwd_out[c], rank.fwd_wire[c], op.micro_batch);
        break;
      }
      case OpKind::kRecompute: {
        if (rank.bwd_in[c] != nullptr) {
          receive(sim, rank, rank.bwd_in[c], op.micro_batch);
          grad_received = true;
        }
        const double t0 = now();
        if (sim.zero3) {
          pending_recompute_s = cc.recompute_s;
          pending_recompute_comm_s = cc.recompute_tp_comm_s;
        } else {
          compute(sim, rank, cc.recompute_s);
          const double t1 = now();
          sleep(sim, cc.recompute_tp_comm_s);
          sim.slice(rank, kComputeStream, "R" + mb + suffix, "compute", t0, t1);
        }
        rank.acc.compute += cc.recompute_s;
        rank.acc.tp += cc.recompute_tp_comm_s;
        break;
      }
      case OpKind::kBackward:
      case OpKind::kBackwardInput: {
        if (rank.bwd_in[c] != nullptr && !grad_received) {
          receive(sim, rank, rank.bwd_in[c], op.micro_batch);
        }
        grad_received = false;
        const bool full = op.kind == OpKind::kBackward;
        const double busy = cc.backward_input_s + (full ? cc.backward_weight_s : 0.0);
        const double comm = cc.backward_tp_comm_s + cc.backward_cp_comm_s;
        const double t0 = now();
        if (sim.zero3) {
          compute_zero3(sim, rank, busy + pending_recompute_s, comm + pending_recompute_comm_s,
                        cc.num_layers, true, full);
          pending_recompute_s = 0.0;
          pending_recompute_comm_s = 0.0;
        } else {
          compute_with_buckets(sim, rank, busy, comm, releases);
        }
        rank.acc.compute += busy;
        rank.acc.tp += cc.backward_tp_comm_s;
        rank.acc.cp += cc.backward_cp_comm_s;
        const double comm_start = now() - comm;
        sim.slice(rank, kComputeStream, (full ? "B" : "Bi") + mb + suffix, "compute", t0,
                  comm_start);
        sim.slice(rank, kCommStream, "TP/CP B" + mb, "tp", comm_start, now());
        if (rank.bwd_to[c] >= 0)
          send(sim, rank, rank.bwd_out[c], rank.bwd_wire[c], op.micro_batch);
        break;
      }
      case OpKind::kBackwardWeight: {
        const double t0 = now();
        if (sim.zero3) {
          compute_zero3(sim, rank, cc.backward_weight_s, 0.0, cc.num_layers, false, true);
        } else {
          compute_with_buckets(sim, rank, cc.backward_weight_s, 0.0, releases);
        }
        rank.acc.compute += cc.backward_weight_s;
        sim.slice(rank, kComputeStream, "W" + mb + suffix, "compute", t0, now());
        break;
      }
    }
  }
  const double compute_end = now();
  for (const auto& actor : {rank.dp_actor, rank.ag_actor, rank.rs_actor}) {
    if (actor)
      actor->join();
  }
  rank.acc.dp += now() - compute_end;

  const double opt_start = now();
  const double optimizer_s = sim.costs->stages[static_cast<size_t>(rank.s)].optimizer_s;
  sleep(sim, optimizer_s);
  rank.acc.optimizer += optimizer_s;
  sim.slice(rank, kComputeStream, "optimizer", "optimizer", opt_start, now());

  // ZeRO-1/2: all-gather the updated parameter shards, overlapped with the next iteration's
  // first forward (Megatron overlap_param_gather), so only what exceeds it (slowed by the
  // gather, overlap.hpp) is exposed; but that forward waits for the first bucket, whose
  // parameters it uses first. The stage starts that forward as late after stage 0 as it did in
  // this iteration: idle slack in which the gather runs at full speed.
  const double opt_end = now();
  double first_bucket_end = opt_end;
  for (size_t i = 0; i < plan.param_gathers.size(); ++i) {
    run_collective(sim, rank, plan.param_gathers[i], "param all-gather");
    if (i == 0)
      first_bucket_end = now();
  }
  const double slack_s = std::max(0.0, rank.first_forward_start_s);
  rank.stage_end_s =
      opt_end +
      std::max(first_bucket_end - opt_end - slack_s,
               overlapped_exposed_s(std::max(0.0, now() - opt_end - slack_s), plan.first_forward_s,
                                    sim.costs->compute_rate_during_comm));
  rank.acc.dp += rank.stage_end_s - opt_end;
  for (auto* mb : rank.fwd_in) {
    if (mb != nullptr)
      mb->set_receiver(nullptr);
  }
  for (auto* mb : rank.bwd_in) {
    if (mb != nullptr)
      mb->set_receiver(nullptr);
  }
}

void run_dp(Sim& sim, Rank& rank) {
  const auto& buckets = rank.plan->buckets;
  for (size_t b = 0; b < buckets.size(); ++b) {
    rank.bucket_ready->acquire();
    begin_collective(sim, rank);
    run_collective(
        sim, rank, buckets[b],
        buckets[b].kind == CollectiveKind::kAllReduce ? "DP all-reduce" : "DP reduce-scatter");
    end_collective(sim, rank);
  }
}

void run_gathers(Sim& sim, Rank& rank) {
  for (const Collective& c : rank.plan->gathers) {
    rank.ag_credit->acquire();
    begin_collective(sim, rank);
    run_collective(sim, rank, c, "ZeRO-3 all-gather");
    end_collective(sim, rank);
    rank.ag_done->release();
  }
}

void run_scatters(Sim& sim, Rank& rank) {
  for (const Collective& c : rank.plan->scatters) {
    rank.rs_ready->acquire();
    begin_collective(sim, rank);
    run_collective(sim, rank, c, "ZeRO-3 reduce-scatter");
    end_collective(sim, rank);
  }
}

SimulationResult run(const Scenario& scenario, const IterationCosts& costs,
                     const HardwareProfile& profile, const SimOptions& options, SimStats* stats) {
  if (g_engine_used.exchange(true)) {
    throw std::logic_error(
        "simulate_iteration: SimGrid runs one simulation per process; run each simulation in "
        "its own process");
  }
  const auto wall0 = std::chrono::steady_clock::now();
  static int argc = 1;
  static char name[] = "capsim";
  static char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thres:critical");
  // Flow-exact CM02 (../shared/reference/simgrid.md §0, §4): no LV08 latency/bandwidth
  // factors, no cross-traffic, no TCP window bound. CM02 weights a flow's share by its route
  // latency plus weight-S x sum(1/bandwidth) (SimGrid 3.32 src/surf/network_cm02.cpp). Every
  // two routes that share a link here have the same latency (NIC routes and DP mirrors: two NIC
  // ends; NVLink routes and NVLink mirrors: two NVLink ends; uplinks add none), so weight-S 0
  // gives equal max-min shares. weight-S > 0 (simgrid.md's 1e12) would penalise flows through
  // the reduced run's narrower share links and break its equality with the full run.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e30");
  sg4::Engine::set_config("network/weight-S:0");
  bool deadlock = false;
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });

  Sim sim;
  sim.scenario = &scenario;
  sim.costs = &costs;
  sim.profile = &profile;
  sim.trace = options.trace;
  const Parallelism& par = scenario.parallelism;
  const ClusterSpec& cl = scenario.cluster;
  sim.layout.tp = par.tensor;
  sim.layout.dpc = par.data * par.context;
  sim.layout.pp = static_cast<int>(costs.stages.size());
  sim.layout.chunks = static_cast<int>(costs.stages.front().chunks.size());
  sim.layout.gpus_per_node = cl.gpus_per_node;
  sim.zero3 = par.zero_stage == 3;
  sim.blocking_p2p = par.schedule == Schedule::kOneFOneB || par.schedule == Schedule::kGpipe;
  sim.zero12 = par.zero_stage == 1 || par.zero_stage == 2;
  const int g = cl.gpus_per_node;
  sim.nic_share_bytes_per_s = cl.node_nic_bandwidth_bytes_per_s() / g;
  sim.collective_share = 1.0 - costs.compute_rate_during_comm;
  plan_stages(sim);

  // Platform: NIC links as the node's NICs dictate, latencies from the profile's send/recv
  // latency (split over the two ends of a route).
  detail::PlatformSpec ps;
  ps.gpus_per_node = g;
  ps.nvlink_bytes_per_s = cl.intra_node_bandwidth_bytes_per_s;
  sim.pp_intra_latency_s = collective_time_s(profile, CollectiveKind::kSendRecv, kLatencyProbeBytes,
                                             pp_shape(sim, false));
  ps.nvlink_latency_s = sim.pp_intra_latency_s / 2.0;
  if (cl.num_nodes > 1 && cl.node_nic_bandwidth_bytes_per_s() > 0.0) {
    const int nics = std::max(cl.nics_per_node, 1);
    ps.nic_links_per_node = std::min(nics, g);
    ps.nic_link_bytes_per_s = cl.node_nic_bandwidth_bytes_per_s() / ps.nic_links_per_node;
    sim.pp_inter_latency_s = collective_time_s(profile, CollectiveKind::kSendRecv,
                                               kLatencyProbeBytes, pp_shape(sim, true));
    ps.nic_latency_s = sim.pp_inter_latency_s / 2.0;
    const bool oversubscribed =
        cl.topology == Topology::kOversubscribed || cl.oversubscription > 1.0;
    if (oversubscribed) {
      ps.uplink_bytes_per_s_per_node =
          cl.node_nic_bandwidth_bytes_per_s() / std::max(cl.oversubscription, 1.0);
      ps.nodes_per_leaf = cl.nodes_per_leaf;
    }
  }
  ps.reduced = options.exploit_symmetry;
  sim.dp_inter_node =
      costs.dp_group.ranks > 1 && costs.dp_group.nodes > 1 && ps.nic_links_per_node > 0;
  // Which flows leave their leaf switch (only oversubscribed fabrics have leaf uplinks).
  std::optional<LeafCrossings> leaves;
  if (ps.uplink_bytes_per_s_per_node > 0.0) {
    leaves.emplace(sim.layout, ps.nodes_per_leaf, sim.dp_inter_node);
    ps.pp_crossing_gpus_per_leaf = leaves->max_pp_crossing_gpus_per_leaf();
    ps.dp_crossing_gpus_per_leaf = leaves->max_dp_crossing_gpus_per_leaf();
    ps.classes_leave_from_the_same_gpus = leaves->classes_leave_from_the_same_gpus();
  }
  sim.platform = std::make_unique<detail::Platform>(ps);
  sim.dp_intra_node =
      costs.dp_group.ranks > 1 && costs.dp_group.nodes == 1 && ps.nvlink_bytes_per_s > 0.0;
  sim.nvlink_bytes_per_s = ps.nvlink_bytes_per_s;

  // Simulated ranks: every GPU, or TP rank 0 of DP replica 0 of each stage.
  const RankLayout& lay = sim.layout;
  const int t_count = options.exploit_symmetry ? 1 : lay.tp;
  const int r_count = options.exploit_symmetry ? 1 : lay.dpc;
  for (int s = 0; s < lay.pp; ++s) {
    for (int r = 0; r < r_count; ++r) {
      for (int t = 0; t < t_count; ++t) {
        auto rank = std::make_unique<Rank>();
        rank->gpu = lay.rank(t, r, s);
        rank->t = t;
        rank->r = r;
        rank->s = s;
        rank->plan = &sim.plans[static_cast<size_t>(s)];
        sim.platform->add_gpu(rank->gpu);
        sim.ranks.push_back(std::move(rank));
      }
    }
  }
  // PP neighbours per chunk (model chunk c*P + s, Megatron's virtual-stage placement) and the
  // DP ring peer: the same local GPU on the next node of the DP group (rail-aligned, as NCCL
  // builds its rings), or in the reduced run the GPU's own mirror.
  const int chunks = lay.chunks;
  for (auto& rp : sim.ranks) {
    Rank& rank = *rp;
    const auto nc = static_cast<size_t>(chunks);
    rank.fwd_to.assign(nc, -1);
    rank.bwd_to.assign(nc, -1);
    rank.fwd_in.assign(nc, nullptr);
    rank.bwd_in.assign(nc, nullptr);
    rank.fwd_out.assign(nc, nullptr);
    rank.bwd_out.assign(nc, nullptr);
    rank.fwd_wire.assign(nc, 0.0);
    rank.bwd_wire.assign(nc, 0.0);
    for (int c = 0; c < chunks; ++c) {
      const auto ci = static_cast<size_t>(c);
      int next_s = rank.s + 1;
      int next_c = c;
      if (next_s == lay.pp) {
        next_s = 0;
        next_c = c + 1;
      }
      int prev_s = rank.s - 1;
      int prev_c = c;
      if (prev_s < 0) {
        prev_s = lay.pp - 1;
        prev_c = c - 1;
      }
      auto mailbox = [](char dir, int gpu, int chunk) {
        return sg4::Mailbox::by_name(std::string(1, dir) + std::to_string(gpu) + "_" +
                                     std::to_string(chunk));
      };
      if (next_c < chunks) {
        const int to = lay.rank(rank.t, rank.r, next_s);
        if (to != rank.gpu) {
          rank.fwd_to[ci] = to;
          rank.fwd_out[ci] = mailbox('f', to, next_c);
          const bool inter = lay.node(to) != lay.node(rank.gpu);
          const double bw = inter ? sim.nic_share_bytes_per_s : ps.nvlink_bytes_per_s;
          rank.fwd_wire[ci] =
              pp_wire_bytes(sim, chunk_costs(sim, rank.s, c).activation_bytes, inter, bw);
          const bool via_uplinks =
              leaves &&
              (options.exploit_symmetry ? leaves->pp_crosses(rank.s, next_s)
                                        : leaves->leaf_of_gpu(rank.gpu) != leaves->leaf_of_gpu(to));
          sim.platform->add_route(rank.gpu, to, via_uplinks);
        }
      }
      if (prev_c >= 0) {
        const int from = lay.rank(rank.t, rank.r, prev_s);
        if (from != rank.gpu) {
          rank.fwd_in[ci] = mailbox('f', rank.gpu, c);
          rank.bwd_to[ci] = from;
          rank.bwd_out[ci] = mailbox('b', from, prev_c);
          const bool inter = lay.node(from) != lay.node(rank.gpu);
          const double bw = inter ? sim.nic_share_bytes_per_s : ps.nvlink_bytes_per_s;
          rank.bwd_wire[ci] =
              pp_wire_bytes(sim, chunk_costs(sim, prev_s, prev_c).activation_bytes, inter, bw);
        }
      }
      if (next_c < chunks && lay.rank(rank.t, rank.r, next_s) != rank.gpu) {
        rank.bwd_in[ci] = mailbox('b', rank.gpu, c);
      }
    }
    if (sim.dp_inter_node) {
      bool via_uplinks = false;
      if (options.exploit_symmetry) {
        rank.dp_peer = detail::Platform::mirror_id(rank.gpu);
        via_uplinks = leaves && leaves->dp_ring_crosses(rank.s);
      } else {
        rank.dp_peer = lay.dp_ring_peer(rank.t, rank.r, rank.s);
        via_uplinks = leaves && leaves->leaf_of_gpu(rank.gpu) != leaves->leaf_of_gpu(rank.dp_peer);
        if (rank.dp_peer == rank.gpu)
          rank.dp_peer = detail::Platform::mirror_id(rank.gpu);
      }
      sim.platform->add_route(rank.gpu, rank.dp_peer, via_uplinks);
    } else if (sim.dp_intra_node) {
      rank.dp_peer = detail::Platform::nvlink_mirror_id(rank.gpu);
      sim.platform->add_route(rank.gpu, rank.dp_peer);
    }
    size_t outbox = 0;
    for (const PipelineOp& op : rank.plan->ops) {
      if (op.kind != OpKind::kRecompute && op.kind != OpKind::kBackwardWeight)
        ++outbox;
    }
    rank.outbox.reserve(outbox);  // messages are pointed to: never reallocate
  }
  sim.platform->build();
  if (sim.dp_inter_node || sim.dp_intra_node) {
    const Rank& r0 = *sim.ranks.front();
    sim.dp_route_latency_s = sim.platform->route_latency_s(r0.gpu, r0.dp_peer);
  }

  // Actors: a compute stream per simulated GPU, plus the communication streams it drives.
  if (sim.trace != nullptr) {
    sim.trace->streams = {"compute", "communication"};
  }
  int track = 0;
  for (auto& rp : sim.ranks) {
    Rank& rank = *rp;
    rank.track = track++;
    if (sim.trace != nullptr) {
      sim.trace->tracks.push_back("stage " + std::to_string(rank.s) + " tp " +
                                  std::to_string(rank.t) + " dp " + std::to_string(rank.r) +
                                  " (gpu " + std::to_string(rank.gpu) + ")");
    }
    sg4::Host* host = sim.platform->host(rank.gpu);
    const std::string id = std::to_string(rank.gpu);
    Rank* rk = &rank;
    Sim* sm = &sim;
    if (!rank.plan->buckets.empty()) {
      rank.bucket_ready = sg4::Semaphore::create(0);
      rank.dp_actor = sg4::Actor::create("dp" + id, host, [sm, rk] { run_dp(*sm, *rk); });
    }
    if (!rank.plan->gathers.empty()) {
      rank.ag_credit = sg4::Semaphore::create(1);
      rank.ag_done = sg4::Semaphore::create(0);
      rank.ag_actor = sg4::Actor::create("ag" + id, host, [sm, rk] { run_gathers(*sm, *rk); });
    } else if (sim.zero3) {
      // No DP peers: gathers are free; keep the semaphores satisfied.
      rank.ag_credit = sg4::Semaphore::create(1 << 30);
      rank.ag_done = sg4::Semaphore::create(1 << 30);
    }
    if (!rank.plan->scatters.empty()) {
      rank.rs_ready = sg4::Semaphore::create(0);
      rank.rs_actor = sg4::Actor::create("rs" + id, host, [sm, rk] { run_scatters(*sm, *rk); });
    } else if (sim.zero3) {
      rank.rs_ready = sg4::Semaphore::create(0);
    }
    rank.compute_actor = sg4::Actor::create("gpu" + id, host, [sm, rk] { run_compute(*sm, *rk); });
    // Permanent receivers make PP sends eager: the flow starts when the sender puts it.
    for (auto* mb : rank.fwd_in) {
      if (mb != nullptr)
        mb->set_receiver(rank.compute_actor);
    }
    for (auto* mb : rank.bwd_in) {
      if (mb != nullptr)
        mb->set_receiver(rank.compute_actor);
    }
  }
  const auto wall1 = std::chrono::steady_clock::now();
  engine.run();
  const auto wall2 = std::chrono::steady_clock::now();
  if (deadlock)
    throw std::logic_error("event engine: the replay deadlocked (schedule bug)");

  // The iteration ends when the slowest rank finishes; its accounts are the breakdown.
  const Rank* critical = sim.ranks.front().get();
  for (const auto& r : sim.ranks) {
    if (r->stage_end_s > critical->stage_end_s)
      critical = r.get();
  }
  SimulationResult result;
  result.engine = "event";
  result.profile_name = profile.name;
  result.iteration_time_s = critical->stage_end_s;
  const Accounts& a = critical->acc;
  TimeBreakdown& b = result.breakdown;
  b.compute_s = a.compute;
  b.other_s = a.other;
  b.tp_comm_exposed_s = a.tp;
  b.cp_comm_exposed_s = a.cp;
  b.pp_comm_exposed_s = a.pp;
  b.dp_comm_exposed_s = a.dp;
  b.optimizer_s = a.optimizer;
  b.bubble_s = std::max(0.0, result.iteration_time_s -
                                 (a.compute + a.other + a.tp + a.cp + a.pp + a.dp + a.optimizer));
  result.notes.push_back(
      std::string("event engine: ") + std::to_string(sim.ranks.size()) + " simulated GPUs" +
      (options.exploit_symmetry ? " (one TP rank per stage, one DP replica; symmetric ranks "
                                  "simulated once)"
                                : " (every GPU)"));
  if (ps.uplink_bytes_per_s_per_node > 0.0) {
    result.notes.push_back("oversubscribed fabric: one uplink bundle per leaf of " +
                           std::to_string(ps.nodes_per_leaf) +
                           " node(s), crossed by the flows between leaves");
    if (options.exploit_symmetry && !leaves->classes_leave_from_the_same_gpus()) {
      result.notes.push_back(
          "PP and DP flows leave leaves from different GPUs: the reduced run gives each class its "
          "own share of the leaf's uplinks (optimistic where they overlap); --every-gpu "
          "simulates every GPU");
    }
  }
  finish_result(scenario, costs, result);
  if (stats != nullptr) {
    stats->simulated_gpus = static_cast<int>(sim.ranks.size());
    stats->activities = sim.activities;
    stats->build_wall_s = std::chrono::duration<double>(wall1 - wall0).count();
    stats->run_wall_s = std::chrono::duration<double>(wall2 - wall1).count();
  }
  if (sim.trace != nullptr) {
    std::stable_sort(sim.trace->slices.begin(), sim.trace->slices.end(),
                     [](const traces::TraceSlice& x, const traces::TraceSlice& y) {
                       return x.start_s < y.start_s;
                     });
  }
  return result;
}

}  // namespace

SimulationResult simulate_iteration(const Scenario& scenario, const HardwareProfile& profile,
                                    const SimOptions& options, SimStats* stats) {
  const IterationCosts costs = compute_iteration_costs(scenario, profile);
  return simulate_iteration(scenario, costs, profile, options, stats);
}

SimulationResult simulate_iteration(const Scenario& scenario, const IterationCosts& costs,
                                    const HardwareProfile& profile, const SimOptions& options,
                                    SimStats* stats) {
  if (costs.stages.empty() || costs.stages.front().chunks.empty()) {
    throw std::invalid_argument("simulate_iteration: costs have no stages");
  }
  return run(scenario, costs, profile, options, stats);
}

}  // namespace capsim::sim
