#include "sim/iteration_simulator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
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
#include "models/pipeline_schedule.hpp"
#include "sim/detail/platform.hpp"
#include "sim/detail/rank_actors.hpp"
#include "sim/detail/replay_state.hpp"
#include "sim/detail/stage_plan.hpp"

#include <xbt/log.h>

namespace capsim::sim {
namespace sg4 = simgrid::s4u;
namespace {

using detail::Accounts;
using detail::chunk_costs;
using detail::plan_stages;
using detail::pp_shape;
using detail::pp_wire_bytes;
using detail::Rank;
using detail::Sim;

std::atomic<bool> g_engine_used{false};

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
      rank.dp_actor = sg4::Actor::create("dp" + id, host, [sm, rk] { detail::run_dp(*sm, *rk); });
    }
    if (!rank.plan->gathers.empty()) {
      rank.ag_credit = sg4::Semaphore::create(1);
      rank.ag_done = sg4::Semaphore::create(0);
      rank.ag_actor =
          sg4::Actor::create("ag" + id, host, [sm, rk] { detail::run_gathers(*sm, *rk); });
    } else if (sim.zero3) {
      // No DP peers: gathers are free; keep the semaphores satisfied.
      rank.ag_credit = sg4::Semaphore::create(1 << 30);
      rank.ag_done = sg4::Semaphore::create(1 << 30);
    }
    if (!rank.plan->scatters.empty()) {
      rank.rs_ready = sg4::Semaphore::create(0);
      rank.rs_actor =
          sg4::Actor::create("rs" + id, host, [sm, rk] { detail::run_scatters(*sm, *rk); });
    } else if (sim.zero3) {
      rank.rs_ready = sg4::Semaphore::create(0);
    }
    rank.compute_actor =
        sg4::Actor::create("gpu" + id, host, [sm, rk] { detail::run_compute(*sm, *rk); });
    // Permanent receivers make PP sends eager: the flow starts when the sender puts it.
    detail::set_pp_receiver(rank, rank.compute_actor);
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
