#pragma once

#include <cstddef>
#include <vector>

#include "whatif/detail/cluster.hpp"
#include "whatif/detail/free_gpu_index.hpp"
#include "whatif/detail/job_queue.hpp"

namespace capsim::whatif::detail {

// What the autoscaler asks of the simulation: the autoscaler decides, the simulation acts (it
// owns the hosts, the random streams and the timed node events).
class NodeActions {
 public:
  NodeActions() = default;
  NodeActions(const NodeActions&) = delete;
  NodeActions& operator=(const NodeActions&) = delete;
  NodeActions(NodeActions&&) = delete;
  NodeActions& operator=(NodeActions&&) = delete;
  virtual ~NodeActions() = default;
  // Launches one node of `pool`; returns false on insufficient capacity (the pool backs off).
  [[nodiscard]] virtual bool launch(int pool) = 0;
  // Removes ready node `id` as a scale-down: empty at once, busy after a checkpoint's grace.
  virtual void scale_down(int id) = 0;
};

// The one autoscaler control loop that every policy parameterises (ControlLoop): scale-up from
// the queue's unmet demand through the expander and the rate caps, scale-down of unneeded
// nodes after their dwell, within cooldowns and the disruption budget, and per-pool launch
// backoff. Times in seconds of simulated time.
class Autoscaler {
 public:
  Autoscaler(Cluster& cluster, const JobQueue& queue, const ControlLoop& loop, NodeActions& actions)
      : c_(cluster), queue_(queue), loop_(loop), actions_(actions) {}

  // Launches nodes for pools below their minimum and for the queued jobs that the ready and
  // booting capacity cannot hold. Returns the earliest time waiting could change the decision.
  [[nodiscard]] double scale_up(double now);
  // Removes ready nodes that have been unneeded for the dwell time. Returns the earliest time
  // waiting could change the decision.
  [[nodiscard]] double scale_down(double now);

  // Backs `pool` off after a failed or timed-out launch (exponential, reset after a quiet spell).
  void back_off(int pool, double now);
  // Resets the pool's backoff when a node comes up after a quiet spell.
  void note_ready(int pool, double now);
  void note_launch(double now) { last_add_ = now; }
  void note_removal(double now) { last_delete_ = now; }

 private:
  struct PoolDemand;
  struct DownPass;

  [[nodiscard]] double launch_to_minimum(double now);
  [[nodiscard]] std::vector<PoolDemand> capacity() const;
  void plan_launches(std::vector<PoolDemand>& demand, double now, double& wake);
  [[nodiscard]] int plan_new_nodes(const Job& job, std::vector<PoolDemand>& demand,
                                   const std::vector<std::size_t>& order, double now, double& wake);
  void launch_planned(std::vector<PoolDemand>& demand, double now, double& wake);
  [[nodiscard]] int resume_allowance(double now);

  void scale_down_pool(int pool, DownPass& pass);
  [[nodiscard]] bool unneeded(int id, std::size_t slot, FreeGpuIndex& free) const;
  [[nodiscard]] bool replaceable(int id, std::size_t slot, FreeGpuIndex& free) const;

  Cluster& c_;
  const JobQueue& queue_;
  const ControlLoop& loop_;
  NodeActions& actions_;
  double last_add_ = -kInf;
  double last_delete_ = -kInf;
  double last_failure_ = -kInf;
  double resume_count_ = 0.0;  // Slurm's decaying ResumeRate counter
  double last_resume_scan_ = -kInf;
};

}  // namespace capsim::whatif::detail
