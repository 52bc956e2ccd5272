#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "whatif/whatif_config.hpp"

namespace capsim::whatif::detail {

// The what-if engine's plain state: nodes, pools and jobs, indexed by their position. Times in
// seconds of simulated time. Single-threaded (one SimGrid engine per process).

inline constexpr double kInf = std::numeric_limits<double>::infinity();
// Events and deadlines this close together count as simultaneous (double time sums).
inline constexpr double kEps = 1e-9;

enum class NodeState { kOff, kBooting, kReady, kDraining, kShutdown, kFailed };
inline constexpr std::size_t kNodeStates = 6;
enum class OffReason { kNone, kFailure, kSpot, kScaleDown };

// A node slot. `state` and `free_gpus` change only through Cluster::set_state and
// Cluster::set_free_gpus, which keep the pool's counts and indexes in step.
struct Node {
  int pool = 0;
  int slot = 0;  // position in its pool's `nodes`
  NodeState state = NodeState::kOff;
  OffReason reason = OffReason::kNone;
  std::uint64_t gen = 0;  // bumped at every launch and power-off; stale events are ignored
  int free_gpus = 0;
  std::vector<int> jobs;  // job indices holding GPUs here
  double billed_since = 0.0;
  double ready_at = 0.0;
  double unneeded_since = -1.0;
  double notice_s = 0.0;   // warning the jobs got before the kill
  bool nominated = false;  // ready node the pending jobs are packed onto (this tick)
};

// GPUs a job holds on one node, valid while the node keeps generation `gen`.
struct Piece {
  int node;
  int gpus;
  std::uint64_t gen;
};

enum class JobState { kPending, kQueued, kRunning, kDone };
enum class Phase { kRestart, kCompute, kCheckpoint };

struct Job {
  const traces::JobRecord* rec = nullptr;
  const std::map<int, double>* rates = nullptr;  // scenario jobs: per pool, set at placement
  JobState state = JobState::kPending;
  double remaining = 0.0;        // work units left (seconds at `gpus`, or tokens)
  double saved_remaining = 0.0;  // at the last checkpoint
  double queued_at = 0.0;
  double first_start = -1.0;
  double end = -1.0;
  int attempts = 0;
  bool resized = false;
  int pool = -1;
  int gpus = 0;
  double alloc_since = 0.0;
  std::vector<Piece> pieces;
  Phase phase = Phase::kCompute;
  double phase_start = 0.0;
  double phase_rate = 0.0;
  double computed_since_ckpt_s = 0.0;
  bool recovering = false;  // failed, holding its other nodes until it notices
  double failed_at = 0.0;
  std::uint64_t epoch = 0;  // bumped at every interruption
  // Its placement's iteration time over a non-blocking fabric's (what-if fabric only).
  double fabric_slowdown = 1.0;
};

struct PoolRuntime {
  std::vector<int> nodes;
  // Kept by Cluster's setters, so that a wake of the engine costs no walk over every node
  // (10^6-job traces on thousands of nodes): nodes per state, the slots of the nodes that are
  // off, and the ready nodes ordered by free GPUs, then slot (the best-fit order).
  std::array<int, kNodeStates> in_state{};
  std::set<int> off_slots;
  std::set<std::pair<int, int>> ready_by_free;
  int ready_free_gpus = 0;
  double backoff_until = 0.0;
  double backoff_s = 0.0;
  double last_failure = -kInf;
  double billed_s = 0.0;  // node-seconds
};

// Only ready nodes take new work: booting ones have no GPUs yet, draining ones are cordoned.
[[nodiscard]] inline bool usable(const Node& n) {
  return n.state == NodeState::kReady;
}

// Returns the work a job needs: seconds at its requested GPUs, or tokens for scenario jobs.
[[nodiscard]] inline double work_of(const traces::JobRecord& r) {
  return r.scenario_path.empty() ? r.duration_s : r.tokens;
}

// Returns the work units per second a job makes at its current allocation.
[[nodiscard]] inline double rate(const Job& job) {
  if (job.rates != nullptr)
    return job.rates->at(job.gpus) / job.fabric_slowdown;
  return static_cast<double>(job.gpus) / job.rec->gpus;  // linear in GPUs for rigid-work jobs
}

// The nodes, pools and jobs of one run, and the counts the scheduler and autoscaler ask for.
struct Cluster {
  explicit Cluster(const WhatIf& whatif) : w(whatif) {}

  [[nodiscard]] Node& node(int id) { return nodes[static_cast<std::size_t>(id)]; }
  [[nodiscard]] const Node& node(int id) const { return nodes[static_cast<std::size_t>(id)]; }
  [[nodiscard]] Job& job(int j) { return jobs[static_cast<std::size_t>(j)]; }
  [[nodiscard]] const Job& job(int j) const { return jobs[static_cast<std::size_t>(j)]; }
  [[nodiscard]] PoolRuntime& pool(int p) { return pools[static_cast<std::size_t>(p)]; }
  [[nodiscard]] const PoolRuntime& pool(int p) const { return pools[static_cast<std::size_t>(p)]; }
  [[nodiscard]] const NodePool& spec(int p) const { return w.pools[static_cast<std::size_t>(p)]; }

  // Adds an off node slot at the end of `pool`'s nodes; returns its id.
  int add_node(int pool);
  // The only ways a node's state and free GPUs change (they keep PoolRuntime's indexes).
  void set_state(int id, NodeState state);
  void set_free_gpus(int id, int free_gpus);

  // Nominates a node for pending jobs this tick (Node::nominated); clear_nominations() clears
  // the nominated nodes alone.
  void nominate(int id);
  void clear_nominations();

  // Returns the pool's nodes that are booting or ready, plus draining and shutting down ones
  // when `include_draining`.
  [[nodiscard]] int count(int pool, bool include_draining) const;
  [[nodiscard]] int booting(int pool) const;
  // Returns how many more nodes the pool may launch (slots below its maximum that are off).
  [[nodiscard]] int off_slots(int pool) const;
  // Returns the first off slot of the pool, or -1.
  [[nodiscard]] int off_slot(int pool) const;
  // Returns the free GPUs of the pool's ready nodes.
  [[nodiscard]] int ready_free_gpus(int pool) const { return this->pool(pool).ready_free_gpus; }
  // Returns the free GPUs of each node of the pool, in the pool's node order.
  [[nodiscard]] std::vector<int> free_vector(int pool) const;
  // Returns the GPUs the job holds on nodes still up. Pieces on a node that went away were
  // counted when it did, so a failed node is neither billed nor busy.
  [[nodiscard]] int live_gpus(const Job& job) const;

  const WhatIf& w;
  std::vector<Node> nodes;
  std::vector<PoolRuntime> pools;
  std::vector<Job> jobs;
  // The jobs in JobState::kRunning: a timeline sample counts them without walking every job of
  // the trace (which made a run quadratic in the trace's length).
  std::set<int> running_jobs;
  std::vector<int> nominated_nodes;  // the nodes nominate() marked since the last clear
};

}  // namespace capsim::whatif::detail
