// The what-if engine on SimGrid. Nodes are hosts, turned on at launch and off at failure, spot
// kill or scale-down; a job attempt is an actor on its first node that sleeps through its
// phases (restart, compute to the next checkpoint, save), at the rate of its allocation. One
// control-loop actor runs the scheduler (event-driven), the autoscaler loop (on its tick grid)
// and the timed node events; it interrupts the actors of jobs whose nodes go away.
// Execs are deliberately not used for job progress: SimGrid 3.32 connects every Exec to the
// global Host::on_state_change signal and never disconnects it, so each host toggle would cost
// O(execs ever created) (measured: 14.7 s instead of ~1 s on the 10k-job benchmark).
// The decisions live in detail/ (placement, scheduler, autoscaler, GPU ledger, summary); this
// file owns what touches SimGrid: hosts, actors, the clock, and the random node events. The
// order of SimGrid calls relative to state changes matters: each is a point where other actors
// may run.
#include "whatif/engine.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <simgrid/s4u.hpp>

#include "whatif/detail/autoscaler.hpp"
#include "whatif/detail/cluster.hpp"
#include "whatif/detail/gpu_ledger.hpp"
#include "whatif/detail/job_queue.hpp"
#include "whatif/detail/placement.hpp"
#include "whatif/detail/scheduler.hpp"
#include "whatif/detail/summary.hpp"

namespace capsim::whatif {
namespace {

namespace sg4 = simgrid::s4u;
using namespace detail;  // NOLINT(google-build-using-namespace): the engine's own internals

constexpr double kMonthS = 30.0 * 86400.0;
constexpr double kCorrelationWindowS = 180.0;  // >92 % of co-interruptions within 3 min
constexpr int kCorrelated = -2;  // TimedEvent::job of a spot notice caused by another one

enum class EventType {
  kReady,
  kTimeout,
  kFailure,
  kSpotNotice,
  kKill,
  kShutdownDone,
  kRepaired,
  kExpire,
  kJobRecovered
};

struct TimedEvent {
  double t;
  std::uint64_t seq;
  EventType type;
  int node;
  std::uint64_t gen;
  int job = -1;
  bool operator>(const TimedEvent& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
};

double now() {
  return sg4::Engine::get_clock();
}

std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) {
  // SplitMix64 finaliser (Steele et al., OOPSLA'14) decorrelates the per-purpose streams.
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class Simulation final : private NodeActions {
 public:
  Simulation(const WhatIf& w, const PolicySpec& p, std::uint64_t seed)
      : w_(w),
        loop_(p.loop),
        rng_prov_(mix(seed, 1)),
        rng_fail_(mix(seed, 2)),
        rng_spot_(mix(seed, 3)),
        rng_repair_(mix(seed, 4)),
        cluster_(w),
        autoscaler_(cluster_, queue_, loop_, *this) {
    result_.name = p.name;
    result_.preset = p.preset;
    result_.seed = seed;
    result_.timeline.name = p.name;
    result_.jobs_total = static_cast<int>(w.jobs.size());
    double last_submit = 0.0;
    for (const auto& j : w.jobs)
      last_submit = std::max(last_submit, j.submit_s);
    horizon_ = w.horizon_s > 0 ? w.horizon_s : last_submit + 365 * 86400.0;
    cluster_.jobs.resize(w.jobs.size());
    actors_.resize(w.jobs.size());
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
      auto& j = cluster_.jobs[i];
      j.rec = &w.jobs[i];
      j.remaining = j.saved_remaining = work_of(*j.rec);
    }
  }

  // Creates one host per node slot of every pool (all off) and the control-plane host.
  void build_platform() {
    auto* zone = sg4::create_star_zone("cluster");
    cluster_.pools.resize(w_.pools.size());
    for (std::size_t p = 0; p < w_.pools.size(); ++p) {
      for (int i = 0; i < w_.pools[p].max_nodes; ++i) {
        Node n;
        n.pool = static_cast<int>(p);
        hosts_.push_back(zone->create_host(w_.pools[p].name + "-" + std::to_string(i), 1.0)
                             ->set_core_count(w_.pools[p].gpus_per_node())
                             ->seal());
        cluster_.pools[p].nodes.push_back(static_cast<int>(cluster_.nodes.size()));
        cluster_.nodes.push_back(std::move(n));
      }
    }
    ctrl_ = zone->create_host("control-plane", 1.0)->seal();
    zone->seal();
    wake_ = sg4::Semaphore::create(0);
  }

  void start() {
    sg4::Actor::create("control-loop", ctrl_, [this] { control_loop(); });
  }

  PolicyResult finish_result() const {
    return summarize(result_, cluster_, ledger_, end_time_, finished_);
  }

 private:
  sg4::Host* host(int node) const { return hosts_[static_cast<std::size_t>(node)]; }

  void push(double t, EventType type, int node) {
    events_.push({t, seq_++, type, node, node >= 0 ? cluster_.node(node).gen : 0});
  }

  void notify() { wake_->release(); }

  // Records a state change for the control loop. Never yields: a simcall here would let other
  // actors run in the middle of a job's bookkeeping. Job actors call notify() before blocking.
  void changed() { tick_wanted_ = std::min(tick_wanted_, now()); }

  void release(int j) {
    ledger_.count_held(cluster_, cluster_.job(j), now());
    release_pieces(cluster_, j);
    changed();
  }

  void enqueue(int j) {
    Job& job = cluster_.job(j);
    job.state = JobState::kQueued;
    job.queued_at = now();
    queue_.add(j, job);
    changed();
  }

  [[nodiscard]] double checkpoint_interval(const Job& job) const {
    const auto& f = w_.failures;
    if (f.young_daly) {
      // Young (CACM 1974): tau = sqrt(2 * C * M), M = the job's MTBF = GPU MTBF / GPUs.
      return std::max(kMinCheckpointIntervalS,
                      std::sqrt(2.0 * f.checkpoint_cost_s * f.gpu_mtbf_s / job.gpus));
    }
    return f.checkpoint_interval_s;
  }

  // ---- job actors ---------------------------------------------------------------------------

  void start_job(int j) {
    actors_[static_cast<std::size_t>(j)] = sg4::Actor::create(
        "job", host(cluster_.job(j).pieces.front().node), [this, j] { job_actor(j); });
  }

  // The job's actor lives on its first node and sleeps through each phase (restart, compute
  // until the next checkpoint or the end, checkpoint save); the phase start and rate are kept
  // so that an interruption can account for exactly the work done so far.
  void job_actor(int j) {
    Job& job = cluster_.job(j);
    const auto& f = w_.failures;
    bool restart = job.attempts > 1 || job.resized;
    job.computed_since_ckpt_s = 0.0;
    const std::uint64_t epoch = job.epoch;
    // An interruption bumps the epoch; if this actor gets to run again before its kill lands,
    // it must not touch the job.
    auto gone = [&] { return job.epoch != epoch; };
    for (;;) {
      if (restart && f.restart_cost_s > 0) {
        enter(job, Phase::kRestart, 0.0);
        sg4::this_actor::sleep_for(f.restart_cost_s);
        if (gone())
          return;
        ledger_.count_restart(f.restart_cost_s, job.gpus);
      }
      restart = false;
      const double r = rate(job);
      const double to_done = job.remaining / r;
      const double tau = checkpoint_interval(job);
      const bool last = to_done <= tau;
      const double seg = last ? to_done : tau;
      enter(job, Phase::kCompute, r);
      sg4::this_actor::sleep_for(seg);
      if (gone())
        return;
      job.computed_since_ckpt_s += seg;
      if (last) {
        job.remaining = 0.0;
        finish_job(j);
        return;
      }
      job.remaining -= seg * r;
      if (f.checkpoint_cost_s > 0) {
        enter(job, Phase::kCheckpoint, 0.0);
        sg4::this_actor::sleep_for(f.checkpoint_cost_s);
        if (gone())
          return;
        ledger_.count_checkpoint(f.checkpoint_cost_s, job.gpus);
      }
      job.saved_remaining = job.remaining;
      job.computed_since_ckpt_s = 0.0;
      if (job.rec->is_elastic() && resize_at_checkpoint(j)) {
        restart = true;
        notify();
        sg4::this_actor::set_host(host(job.pieces.front().node));
      }
    }
  }

  static void enter(Job& job, Phase phase, double rate) {
    job.phase = phase;
    job.phase_start = now();
    job.phase_rate = rate;
  }

  // Elastic jobs resize at checkpoints: shrink to the minimum when others wait, grow into
  // free GPUs of the pool when nobody waits (Pollux-style, without its goodput model).
  bool resize_at_checkpoint(int j) {
    Job& job = cluster_.job(j);
    std::vector<Piece> place;
    if (!find_resize(cluster_, job, !queue_.empty(), place))
      return false;
    const int pool = job.pool;
    release(j);
    take(cluster_, j, pool, place, now());
    job.resized = true;
    ++result_.job_resizes;
    return true;
  }

  void finish_job(int j) {
    Job& job = cluster_.job(j);
    actors_[static_cast<std::size_t>(j)] = nullptr;
    release(j);
    job.state = JobState::kDone;
    job.end = now();
    ++finished_;
    notify();
  }

  // A node under a running job goes away: stop the job's actor, account for the phase it was
  // in, and requeue it from its last checkpoint (or from an emergency checkpoint saved inside
  // the notice). After a failure the job holds its other nodes until it notices (detect_s).
  void interrupt(int j, OffReason why, double notice_s) {
    Job& job = cluster_.job(j);
    if (job.state != JobState::kRunning || job.recovering)
      return;
    ++job.epoch;
    auto& actor = actors_[static_cast<std::size_t>(j)];
    if (actor) {
      actor->kill();
      actor = nullptr;
    }
    ledger_.settle_interruption(job, why, notice_s, w_.failures, now());
    ++result_.job_restarts;
    if (why == OffReason::kFailure) {
      events_.push({now() + w_.failures.detect_s, seq_++, EventType::kJobRecovered, -1, 0, j});
      return;
    }
    release(j);
    enqueue(j);
  }

  void interrupt_all(int id) {
    Node& n = cluster_.node(id);
    const std::vector<int> victims = n.jobs;
    for (int j : victims)
      interrupt(j, n.reason, n.reason == OffReason::kFailure ? 0.0 : n.notice_s);
  }

  // ---- node lifecycle -----------------------------------------------------------------------

  bool launch(int pool) override { return launch_node(pool, false); }

  void scale_down(int id) override {
    ++result_.scale_downs;
    remove_node(id, OffReason::kScaleDown, w_.failures.checkpoint_cost_s);
  }

  void launch_failed(int pool) {
    ++result_.launch_failures;
    autoscaler_.back_off(pool, now());
  }

  // Launches one node of a pool; false on insufficient capacity (the pool backs off). An
  // `instant` node is one the cluster starts with: ready at once, never counted as a scale-up.
  bool launch_node(int pool, bool instant) {
    const auto& spec = cluster_.spec(pool);
    const int id = cluster_.off_slot(pool);
    if (id < 0)
      return false;
    Node& n = cluster_.node(id);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double draw = u(rng_prov_);
    const double delay = spec.boot.sample(rng_prov_) + spec.image_pull.sample(rng_prov_) +
                         spec.init.sample(rng_prov_);
    // The market's capacity limits even the nodes a static cluster starts with.
    if (spec.available_nodes >= 0 && cluster_.count(pool, true) >= spec.available_nodes) {
      if (!instant)
        launch_failed(pool);
      return false;
    }
    if (!instant && !loop_.zero_delay && draw < spec.ice_probability) {
      launch_failed(pool);
      return false;
    }
    ++n.gen;
    host(id)->turn_on();
    n.state = NodeState::kBooting;
    n.reason = OffReason::kNone;
    n.free_gpus = 0;
    n.jobs.clear();
    n.unneeded_since = -1.0;
    const double start = now() + (instant ? 0.0 : loop_.actuation_delay_s);
    n.billed_since = start;
    if (instant) {
      become_ready(id);
      return true;
    }
    ++result_.scale_ups;
    autoscaler_.note_launch(now());
    if (loop_.zero_delay) {
      push(now(), EventType::kReady, id);
    } else if (loop_.provision_timeout_s > 0 && delay > loop_.provision_timeout_s) {
      push(start + loop_.provision_timeout_s, EventType::kTimeout, id);
    } else {
      push(start + delay, EventType::kReady, id);
    }
    return true;
  }

  void become_ready(int id) {
    Node& n = cluster_.node(id);
    const auto& spec = cluster_.spec(n.pool);
    n.state = NodeState::kReady;
    n.ready_at = now();
    n.free_gpus = spec.gpus_per_node();
    autoscaler_.note_ready(n.pool, now());
    if (w_.failures.gpu_mtbf_s > 0) {
      std::exponential_distribution<double> ttf(spec.gpus_per_node() / w_.failures.gpu_mtbf_s);
      push(now() + ttf(rng_fail_), EventType::kFailure, id);
    }
    if (spec.pricing == Pricing::kSpot && spec.interruptions_per_node_month > 0) {
      std::exponential_distribution<double> tti(spec.interruptions_per_node_month / kMonthS);
      push(now() + tti(rng_spot_), EventType::kSpotNotice, id);
    }
    if (loop_.expire_after_s > 0)
      push(n.billed_since + loop_.expire_after_s, EventType::kExpire, id);
    changed();
  }

  void stop_billing(const Node& n) { cluster_.pool(n.pool).billed_s += now() - n.billed_since; }

  // Stops billing and powers the host off; the jobs on it are interrupted.
  void power_off(int id, OffReason why, NodeState next) {
    Node& n = cluster_.node(id);
    n.reason = why;
    interrupt_all(id);
    ledger_.count_node_lost(cluster_, id, now());
    if (n.state != NodeState::kShutdown)
      stop_billing(n);
    n.state = next;
    ++n.gen;
    n.free_gpus = 0;
    if (host(id)->is_on())
      host(id)->turn_off();
    changed();
  }

  // Voluntary or forced removal: empty nodes shut down at once, busy ones are cordoned and
  // killed after a checkpoint's worth of grace.
  void remove_node(int id, OffReason why, double grace_s) {
    Node& n = cluster_.node(id);
    n.reason = why;
    n.notice_s = grace_s;
    if (n.jobs.empty()) {
      shutdown(id);
    } else {
      n.state = NodeState::kDraining;
      push(now() + grace_s, EventType::kKill, id);
    }
    autoscaler_.note_removal(now());
  }

  // Powers the host off but keeps billing until the termination completes (kShutdownDone).
  void shutdown(int id) {
    Node& n = cluster_.node(id);
    const OffReason why = n.reason;
    interrupt_all(id);
    ledger_.count_node_lost(cluster_, id, now());
    ++n.gen;
    n.state = NodeState::kShutdown;
    n.free_gpus = 0;
    n.reason = why;
    if (host(id)->is_on())
      host(id)->turn_off();
    push(now() + loop_.termination_s, EventType::kShutdownDone, id);
    changed();
  }

  // ---- timed events -------------------------------------------------------------------------

  void handle(const TimedEvent& ev) {
    if (ev.type == EventType::kJobRecovered) {
      release(ev.job);
      cluster_.job(ev.job).recovering = false;
      enqueue(ev.job);
      return;
    }
    Node& n = cluster_.node(ev.node);
    if (ev.gen != n.gen)
      return;
    switch (ev.type) {
      case EventType::kReady:
        if (n.state == NodeState::kBooting)
          become_ready(ev.node);
        break;
      case EventType::kTimeout:
        ++result_.provision_timeouts;
        power_off(ev.node, OffReason::kNone, NodeState::kOff);
        autoscaler_.back_off(n.pool, now());
        break;
      case EventType::kFailure:
        on_failure(ev.node);
        break;
      case EventType::kRepaired:
        if (n.state == NodeState::kFailed) {
          n.state = NodeState::kOff;
          changed();
        }
        break;
      case EventType::kSpotNotice:
        on_spot_notice(ev.node, ev.job == kCorrelated);
        break;
      case EventType::kKill:
        on_kill(ev.node);
        break;
      case EventType::kShutdownDone:
        if (n.state == NodeState::kShutdown) {
          stop_billing(n);
          n.state = NodeState::kOff;
          changed();
        }
        break;
      case EventType::kJobRecovered:
        break;  // handled above
      case EventType::kExpire:
        if (n.state == NodeState::kReady)
          scale_down(ev.node);
        break;
    }
  }

  void on_failure(int id) {
    Node& n = cluster_.node(id);
    if (n.state != NodeState::kReady && n.state != NodeState::kDraining)
      return;
    ++result_.node_failures;
    power_off(id, OffReason::kFailure, NodeState::kFailed);
    events_.push(
        {now() + w_.failures.repair.sample(rng_repair_), seq_++, EventType::kRepaired, id, n.gen});
  }

  void on_spot_notice(int id, bool correlated) {
    Node& n = cluster_.node(id);
    const auto& spec = cluster_.spec(n.pool);
    if (n.state != NodeState::kReady)
      return;
    ++result_.spot_interruptions;
    n.reason = OffReason::kSpot;
    n.notice_s = spec.notice_s;
    n.state = NodeState::kDraining;
    push(now() + spec.notice_s, EventType::kKill, id);
    if (loop_.replace_on_notice && !n.jobs.empty())
      (void)launch_node(n.pool, false);
    // Correlated interruptions: the same market pulls other spot nodes within minutes. Only
    // an independent trigger spreads (no cascades of cascades).
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int other : cluster_.pool(n.pool).nodes) {
      if (other == id || correlated)
        continue;
      if (cluster_.node(other).state != NodeState::kReady)
        continue;
      const double draw = u(rng_spot_);
      const double when = u(rng_spot_) * kCorrelationWindowS;
      if (draw < spec.interruption_correlation) {
        events_.push({now() + when, seq_++, EventType::kSpotNotice, other, cluster_.node(other).gen,
                      kCorrelated});
      }
    }
    changed();
  }

  void on_kill(int id) {
    Node& n = cluster_.node(id);
    if (n.state != NodeState::kDraining)
      return;
    if (n.reason == OffReason::kSpot)
      power_off(id, OffReason::kSpot, NodeState::kOff);
    else
      shutdown(id);  // billed until kShutdownDone
  }

  // ---- the control loop ---------------------------------------------------------------------

  void schedule() {
    detail::schedule(cluster_, queue_, now(), [this](int j) { start_job(j); });
  }

  // Pools start at their minimum (static: maximum), already running.
  void start_pools() {
    for (std::size_t p = 0; p < cluster_.pools.size(); ++p) {
      const int n0 = loop_.autoscale ? w_.pools[p].min_nodes : w_.pools[p].max_nodes;
      for (int k = 0; k < n0; ++k)
        (void)launch_node(static_cast<int>(p), true);
    }
  }

  void control_loop() {
    start_pools();
    std::size_t next_job = 0;
    double next_sample = 0.0;
    double next_tick = 0.0;
    double last_tick = -kInf;
    for (;;) {
      const double t = now();
      while (!events_.empty() && events_.top().t <= t + kEps) {
        const TimedEvent ev = events_.top();
        events_.pop();
        handle(ev);
      }
      while (next_job < cluster_.jobs.size() && cluster_.jobs[next_job].rec->submit_s <= t + kEps)
        enqueue(static_cast<int>(next_job++));
      schedule();
      if (t + kEps >= next_tick) {
        tick_wanted_ = kInf;
        const double a = autoscaler_.scale_up(now());
        const double b = autoscaler_.scale_down(now());
        schedule();
        tick_wanted_ = std::min({tick_wanted_, a, b});
        last_tick = t;
      }
      next_tick = kInf;
      if (tick_wanted_ < kInf) {
        // Decisions happen on the loop's tick grid, at most once per period.
        const double want = std::max(tick_wanted_, last_tick + loop_.tick_s);
        next_tick = std::ceil(want / loop_.tick_s - 1e-9) * loop_.tick_s;
      }
      if (t + kEps >= next_sample) {
        sample();
        next_sample += w_.timeline_interval_s;
      }
      if (finished_ == static_cast<int>(cluster_.jobs.size()) || t >= horizon_)
        break;
      double wake = std::min({next_tick, next_sample, horizon_});
      if (!events_.empty())
        wake = std::min(wake, events_.top().t);
      if (next_job < cluster_.jobs.size())
        wake = std::min(wake, cluster_.jobs[next_job].rec->submit_s);
      if (wake > t + kEps)
        (void)wake_->acquire_timeout(wake - t);
      while (!wake_->would_block())
        wake_->acquire();
    }
    end_run();
  }

  void sample() {
    record_sample(result_.timeline, cluster_, static_cast<int>(queue_.size()), now());
  }

  // Bills the nodes still up and counts the jobs still running, up to the end of the run.
  void end_run() {
    end_time_ = now();
    sample();
    for (std::size_t i = 0; i < cluster_.nodes.size(); ++i) {
      Node& n = cluster_.nodes[i];
      if (n.state == NodeState::kBooting || n.state == NodeState::kReady ||
          n.state == NodeState::kDraining || n.state == NodeState::kShutdown) {
        cluster_.pool(n.pool).billed_s += end_time_ - n.billed_since;
        n.state = NodeState::kOff;
      }
      if (hosts_[i]->is_on())
        hosts_[i]->turn_off();
    }
    for (const auto& j : cluster_.jobs) {
      if (j.state == JobState::kRunning)
        ledger_.count_held(cluster_, j, end_time_);
    }
  }

  const WhatIf& w_;
  ControlLoop loop_;
  std::mt19937_64 rng_prov_, rng_fail_, rng_spot_, rng_repair_;
  Cluster cluster_;
  JobQueue queue_;
  GpuLedger ledger_;
  Autoscaler autoscaler_;
  std::vector<sg4::Host*> hosts_;      // by node
  std::vector<sg4::ActorPtr> actors_;  // by job: the running attempt's actor
  std::priority_queue<TimedEvent, std::vector<TimedEvent>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  sg4::Host* ctrl_ = nullptr;
  sg4::SemaphorePtr wake_;
  double horizon_ = 0.0;
  double end_time_ = 0.0;
  double tick_wanted_ = 0.0;
  int finished_ = 0;
  PolicyResult result_;
};

}  // namespace

PolicyResult run_policy(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed) {
  int argc = 3;
  std::string a0 = "capsim-whatif", a1 = "--log=root.thres:critical",
              a2 = "--cfg=contexts/stack-size:256";
  std::array<char*, 4> argv{a0.data(), a1.data(), a2.data(), nullptr};
  sg4::Engine engine(&argc, argv.data());
  Simulation sim(whatif, policy, seed);
  sim.build_platform();
  sim.start();
  engine.run();
  return sim.finish_result();
}

}  // namespace capsim::whatif
