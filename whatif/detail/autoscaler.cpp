#include "whatif/detail/autoscaler.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "whatif/detail/placement.hpp"

namespace capsim::whatif::detail {

// One pool's capacity during a scale-up pass and the launches planned on it.
struct Autoscaler::PoolDemand {
  std::vector<int> free;   // free GPUs of each ready node, all GPUs of each booting one
  std::vector<int> ids;    // the node behind each entry of `free`
  int running = 0;         // ready nodes
  int pending = 0;         // booting nodes
  int launches = 0;        // nodes to launch this pass
  std::vector<int> fresh;  // free GPUs of this pass's planned single-node launches
};

// The running state of one scale-down pass over all pools.
struct Autoscaler::DownPass {
  double now;
  double cooldown;  // no removal before this time
  int budget;       // voluntary disruptions of busy nodes still allowed
  int deleted = 0;
  double wake = kInf;
};

namespace {

// Packs `g` GPUs onto `slots` (best fit, or whole nodes of `gpn` GPUs); marks the nodes of
// the slots used, `mark` holding each slot's node, as nominated.
bool pack(std::vector<int>& slots, int g, int gpn, const std::vector<int>* mark, Cluster& c) {
  auto nominate = [&](std::size_t k) {
    if (mark != nullptr)
      c.nominate((*mark)[k]);
  };
  if (g <= gpn) {
    int best = -1;
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (slots[k] >= g && (best < 0 || slots[k] < slots[static_cast<std::size_t>(best)]))
        best = static_cast<int>(k);
    }
    if (best < 0)
      return false;
    slots[static_cast<std::size_t>(best)] -= g;
    nominate(static_cast<std::size_t>(best));
    return true;
  }
  const int whole = (g + gpn - 1) / gpn;
  int have = 0;
  for (int s : slots)
    have += s == gpn ? 1 : 0;
  if (have < whole)
    return false;
  int left = whole;
  for (std::size_t k = 0; k < slots.size(); ++k) {
    if (left > 0 && slots[k] == gpn) {
      slots[k] = 0;
      nominate(k);
      --left;
    }
  }
  return true;
}

// Expander: pools in listed order (priority) or by price per GPU-hour.
std::vector<std::size_t> expander_order(const Cluster& c, Expander expander) {
  std::vector<std::size_t> order(c.pools.size());
  for (std::size_t p = 0; p < order.size(); ++p)
    order[p] = p;
  if (expander == Expander::kPrice) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return c.w.pools[a].price_usd_per_hour / c.w.pools[a].gpus_per_node() <
             c.w.pools[b].price_usd_per_hour / c.w.pools[b].gpus_per_node();
    });
  }
  return order;
}

}  // namespace

double Autoscaler::scale_up(double now) {
  double wake = launch_to_minimum(now);
  c_.clear_nominations();
  if (!loop_.autoscale || queue_.empty())
    return wake;
  auto demand = capacity();
  plan_launches(demand, now, wake);
  launch_planned(demand, now, wake);
  return wake;
}

// Pools below their minimum launch regardless of caps (Ray min_workers, CA min size).
double Autoscaler::launch_to_minimum(double now) {
  double wake = kInf;
  for (std::size_t p = 0; p < c_.pools.size(); ++p) {
    int target = loop_.autoscale ? c_.w.pools[p].min_nodes : c_.w.pools[p].max_nodes;
    if (c_.w.pools[p].available_nodes >= 0)
      target = std::min(target, c_.w.pools[p].available_nodes);
    const int need = target - c_.count(static_cast<int>(p), true);
    for (int k = 0; k < need; ++k) {
      if (now < c_.pools[p].backoff_until) {
        wake = std::min(wake, c_.pools[p].backoff_until);
        break;
      }
      if (!actions_.launch(static_cast<int>(p)))
        break;
    }
  }
  return wake;
}

// Capacity the queue can count on: free GPUs of ready nodes and whole booting nodes.
std::vector<Autoscaler::PoolDemand> Autoscaler::capacity() const {
  std::vector<PoolDemand> demand(c_.pools.size());
  for (std::size_t p = 0; p < c_.pools.size(); ++p) {
    auto& d = demand[p];
    for (int id : c_.pools[p].nodes) {
      const Node& n = c_.node(id);
      if (n.state == NodeState::kReady) {
        d.free.push_back(n.free_gpus);
        d.ids.push_back(id);
        ++d.running;
      } else if (n.state == NodeState::kBooting) {
        d.free.push_back(c_.w.pools[p].gpus_per_node());
        d.ids.push_back(id);
        ++d.pending;
      }
    }
  }
  return demand;
}

// Packs the queue onto the capacity in queue order; what does not fit becomes node launches.
// The ready nodes the pending jobs are packed onto are nominated: scale-down leaves them alone
// (CA's re-placement simulation, Ray's demand packing, Karpenter's nominated nodes).
void Autoscaler::plan_launches(std::vector<PoolDemand>& demand, double now, double& wake) {
  const auto order = expander_order(c_, loop_.expander);
  int room_left = 0;
  for (std::size_t p = 0; p < c_.pools.size(); ++p)
    room_left += c_.off_slots(static_cast<int>(p));
  for (const auto& entry : queue_) {
    const Job& job = c_.job(std::get<2>(entry));
    if (room_left <= 0)
      break;  // every pool is at its maximum: nothing more to launch
    if (job.queued_at + loop_.demand_delay_s > now) {
      wake = std::min(wake, job.queued_at + loop_.demand_delay_s);
      continue;
    }
    bool covered = false;
    for (std::size_t p = 0; p < c_.pools.size() && !covered; ++p) {
      const auto s = sizes(c_, job, static_cast<int>(p));
      if (!s.empty())
        covered =
            pack(demand[p].free, s.front(), c_.w.pools[p].gpus_per_node(), &demand[p].ids, c_);
    }
    if (!covered)
      room_left -= plan_new_nodes(job, demand, order, now, wake);
  }
}

// Plans the job onto the first pool in expander order with room for it. Returns the nodes
// planned for it (none when it shares a node planned earlier in the pass).
int Autoscaler::plan_new_nodes(const Job& job, std::vector<PoolDemand>& demand,
                               const std::vector<std::size_t>& order, double now, double& wake) {
  for (std::size_t p : order) {
    const auto s = sizes(c_, job, static_cast<int>(p));
    if (s.empty())
      continue;
    auto& d = demand[p];
    const int gpn = c_.w.pools[p].gpus_per_node();
    if (now < c_.pools[p].backoff_until) {
      wake = std::min(wake, c_.pools[p].backoff_until);
      continue;
    }
    if (pack(d.fresh, s.front(), gpn, nullptr, c_))
      return 0;
    int nodes_needed = (s.front() + gpn - 1) / gpn;
    // A gang job counts the whole free nodes it already has (ready or booting) and asks
    // only for the rest, as CA's binpacking estimator does; those nodes are nominated.
    std::vector<std::size_t> have;
    if (s.front() > gpn) {
      for (std::size_t k = 0; k < d.free.size() && static_cast<int>(have.size()) < nodes_needed;
           ++k) {
        if (d.free[k] == gpn)
          have.push_back(k);
      }
    }
    int room = c_.off_slots(static_cast<int>(p)) - d.launches;
    if (loop_.zero_delay && c_.w.pools[p].available_nodes >= 0) {
      // The oracle knows the market's capacity; real loops find out through ICE.
      room = std::min(
          room, c_.w.pools[p].available_nodes - c_.count(static_cast<int>(p), true) - d.launches);
    }
    if (room < nodes_needed - static_cast<int>(have.size()))
      continue;
    for (std::size_t k : have) {
      d.free[k] = 0;
      c_.nominate(d.ids[k]);
    }
    nodes_needed -= static_cast<int>(have.size());
    if (s.front() <= gpn) {
      d.fresh.push_back(gpn);
      (void)pack(d.fresh, s.front(), gpn, nullptr, c_);
    }
    d.launches += nodes_needed;
    return nodes_needed;
  }
  return 0;
}

// Applies the rate caps to the planned launches, then launches.
void Autoscaler::launch_planned(std::vector<PoolDemand>& demand, double now, double& wake) {
  const int allowance = resume_allowance(now);
  int launched_this_tick = 0;
  for (std::size_t p = 0; p < c_.pools.size(); ++p) {
    const auto& d = demand[p];
    int want = d.launches;
    if (loop_.upscaling_speed > 0) {
      // Ray: allowed pending = max(UPSCALING_INITIAL_NUM_NODES, speed * max(running, 1)).
      const int allowed =
          std::max(loop_.upscaling_floor,
                   static_cast<int>(std::floor(loop_.upscaling_speed * std::max(d.running, 1))));
      want = std::min(want, std::max(0, allowed - d.pending));
    }
    if (loop_.conservative)
      want = std::min(want, std::max(0, std::max(d.running, 1) - d.pending));
    if (loop_.max_pending > 0)
      want = std::min(want, std::max(0, loop_.max_pending - d.pending));
    if (loop_.resume_rate_per_min > 0)
      want = std::min(want, allowance - launched_this_tick);
    if (want < d.launches)
      wake = std::min(wake, now + loop_.tick_s);
    for (int k = 0; k < want; ++k) {
      if (!actions_.launch(static_cast<int>(p))) {
        wake = std::min(wake, now + loop_.tick_s);
        break;
      }
      ++launched_this_tick;
    }
  }
  resume_count_ += launched_this_tick;
}

// Slurm's ResumeRate (slurmctld power_save.c): a launch counter that each power-save scan
// scales by (60 - dt) / 60 (zeroes if dt >= 60 s); nodes resume while its rounded value is
// below the rate, so a burst of ResumeRate nodes, then about ResumeRate per minute. The
// engine skips idle scans, so the decay of each one is applied for the time that passed.
int Autoscaler::resume_allowance(double now) {
  if (loop_.resume_rate_per_min <= 0)
    return std::numeric_limits<int>::max();
  const double dt = now - last_resume_scan_;
  last_resume_scan_ = now;
  if (dt >= 60.0 || loop_.tick_s >= 60.0)
    resume_count_ = 0.0;
  else
    resume_count_ *= std::pow((60.0 - loop_.tick_s) / 60.0, dt / loop_.tick_s);
  const double rounded = std::floor(resume_count_ + 0.5);
  return std::max(0, static_cast<int>(std::ceil(loop_.resume_rate_per_min - rounded)));
}

double Autoscaler::scale_down(double now) {
  if (loop_.scale_down == ScaleDownPredicate::kNever)
    return kInf;
  const double cooldown =
      std::max({last_add_ + loop_.delay_after_add_s, last_delete_ + loop_.delay_after_delete_s,
                last_failure_ + loop_.delay_after_failure_s});
  int total = 0, disrupting = 0;
  for (const auto& n : c_.nodes) {
    if (n.state == NodeState::kBooting || n.state == NodeState::kReady)
      ++total;
    if (n.state == NodeState::kDraining && n.reason == OffReason::kScaleDown)
      ++disrupting;
  }
  const int budget = loop_.budget_fraction >= 1.0
                         ? std::numeric_limits<int>::max()
                         : static_cast<int>(std::ceil(loop_.budget_fraction * total)) - disrupting;
  DownPass pass{now, cooldown, budget};
  for (std::size_t p = 0; p < c_.pools.size(); ++p)
    scale_down_pool(static_cast<int>(p), pass);
  return pass.wake;
}

void Autoscaler::scale_down_pool(int pool, DownPass& pass) {
  FreeGpuIndex free(c_, pool);
  int on = c_.count(pool, false);
  const std::vector<int>& nodes = c_.pool(pool).nodes;
  for (std::size_t slot = 0; slot < nodes.size(); ++slot) {
    const int id = nodes[slot];
    Node& n = c_.node(id);
    if (n.state != NodeState::kReady)
      continue;
    if (!unneeded(id, slot, free) || n.nominated) {
      n.unneeded_since = -1.0;
      continue;
    }
    if (n.unneeded_since < 0)
      n.unneeded_since = pass.now;
    const double due = std::max(n.unneeded_since + loop_.dwell_s, pass.cooldown);
    if (due > pass.now + kEps) {
      pass.wake = std::min(pass.wake, due);
      continue;
    }
    if (on <= c_.spec(pool).min_nodes)
      continue;
    if (pass.budget <= 0 ||
        (loop_.max_delete_per_tick > 0 && pass.deleted >= loop_.max_delete_per_tick)) {
      pass.wake = std::min(pass.wake, pass.now + loop_.tick_s);
      continue;
    }
    if (!n.jobs.empty() && !replaceable(id, slot, free))
      continue;
    actions_.scale_down(id);
    free.retire(slot);
    --on;
    ++pass.deleted;
    if (!n.jobs.empty())
      --pass.budget;
  }
}

// An empty node is unneeded; a busy one only under the utilisation predicate, when its jobs
// fit elsewhere. Moving running jobs only pays when nothing waits: with pending jobs the
// scheduling simulation of CA and Karpenter would need new nodes for them anyway.
bool Autoscaler::unneeded(int id, std::size_t slot, FreeGpuIndex& free) const {
  const Node& n = c_.node(id);
  if (n.jobs.empty())
    return true;
  if (loop_.scale_down != ScaleDownPredicate::kUnderutilized || !queue_.empty())
    return false;
  const int gpn = c_.spec(n.pool).gpus_per_node();
  const double util = static_cast<double>(gpn - n.free_gpus) / gpn;
  if (util >= loop_.utilization_threshold)
    return false;
  const std::size_t mark = free.mark();
  const bool fits = replaceable(id, slot, free);
  free.rollback(mark);
  return fits;
}

// Can every job on node `id` (pool slot `slot`) be re-placed on other ready nodes of its pool,
// each on the best fit (the fewest free GPUs that hold it)? On success `free` holds the pool's
// free GPUs after the moves; on failure it is as it was.
bool Autoscaler::replaceable(int id, std::size_t slot, FreeGpuIndex& free) const {
  const Node& n = c_.node(id);
  const std::size_t mark = free.mark();
  free.set(slot, 0);
  const int gpn = c_.spec(n.pool).gpus_per_node();
  for (int j : n.jobs) {
    const Job& job = c_.job(j);
    const long best = job.gpus > gpn || job.pieces.size() != 1  // gang jobs stay put
                          ? -1
                          : free.best_fit(job.gpus, slot);
    if (best < 0) {
      free.rollback(mark);
      return false;
    }
    const auto k = static_cast<std::size_t>(best);
    free.set(k, free.free_gpus(k) - job.gpus);
  }
  return true;
}

void Autoscaler::back_off(int pool, double now) {
  auto& pr = c_.pool(pool);
  if (now - pr.last_failure > loop_.backoff_reset_s && loop_.backoff_reset_s > 0)
    pr.backoff_s = 0.0;
  pr.last_failure = now;
  last_failure_ = now;
  if (loop_.backoff_initial_s <= 0)
    return;
  pr.backoff_s =
      pr.backoff_s <= 0 ? loop_.backoff_initial_s : std::min(2 * pr.backoff_s, loop_.backoff_max_s);
  pr.backoff_until = now + pr.backoff_s;
}

void Autoscaler::note_ready(int pool, double now) {
  auto& pr = c_.pool(pool);
  if (loop_.backoff_reset_s > 0 && now - pr.last_failure > loop_.backoff_reset_s)
    pr.backoff_s = 0.0;
}

}  // namespace capsim::whatif::detail
