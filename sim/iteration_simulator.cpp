#include "sim/iteration_simulator.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "models/collective_cost.hpp"
#include "models/leaf_crossings.hpp"
#include "sim/detail/job_replay.hpp"
#include "sim/detail/platform.hpp"
#include "sim/detail/rank_actors.hpp"
#include "sim/detail/replay_state.hpp"
#include "sim/detail/stage_plan.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include <malloc.h>
#include <xbt/log.h>

namespace capsim::sim {
namespace sg4 = simgrid::s4u;
namespace detail {

std::atomic<bool> g_engine_used{false};

// Throws unless this is the process's first simulation (docs/design/simgrid-notes.md trap 16: a
// second Engine silently keeps the old clock).
void claim_engine() {
  if (g_engine_used.exchange(true)) {
    throw std::logic_error(
        "simulate_iteration: SimGrid runs one simulation per process; run each simulation in "
        "its own process");
  }
}

EngineArguments engine_arguments() {
  static int argc = 1;
  static std::string name = "capsim";
  static std::array<char*, 2> argv{name.data(), nullptr};
  return {&argc, argv.data()};
}

// Selects the network model and has `deadlock` set if the replay deadlocks.
void configure_engine(bool& deadlock) {
  xbt_log_control_set("root.thres:critical");
  // Flow-exact CM02 (docs/design/simgrid-notes.md §2): no LV08 latency/bandwidth
  // factors, no cross-traffic, no TCP window bound. CM02 weights a flow's share by its route
  // latency plus weight-S x sum(1/bandwidth) (SimGrid 3.32 src/surf/network_cm02.cpp). Every
  // two routes that share a link here have the same latency (NIC routes and DP mirrors: two NIC
  // ends; NVLink routes and NVLink mirrors: two NVLink ends; uplinks add none), so weight-S 0
  // gives equal max-min shares. weight-S > 0 (1e12 in docs/design/simgrid-notes.md §2) would
  // penalise flows through the reduced run's narrower share links and break its equality with the
  // full run.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e30");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });
}

// Fills the replay's inputs, layout and switches, and plans every stage.
void set_up_replay(Sim& sim, const Scenario& scenario, const IterationCosts& costs,
                   const HardwareProfile& profile, const SimOptions& options) {
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
  sim.layout.nvlink_domain = cl.nvlink_domain;
  sim.zero3 = par.zero_stage == 3;
  sim.blocking_p2p = par.schedule == Schedule::kOneFOneB || par.schedule == Schedule::kGpipe;
  sim.zero12 = par.zero_stage == 1 || par.zero_stage == 2;
  sim.nic_share_bytes_per_s = cl.node_nic_bandwidth_bytes_per_s() / cl.gpus_per_node;
  sim.collective_share = 1.0 - costs.compute_rate_during_comm;
  detail::plan_stages(sim);
}

// Which flows leave their leaf switch (only oversubscribed fabrics have leaf uplinks).
void add_leaf_crossings(const Sim& sim, PlatformPlan& fabric) {
  detail::PlatformSpec& ps = fabric.spec;
  if (ps.uplink_bytes_per_s_per_node > 0.0) {
    fabric.leaves.emplace(sim.layout, ps.nodes_per_leaf, sim.dp_inter_node);
    ps.pp_crossing_gpus_per_leaf = fabric.leaves->max_pp_crossing_gpus_per_leaf();
    ps.dp_crossing_gpus_per_leaf = fabric.leaves->max_dp_crossing_gpus_per_leaf();
    ps.classes_leave_from_the_same_gpus = fabric.leaves->classes_leave_from_the_same_gpus();
  }
}

// Whether a stage boundary (every stage_gpus GPUs) falls inside a leaf of leaf_gpus GPUs.
bool stages_share_a_leaf(int pipeline, int stage_gpus, int leaf_gpus) {
  for (int k = 1; k < pipeline; ++k) {
    if (static_cast<std::int64_t>(k) * stage_gpus % leaf_gpus != 0)
      return true;
  }
  return false;
}

// Returns the platform's links and leaf crossings; records in `sim` the PP latencies and
// whether the DP group's flows go through the NICs or the NVLink ports.
PlatformPlan build_platform_spec(Sim& sim, const SimOptions& options) {
  const ClusterSpec& cl = sim.scenario->cluster;
  const IterationCosts& costs = *sim.costs;
  const HardwareProfile& profile = *sim.profile;
  const int g = cl.gpus_per_node;
  PlatformPlan fabric;
  // Platform: NIC links as the node's NICs dictate, latencies from the profile's send/recv
  // latency (split over the two ends of a route).
  detail::PlatformSpec& ps = fabric.spec;
  ps.gpus_per_node = g;
  ps.gpus_per_domain = cl.nvlink_domain_gpus();
  ps.nvlink_bytes_per_s = cl.intra_node_bandwidth_bytes_per_s;
  sim.pp_intra_latency_s = collective_time_s(profile, CollectiveKind::kSendRecv, kLatencyProbeBytes,
                                             detail::pp_shape(sim, false));
  ps.nvlink_latency_s = sim.pp_intra_latency_s / 2.0;
  if (cl.num_nodes > 1 && cl.node_nic_bandwidth_bytes_per_s() > 0.0) {
    const int nics = std::max(cl.nics_per_node, 1);
    ps.nic_links_per_node = std::min(nics, g);
    ps.nic_link_bytes_per_s = cl.node_nic_bandwidth_bytes_per_s() / ps.nic_links_per_node;
    sim.pp_inter_latency_s = collective_time_s(profile, CollectiveKind::kSendRecv,
                                               kLatencyProbeBytes, detail::pp_shape(sim, true));
    ps.nic_latency_s = sim.pp_inter_latency_s / 2.0;
    const bool oversubscribed =
        cl.topology == Topology::kOversubscribed || cl.oversubscription > 1.0;
    if (oversubscribed) {
      ps.uplink_bytes_per_s_per_node =
          cl.node_nic_bandwidth_bytes_per_s() / std::max(cl.oversubscription, 1.0);
      ps.nodes_per_leaf = cl.nodes_per_leaf;
      ps.rail_uplinks = cl.topology == Topology::kRailOptimized;
    }
  }
  ps.reduced = options.exploit_symmetry;
  ps.one_zone_max_gpus = options.one_zone_max_gpus;
  sim.dp_inter_node =
      costs.dp_group.ranks > 1 && costs.dp_group.nodes > 1 && ps.nic_links_per_node > 0;
  sim.dp_intra_node =
      costs.dp_group.ranks > 1 && costs.dp_group.nodes == 1 && ps.nvlink_bytes_per_s > 0.0;
  sim.nvlink_bytes_per_s = ps.nvlink_bytes_per_s;
  add_leaf_crossings(sim, fabric);
  return fabric;
}

// Simulated ranks: every GPU, or TP rank 0 of DP replica 0 of each stage.
void create_ranks(Sim& sim, const SimOptions& options) {
  const RankLayout& lay = sim.layout;
  const int t_count = options.exploit_symmetry ? 1 : lay.tp;
  const int r_count = options.exploit_symmetry ? 1 : lay.dpc;
  for (int s = 0; s < lay.pp; ++s) {
    for (int r = 0; r < r_count; ++r) {
      for (int t = 0; t < t_count; ++t) {
        auto rank = std::make_unique<Rank>();
        rank->gpu = sim.fabric_gpu(lay.rank(t, r, s));
        rank->t = t;
        rank->r = r;
        rank->s = s;
        rank->plan = &sim.plans[static_cast<size_t>(s)];
        sim.platform->add_gpu(rank->gpu);
        sim.ranks.push_back(std::move(rank));
      }
    }
  }
}

// The mailbox of the DP sink on host `id` (a GPU or mirror id).
sg4::Mailbox* dp_sink_mailbox(int id) {
  return sg4::Mailbox::by_name("dp_sink" + std::to_string(id));
}

sg4::Mailbox* pp_mailbox(char dir, int gpu, int chunk) {
  return sg4::Mailbox::by_name(std::string(1, dir) + std::to_string(gpu) + "_" +
                               std::to_string(chunk));
}

// Where a chunk's activations go next or came from: the next or previous virtual stage
// (models/pipeline_placement.hpp).
std::optional<StageChunk> next_chunk(const Sim& sim, int s, int c) {
  return capsim::next_chunk(sim.scenario->parallelism.schedule, sim.layout.pp, sim.layout.chunks, s,
                            c);
}

std::optional<StageChunk> prev_chunk(const Sim& sim, int s, int c) {
  return previous_chunk(sim.scenario->parallelism.schedule, sim.layout.pp, s, c);
}

// Returns the flow bytes of one PP message between `gpu` and `peer` carrying the activations
// of chunk `chunk` of stage `stage` (or their gradients).
double pp_message_wire_bytes(const Sim& sim, int gpu, int peer, int stage, int chunk) {
  const bool inter = sim.layout.domain(peer) != sim.layout.domain(gpu);
  const double bw = inter ? sim.nic_share_bytes_per_s : sim.nvlink_bytes_per_s;
  return detail::pp_wire_bytes(sim, detail::chunk_costs(sim, stage, chunk).activation_bytes, inter,
                               bw);
}

// Chunk c sends its activations to the next stage's GPU; returns false when that is none.
bool wire_to_next_stage(Sim& sim, Rank& rank, int c, const PlatformPlan& fabric,
                        const SimOptions& options) {
  const std::optional<StageChunk> next = next_chunk(sim, rank.s, c);
  if (!next)
    return false;
  const int to = sim.fabric_gpu(sim.layout.rank(rank.t, rank.r, next->stage));
  if (to == rank.gpu)
    return false;
  const auto ci = static_cast<size_t>(c);
  rank.fwd_to[ci] = to;
  rank.fwd_out[ci] = pp_mailbox('f', to, next->chunk);
  rank.fwd_wire[ci] = pp_message_wire_bytes(sim, rank.gpu, to, rank.s, c);
  const std::optional<LeafCrossings>& leaves = fabric.leaves;
  bool via_uplinks = false;
  if (leaves) {
    via_uplinks = options.exploit_symmetry
                      ? leaves->pp_crosses(rank.s, next->stage)
                      : leaves->leaf_of_gpu(rank.gpu) != leaves->leaf_of_gpu(to);
  }
  sim.platform->add_route(rank.gpu, to, via_uplinks);
  return true;
}

// Chunk c receives its activations from the previous stage's GPU and sends it their gradients.
void wire_to_previous_stage(Sim& sim, Rank& rank, int c) {
  const std::optional<StageChunk> prev = prev_chunk(sim, rank.s, c);
  if (!prev)
    return;
  const int from = sim.fabric_gpu(sim.layout.rank(rank.t, rank.r, prev->stage));
  if (from == rank.gpu)
    return;
  const auto ci = static_cast<size_t>(c);
  rank.fwd_in[ci] = pp_mailbox('f', rank.gpu, c);
  rank.bwd_to[ci] = from;
  rank.bwd_out[ci] = pp_mailbox('b', from, prev->chunk);
  rank.bwd_wire[ci] = pp_message_wire_bytes(sim, rank.gpu, from, prev->stage, prev->chunk);
}

// PP neighbours per chunk: their mailboxes, the flow bytes of each message and the routes to
// them.
void wire_pipeline_neighbours(Sim& sim, Rank& rank, const PlatformPlan& fabric,
                              const SimOptions& options) {
  const auto nc = static_cast<size_t>(sim.layout.chunks);
  rank.fwd_to.assign(nc, -1);
  rank.bwd_to.assign(nc, -1);
  rank.fwd_in.assign(nc, nullptr);
  rank.bwd_in.assign(nc, nullptr);
  rank.fwd_out.assign(nc, nullptr);
  rank.bwd_out.assign(nc, nullptr);
  rank.fwd_wire.assign(nc, 0.0);
  rank.bwd_wire.assign(nc, 0.0);
  for (int c = 0; c < sim.layout.chunks; ++c) {
    const bool has_next = wire_to_next_stage(sim, rank, c, fabric, options);
    wire_to_previous_stage(sim, rank, c);
    if (has_next)  // the next stage's gradients come back
      rank.bwd_in[static_cast<size_t>(c)] = pp_mailbox('b', rank.gpu, c);
  }
}

// The DP ring peer: the same local GPU on the next node of the DP group (rail-aligned, as NCCL
// builds its rings), or in the reduced run the GPU's own mirror.
void wire_dp_peer(Sim& sim, Rank& rank, const PlatformPlan& fabric, const SimOptions& options) {
  const std::optional<LeafCrossings>& leaves = fabric.leaves;
  if (sim.dp_inter_node) {
    bool via_uplinks = false;
    if (options.exploit_symmetry) {
      rank.dp_peer = detail::Platform::mirror_id(rank.gpu);
      via_uplinks = leaves && leaves->dp_ring_crosses(rank.s);
    } else {
      rank.dp_peer = sim.fabric_gpu(sim.layout.dp_ring_peer(rank.t, rank.r, rank.s));
      via_uplinks = leaves && leaves->leaf_of_gpu(rank.gpu) != leaves->leaf_of_gpu(rank.dp_peer);
      if (rank.dp_peer == rank.gpu)
        rank.dp_peer = detail::Platform::mirror_id(rank.gpu);
    }
    sim.platform->add_route(rank.gpu, rank.dp_peer, via_uplinks);
  } else if (sim.dp_intra_node) {
    rank.dp_peer = detail::Platform::nvlink_mirror_id(rank.gpu);
    sim.platform->add_route(rank.gpu, rank.dp_peer);
  } else {
    return;
  }
  rank.dp_out = dp_sink_mailbox(rank.dp_peer);
  sim.dp_sinks.insert(rank.dp_peer);
}

// Messages are pointed to while in flight: the outbox must never reallocate.
void reserve_outbox(Rank& rank) {
  size_t outbox = 0;
  for (const estimate::PipelineOp& op : rank.plan->ops) {
    if (op.kind != estimate::OpKind::kRecompute && op.kind != estimate::OpKind::kBackwardWeight)
      ++outbox;
  }
  rank.outbox.reserve(outbox);
}

// Gives every rank its PP neighbours and DP peer; the platform gets the routes between them.
void wire_ranks(Sim& sim, const PlatformPlan& fabric, const SimOptions& options) {
  for (auto& rp : sim.ranks) {
    wire_pipeline_neighbours(sim, *rp, fabric, options);
    wire_dp_peer(sim, *rp, fabric, options);
    reserve_outbox(*rp);
  }
}

// Records the latency of the rank's DP route, which DP collectives pay as part of the
// collective's (run_collective). REQUIRES: the platform is built.
void set_dp_route_latency(Sim& sim) {
  if (sim.dp_inter_node || sim.dp_intra_node) {
    const Rank& r0 = *sim.ranks.front();
    sim.dp_route_latency_s = sim.platform->route_latency_s(r0.gpu, r0.dp_peer);
  }
}

// Gives a rank's streams a trace track named after its coordinates.
void add_trace_track(Sim& sim, Rank& rank, int track) {
  rank.track = track;
  if (sim.trace != nullptr) {
    sim.trace->tracks.push_back("stage " + std::to_string(rank.s) + " tp " +
                                std::to_string(rank.t) + " dp " + std::to_string(rank.r) +
                                " (gpu " + std::to_string(rank.gpu) + ")");
  }
}

// Starts the rank's compute stream and the collective streams it drives, with the semaphores
// between them.
void launch_rank_actors(Sim& sim, Rank& rank) {
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
    rank.rs_done = sg4::Semaphore::create(0);
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

// A DP flow is a put into the mailbox of a sink actor on the peer's host: as its permanent
// receiver the sink makes every put start at once (flows of the DP, gather and scatter streams
// run side by side), and it collects them. A direct host-to-host comm would do the same, but
// SimGrid 3.32 files those in one global list that each one's end scans, quadratic in the
// flows in flight (38% of the four-jobs benchmark). Sinks are daemons: they end with the run.
void launch_dp_sinks(Sim& sim) {
  for (const int id : sim.dp_sinks) {
    sg4::Mailbox* mailbox = dp_sink_mailbox(id);
    sg4::ActorPtr sink =
        sg4::Actor::create("dp_sink" + std::to_string(id), sim.platform->host(id), [mailbox] {
          for (;;)
            (void)mailbox->get<int>();
        });
    sink->daemonize();
    mailbox->set_receiver(sink);
  }
}

// Actors' stacks: 512 KiB is ample for the replay's actors (no recursion) and keeps virtual
// memory small. Each stack's guard page costs a second memory mapping, so beyond ~32k actors
// Linux's vm.max_map_count (65530) stops SimGrid ("Failed to protect stack", an abort;
// docs/design/simgrid-notes.md trap 11): large every-GPU runs go without guard pages.
//
// SimGrid zero-allocates each stack (calloc). A fresh mapping comes zeroed, so only the pages an
// actor touches count; from the heap, calloc clears all 512 KiB (7 GB at 16,384 GPUs). Fixing
// glibc's mmap threshold keeps stacks mapped: left dynamic, it rises to the size of any large
// block freed before (mallopt(3); docs/design/simgrid-notes.md trap 18). capsim itself links
// jemalloc, which ignores this (trap 19); the Python module allocates with glibc.
void configure_actor_stacks(size_t ranks) {
  constexpr int kMappedFromBytes = 128 * 1024;  // glibc's default threshold
  mallopt(M_MMAP_THRESHOLD, kMappedFromBytes);
  constexpr size_t kGuardedRanksMax = 4096;
  sg4::Engine::set_config("contexts/stack-size:512");
  if (ranks > kGuardedRanksMax)
    sg4::Engine::set_config("contexts/guard-size:0");
}

// Actors: a compute stream per simulated GPU, plus the communication streams it drives.
void launch_actors(Sim& sim) {
  launch_dp_sinks(sim);
  if (sim.trace != nullptr) {
    sim.trace->streams = {"compute", "TP/CP/PP communication", "DP buckets", "ZeRO-3 all-gathers",
                          "ZeRO-3 reduce-scatters"};
  }
  int track = 0;
  for (auto& rp : sim.ranks) {
    add_trace_track(sim, *rp, track++);
    launch_rank_actors(sim, *rp);
  }
}

void relaunch_actors(Sim& sim) {
  sim.iteration_start_s = sg4::Engine::get_clock();
  for (auto& rp : sim.ranks) {
    Rank& rank = *rp;
    rank.outbox.clear();
    rank.scatters_in_flight = 0;
    rank.collectives_running = 0;
    rank.buckets_released = 0;
    rank.buckets_started = 0;
    rank.sm_occupancy = nullptr;
    rank.compute_done = false;
    rank.acc = {};
    rank.acc_at_last_op = {};
    rank.last_op_end_s = 0.0;
    rank.optimizer_end_s = 0.0;
    rank.stage_end_s = 0.0;
    rank.first_forward_start_s = -1.0;
    launch_rank_actors(sim, rank);
  }
}

std::vector<ActorPtr> rank_actors(const Sim& sim) {
  std::vector<ActorPtr> out;
  for (const auto& rp : sim.ranks) {
    for (const ActorPtr& actor : {rp->compute_actor, rp->dp_actor, rp->ag_actor, rp->rs_actor}) {
      if (actor)
        out.push_back(actor);
    }
  }
  return out;
}

// How a note on the reduced run's assumptions ends: the exact alternative where it exists.
std::string every_gpu_hint(const Parallelism& par) {
  return par.num_gpus() <= kMaxEveryGpuRanks
             ? "; --every-gpu simulates every GPU"
             : "; --every-gpu, which simulates every GPU, is limited to " +
                   std::to_string(kMaxEveryGpuRanks) + " GPUs";
}

// The busy time of a GPU: its own work, the waits (bubble, exposed PP and DP) left out.
double busy_s(const detail::Accounts& a) {
  return a.compute + a.other + a.tp + a.cp + a.ep;
}

// The breakdown, split as the analytic engine splits its step (docs/simulator.md):
// - the busiest GPU's work and waits until its last compute op: the pipeline's bottleneck,
//   whose idle time is the fill and drain, not other stages' load imbalance (ties: the GPU
//   that finishes last);
// - past the end of the pipeline (the last compute op of any GPU), what the GPU that finishes
//   last still runs: its optimizer step, and the rest (DP reduction and parameter gather) as
//   DP;
// - bubble: the rest of the pipeline's time, the busiest GPU's own DP wait after its last op
//   included (other stages still compute then).
TimeBreakdown breakdown_of(const Sim& sim, double end_s) {
  double pipeline_end_s = 0.0;
  const Rank* last = sim.ranks.front().get();
  const Rank* busiest = last;
  for (const auto& r : sim.ranks) {
    pipeline_end_s = std::max(pipeline_end_s, r->last_op_end_s - sim.iteration_start_s);
    if (r->stage_end_s > last->stage_end_s)
      last = r.get();
    const double busy = busy_s(r->acc);
    const double best = busy_s(busiest->acc);
    const bool tie = std::abs(busy - best) <= 1e-9 * best;
    if ((!tie && busy > best) || (tie && r->stage_end_s > busiest->stage_end_s))
      busiest = r.get();
  }
  const detail::Accounts& a = busiest->acc_at_last_op;
  TimeBreakdown b;
  b.stage = busiest->s;
  b.stage_busy_s.assign(sim.costs->stages.size(), 0.0);
  for (const auto& r : sim.ranks) {
    double& stage_busy_s = b.stage_busy_s[static_cast<size_t>(r->s)];
    stage_busy_s = std::max(stage_busy_s, busy_s(r->acc));
  }
  b.compute_s = a.compute;
  b.other_s = a.other;
  b.tp_comm_exposed_s = a.tp;
  b.cp_comm_exposed_s = a.cp;
  b.ep_comm_exposed_s = a.ep;
  b.pp_comm_exposed_s = a.pp;
  const double tail_s = end_s - pipeline_end_s;
  b.optimizer_s = std::clamp(last->optimizer_end_s - sim.iteration_start_s - pipeline_end_s, 0.0,
                             last->acc.optimizer);
  b.dp_comm_exposed_s = a.dp + std::max(0.0, tail_s - b.optimizer_s);
  b.bubble_s = std::max(0.0, end_s - (a.compute + a.other + a.tp + a.cp + a.ep + a.pp +
                                      b.dp_comm_exposed_s + b.optimizer_s));
  return b;
}

// The iteration ends when the slowest rank finishes.
SimulationResult collect_result(const Sim& sim, const PlatformPlan& fabric,
                                const SimOptions& options) {
  double end_s = 0.0;
  for (const auto& r : sim.ranks)
    end_s = std::max(end_s, r->stage_end_s - sim.iteration_start_s);
  SimulationResult result;
  result.engine = "event";
  result.set_profile(*sim.profile);
  result.iteration_time_s = end_s;
  result.breakdown = breakdown_of(sim, end_s);
  result.notes.push_back(
      std::string("event engine: ") + std::to_string(sim.ranks.size()) + " simulated GPUs" +
      (options.exploit_symmetry ? " (one TP rank per stage, one DP replica; symmetric ranks "
                                  "simulated once)"
                                : " (every GPU)"));
  // A stage fills tp x cp x dp consecutive GPUs: fewer than a node (or a leaf) and the node's
  // (leaf's) shared links carry several stages' traffic, which the reduced run cannot see.
  const Parallelism& par = sim.scenario->parallelism;
  const int stage_gpus = par.tensor * par.context * par.data;
  const ClusterSpec& cl = sim.scenario->cluster;
  if (options.exploit_symmetry && par.pipeline > 1 && stage_gpus < cl.gpus_per_node &&
      fabric.spec.nic_links_per_node > 0) {
    result.notes.push_back(
        "GPUs of different stages share a node and its NICs: the reduced run assumes each GPU's "
        "neighbours load the shared links as it does" +
        every_gpu_hint(par));
  } else if (options.exploit_symmetry && fabric.spec.uplink_bytes_per_s_per_node > 0.0 &&
             stages_share_a_leaf(par.pipeline, stage_gpus, cl.gpus_per_node * cl.nodes_per_leaf)) {
    result.notes.push_back(
        "stages share leaf switches: the reduced run assumes every crossing GPU of a leaf sends "
        "at once (conservative when stages cross at different times)" +
        every_gpu_hint(par));
  }
  if (fabric.spec.uplink_bytes_per_s_per_node > 0.0) {
    result.notes.push_back("oversubscribed fabric: one uplink bundle per leaf of " +
                           std::to_string(fabric.spec.nodes_per_leaf) +
                           " node(s), crossed by the flows between leaves");
    if (options.exploit_symmetry && !fabric.leaves->classes_leave_from_the_same_gpus()) {
      result.notes.push_back(
          "PP and DP flows leave leaves from different GPUs: the reduced run gives each class its "
          "own share of the leaf's uplinks (optimistic where they overlap)" +
          every_gpu_hint(par));
    }
  }
  estimate::finish_result(*sim.scenario, *sim.costs, result);
  return result;
}

// Orders the trace's slices by start time (stable: ties keep the order the actors wrote them).
void sort_trace(traces::ChromeTrace& trace) {
  std::stable_sort(trace.slices.begin(), trace.slices.end(),
                   [](const traces::TraceSlice& x, const traces::TraceSlice& y) {
                     return x.start_s < y.start_s;
                   });
}

// The engine and the replay's state live until the process ends (one simulation per process:
// claim_engine). Freeing each of tens of thousands of actors and unmapping its stack costs a
// quarter of a 16,384-GPU run; the process's end frees them at once (capsim's main ends with
// _Exit). The pointer keeps them reachable, so leak checkers do not count them.
struct ProcessSimulation {
  explicit ProcessSimulation(const EngineArguments& arguments)
      : engine(arguments.argc, arguments.argv) {}
  sg4::Engine engine;
  bool deadlock = false;
  Sim sim;
};
ProcessSimulation* g_simulation = nullptr;

SimulationResult run(const Scenario& scenario, const IterationCosts& costs,
                     const HardwareProfile& profile, const SimOptions& options, SimStats* stats) {
  claim_engine();
  const auto wall0 = std::chrono::steady_clock::now();
  g_simulation = new ProcessSimulation(engine_arguments());
  sg4::Engine& engine = g_simulation->engine;
  bool& deadlock = g_simulation->deadlock;
  configure_engine(deadlock);

  Sim& sim = g_simulation->sim;
  set_up_replay(sim, scenario, costs, profile, options);
  const PlatformPlan fabric = build_platform_spec(sim, options);
  sim.platform = std::make_shared<detail::Platform>(fabric.spec);
  create_ranks(sim, options);
  wire_ranks(sim, fabric, options);
  sim.platform->build();
  set_dp_route_latency(sim);
  configure_actor_stacks(sim.ranks.size());
  launch_actors(sim);

  const auto wall1 = std::chrono::steady_clock::now();
  engine.run();
  const auto wall2 = std::chrono::steady_clock::now();
  if (deadlock)
    throw std::logic_error("event engine: the replay deadlocked (schedule bug)");

  SimulationResult result = collect_result(sim, fabric, options);
  if (stats != nullptr) {
    stats->simulated_gpus = static_cast<int>(sim.ranks.size());
    stats->activities = sim.activities;
    stats->build_wall_s = std::chrono::duration<double>(wall1 - wall0).count();
    stats->run_wall_s = std::chrono::duration<double>(wall2 - wall1).count();
  }
  if (sim.trace != nullptr)
    sort_trace(*sim.trace);
  return result;
}

}  // namespace detail

SimulationResult simulate_iteration(const Scenario& scenario, const HardwareProfile& profile,
                                    const SimOptions& options, SimStats* stats) {
  const IterationCosts costs = estimate::compute_iteration_costs(scenario, profile);
  return simulate_iteration(scenario, costs, profile, options, stats);
}

SimulationResult simulate_iteration(const Scenario& scenario, const IterationCosts& costs,
                                    const HardwareProfile& profile, const SimOptions& options,
                                    SimStats* stats) {
  if (costs.stages.empty() || costs.stages.front().chunks.empty()) {
    throw std::invalid_argument("simulate_iteration: costs have no stages");
  }
  return detail::run(scenario, costs, profile, options, stats);
}

}  // namespace capsim::sim
