#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/rank_layout.hpp"
#include "models/scenario.hpp"
#include "sim/detail/platform.hpp"
#include "traces/chrome_trace.hpp"

#include "estimate/pipeline_schedule.hpp"
#include <boost/intrusive_ptr.hpp>

// SimGrid types are only forward-declared here: SimGrid headers stay in sim/*.cpp. The handles
// below are SimGrid's own (simgrid/forward.h); only files that include SimGrid may destroy them.
namespace simgrid::s4u {
class Actor;
class Exec;
class Mailbox;
class Semaphore;
}  // namespace simgrid::s4u

namespace capsim::sim::detail {

using ActorPtr = boost::intrusive_ptr<simgrid::s4u::Actor>;
using ExecPtr = boost::intrusive_ptr<simgrid::s4u::Exec>;
using SemaphorePtr = boost::intrusive_ptr<simgrid::s4u::Semaphore>;

// A PP message: which micro-batch, and when the sender put it on the wire.
struct Message {
  int micro_batch = 0;
  double sent_at_s = 0.0;
};

// Time spent by one rank's compute stream, by cause (seconds).
struct Accounts {
  double compute = 0.0;
  double other = 0.0;  // per-micro-batch framework overhead
  double tp = 0.0;
  double cp = 0.0;
  double ep = 0.0;  // expert-parallel token exchanges
  double pp = 0.0;
  double bubble = 0.0;
  double dp = 0.0;
  double optimizer = 0.0;
};

// One gradient bucket (or ZeRO-3 layer) collective.
struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0.0;
  // Latency of the further collectives it stands for (a stack that issues one per tensor).
  double extra_latency_s = 0.0;
};

// Everything one stage's schedule needs, shared by every simulated rank of that stage.
struct StagePlan {
  std::vector<estimate::PipelineOp> ops;
  // Per op: the gradient buckets it releases, each when its share of the op is done, full
  // buckets first and the last at the op's end (count 0: none).
  std::vector<DpBucketSplit> bucket_releases;
  int releases_after_compute = 0;         // buckets released once the stage's ops are done
  std::vector<Collective> buckets;        // DP reduction, in release order (ZeRO 0-2)
  std::vector<Collective> gathers;        // ZeRO-3 all-gathers, in compute order
  std::vector<Collective> scatters;       // ZeRO-3 reduce-scatters, in compute order
  std::vector<Collective> param_gathers;  // ZeRO-1/2 updated-parameter all-gather
  // Per parameter gather: the share of the first forward (first_forward_s) that waits for it.
  std::vector<double> param_gather_forward_share;
  double first_forward_s = 0.0;
};

// One simulated GPU: where its pipeline messages and DP flows go, its SimGrid actors and
// semaphores, and its accounts. Touched only by the simulation's actors (one thread).
struct Rank {
  int gpu = 0;
  int t = 0;
  int r = 0;
  int s = 0;
  int track = 0;
  const StagePlan* plan = nullptr;
  std::vector<int> fwd_to, bwd_to;                       // per chunk: destination GPU, -1 none
  std::vector<simgrid::s4u::Mailbox*> fwd_in, bwd_in;    // per chunk, nullptr when nothing arrives
  std::vector<simgrid::s4u::Mailbox*> fwd_out, bwd_out;  // per chunk, the destination's mailbox
  std::vector<double> fwd_wire, bwd_wire;                // per chunk: flow bytes
  std::vector<Message> outbox;
  int dp_peer = 0;  // GPU, mirror or NVLink mirror id: where this rank's DP flows go
  simgrid::s4u::Mailbox* dp_out = nullptr;  // the DP sink on dp_peer's host
  SemaphorePtr bucket_ready, ag_credit, ag_done, rs_ready, rs_done;
  int scatters_in_flight = 0;  // handed to the reduce-scatter stream, not yet drained
  ActorPtr compute_actor, dp_actor, ag_actor, rs_actor;
  int collectives_running = 0;  // DP / ZeRO collectives on the wire beside compute
  int buckets_released = 0;     // gradient buckets compute handed to the DP stream
  int buckets_started = 0;      // and those whose collective the DP stream began
  ExecPtr sm_occupancy;         // their CTAs' share of the GPU while any runs
  bool compute_done = false;    // the stage's last op has run
  Accounts acc;
  Accounts acc_at_last_op;  // the accounts when its last compute op ended
  double last_op_end_s = 0.0;
  double optimizer_end_s = 0.0;
  double stage_end_s = 0.0;
  double first_forward_start_s = -1.0;  // when the stage's first forward began
};

// The state of one replay, shared by the orchestration and every rank's actors.
struct Sim {
  const Scenario* scenario = nullptr;
  const IterationCosts* costs = nullptr;
  const HardwareProfile* profile = nullptr;
  RankLayout layout;
  // The platform; on a shared fabric every job's Sim points at the same one.
  std::shared_ptr<Platform> platform;
  // On a shared fabric, job node k runs on fabric node fabric_nodes[k] (empty: node k).
  std::vector<int> fabric_nodes;
  // On a shared fabric, the bytes this job's flows put on each route (from, to host ids).
  std::map<std::pair<int, int>, double>* flow_bytes = nullptr;
  bool zero3 = false;
  bool zero12 = false;
  bool dp_inter_node = false;
  bool dp_intra_node = false;  // DP group inside one node: its flows use the NVLink ports
  // Megatron's 1F1B (and GPipe) wait for each batched send/recv to finish
  // (p2p_communication.py, wait_on_reqs); interleaved (overlap_p2p_comm) and ZB-H1 do not.
  bool blocking_p2p = false;
  // Share of a GPU host that running collectives take from compute (1 - the compute rate);
  // 0: compute is a plain timed wait.
  double collective_share = 0.0;
  double nic_share_bytes_per_s = 0.0;  // one GPU's share of its node's NICs
  double nvlink_bytes_per_s = 0.0;     // one GPU's NVSwitch port, per direction
  double pp_intra_latency_s = 0.0;
  double pp_inter_latency_s = 0.0;
  double dp_route_latency_s = 0.0;
  traces::ChromeTrace* trace = nullptr;
  long long activities = 0;
  // When the current iteration started (a shared fabric runs several per job, back to back);
  // the ranks' times are the simulation clock's, the result's are relative to this.
  double iteration_start_s = 0.0;
  std::vector<StagePlan> plans;
  std::vector<std::unique_ptr<Rank>> ranks;
  // The hosts that receive this job's DP flows (GPU or mirror ids), each with a sink actor.
  std::set<int> dp_sinks;

  // Returns the platform's id of the job's GPU `gpu` (RankLayout numbering).
  [[nodiscard]] int fabric_gpu(int gpu) const {
    if (fabric_nodes.empty())
      return gpu;
    const int g = layout.gpus_per_node;
    return fabric_nodes[static_cast<std::size_t>(gpu / g)] * g + gpu % g;
  }

  // Counts `bytes` sent from host `from` to host `to` (shared fabrics only).
  void count_flow(int from, int to, double bytes) const {
    if (flow_bytes != nullptr)
      (*flow_bytes)[{from, to}] += bytes;
  }

  void slice(const Rank& rank, int stream, std::string name, const char* category, double start,
             double end) const {
    if (trace == nullptr || end <= start)
      return;
    trace->slices.push_back({rank.track, stream, std::move(name), category, start, end - start});
  }
};

// Returns the costs of model chunk `chunk` of pipeline stage `stage`.
[[nodiscard]] inline const ChunkCosts& chunk_costs(const Sim& sim, int stage, int chunk) {
  return sim.costs->stages[static_cast<size_t>(stage)].chunks[static_cast<size_t>(chunk)];
}

}  // namespace capsim::sim::detail
