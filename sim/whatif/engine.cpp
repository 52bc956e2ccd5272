// The what-if engine on SimGrid. Nodes are hosts, turned on at launch and off at failure, spot
// kill or scale-down; a job attempt is an actor on its first node that sleeps through its
// phases (restart, compute to the next checkpoint, save), at the rate of its allocation. One
// control-loop actor runs the scheduler (event-driven), the autoscaler loop (on its tick grid)
// and the timed node events; it interrupts the actors of jobs whose nodes go away.
// Execs are deliberately not used for job progress: SimGrid 3.32 connects every Exec to the
// global Host::on_state_change signal and never disconnects it, so each host toggle would cost
// O(execs ever created) (measured: 14.7 s instead of ~1 s on the 10k-job benchmark).
#include "sim/whatif/engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include <simgrid/s4u.hpp>

#include <xbt/log.h>

namespace capsim::whatif {
namespace {

namespace sg4 = simgrid::s4u;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMonth_s = 30.0 * 86400.0;
constexpr double kCorrelationWindow_s = 180.0;  // >92 % of co-interruptions within 3 min
constexpr double kEps = 1e-9;
// A timeline keeps at most this many samples per run (a year at 30 s); later ones are dropped
// (docs/whatif.md), so a fine interval over a long trace cannot exhaust memory.
constexpr std::size_t kMaxTimelineSamples = 1'000'000;
constexpr int kCorrelated = -2;  // Event::job of a spot notice caused by another one

enum class NodeState { kOff, kBooting, kReady, kDraining, kShutdown, kFailed };
enum class OffReason { kNone, kFailure, kSpot, kScaleDown };

struct Node {
  int pool = 0;
  sg4::Host* host = nullptr;
  NodeState state = NodeState::kOff;
  OffReason reason = OffReason::kNone;
  std::uint64_t gen = 0;  // bumped at every launch and power-off; stale events are ignored
  int free_gpus = 0;
  std::vector<int> jobs;  // job indices holding GPUs here
  double billed_since = 0.0;
  double ready_at = 0.0;
  double unneeded_since = -1.0;
  double notice_s = 0.0;  // warning the jobs got before the kill
};

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

struct Event {
  double t;
  std::uint64_t seq;
  EventType type;
  int node;
  std::uint64_t gen;
  int job = -1;
  bool operator>(const Event& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
};

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
  sg4::ActorPtr actor;
  Phase phase = Phase::kCompute;
  double phase_start = 0.0;
  double phase_rate = 0.0;
  double computed_since_ckpt_s = 0.0;
  bool recovering = false;  // failed, holding its other nodes until it notices
  double failed_at = 0.0;
  std::uint64_t epoch = 0;  // bumped at every interruption
};

struct PoolRuntime {
  std::vector<int> nodes;
  double backoff_until = 0.0;
  double backoff_s = 0.0;
  double last_failure = -kInf;
  double billed_s = 0.0;  // node-seconds
};

class Simulation {
 public:
  Simulation(const WhatIf& w, const PolicySpec& p, std::uint64_t seed)
      : w_(w),
        loop_(p.loop),
        rng_prov_(mix(seed, 1)),
        rng_fail_(mix(seed, 2)),
        rng_spot_(mix(seed, 3)),
        rng_repair_(mix(seed, 4)) {
    result_.name = p.name;
    result_.preset = p.preset;
    result_.seed = seed;
    result_.timeline.name = p.name;
    result_.jobs_total = static_cast<int>(w.jobs.size());
    double last_submit = 0.0;
    for (const auto& j : w.jobs)
      last_submit = std::max(last_submit, j.submit_s);
    horizon_ = w.horizon_s > 0 ? w.horizon_s : last_submit + 365 * 86400.0;
    jobs_.resize(w.jobs.size());
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
      auto& j = jobs_[i];
      j.rec = &w.jobs[i];
      j.remaining = j.saved_remaining = work_of(*j.rec);
    }
  }

  void build_platform(sg4::Engine& e) {
    auto* zone = sg4::create_star_zone("cluster");
    pools_.resize(w_.pools.size());
    for (std::size_t p = 0; p < w_.pools.size(); ++p) {
      for (int i = 0; i < w_.pools[p].max_nodes; ++i) {
        Node n;
        n.pool = static_cast<int>(p);
        n.host = zone->create_host(w_.pools[p].name + "-" + std::to_string(i), 1.0)
                     ->set_core_count(w_.pools[p].gpus_per_node())
                     ->seal();
        pools_[p].nodes.push_back(static_cast<int>(nodes_.size()));
        nodes_.push_back(std::move(n));
      }
    }
    nominated_.assign(nodes_.size(), false);
    ctrl_ = zone->create_host("control-plane", 1.0)->seal();
    zone->seal();
    (void)e;
    wake_ = sg4::Semaphore::create(0);
  }

  void start() {
    sg4::Actor::create("control-loop", ctrl_, [this] { control_loop(); });
  }

  PolicyResult finish_result();

 private:
  static std::uint64_t mix(std::uint64_t seed, std::uint64_t stream) {
    // SplitMix64 finaliser (Steele et al., OOPSLA'14) decorrelates the per-purpose streams.
    std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  double work_of(const traces::JobRecord& r) const {
    return r.scenario_path.empty() ? r.duration_s : r.tokens;
  }

  static double now() { return sg4::Engine::get_clock(); }

  void push(double t, EventType type, int node) {
    events_.push(
        {t, seq_++, type, node, node >= 0 ? nodes_[static_cast<std::size_t>(node)].gen : 0});
  }

  void notify() { wake_->release(); }

  // ---- allocation -------------------------------------------------------------------------

  [[nodiscard]] bool usable(const Node& n) const { return n.state == NodeState::kReady; }

  // Sizes a job may run at, best first: the request, then smaller admissible ones.
  std::vector<int> sizes(const Job& job, int pool) const {
    const auto& r = *job.rec;
    const int gpn = w_.pools[static_cast<std::size_t>(pool)].gpus_per_node();
    const int cap = w_.pools[static_cast<std::size_t>(pool)].max_nodes * gpn;
    std::vector<int> out;
    if (r.scenario_path.empty()) {
      if (!r.is_elastic()) {
        if (r.gpus <= cap)
          out.push_back(r.gpus);
        return out;
      }
      for (int g = std::min(r.gpus, cap); g >= r.min_gpus; --g) {
        if (g <= gpn || g % gpn == 0)
          out.push_back(g);
      }
    } else {
      const auto& rates =
          w_.scenario_models.at(r.scenario_path)
              .tokens_per_s.at(w_.pools[static_cast<std::size_t>(pool)].instance.name);
      for (auto it = rates.rbegin(); it != rates.rend(); ++it) {
        if (it->first <= r.gpus && it->first >= r.min_gpus)
          out.push_back(it->first);
      }
    }
    return out;
  }

  // Finds nodes for `gpus` GPUs in a pool: best fit on one node, or whole free nodes.
  bool find_place(int pool, int gpus, const std::vector<int>& free, std::vector<Piece>& out) const {
    const auto& nodes = pools_[static_cast<std::size_t>(pool)].nodes;
    const int gpn = w_.pools[static_cast<std::size_t>(pool)].gpus_per_node();
    out.clear();
    if (gpus <= gpn) {
      int best = -1;
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        const Node& n = nodes_[static_cast<std::size_t>(nodes[k])];
        if (!usable(n) || free[k] < gpus)
          continue;
        if (best < 0 || free[k] < free[static_cast<std::size_t>(best)])
          best = static_cast<int>(k);
      }
      if (best < 0)
        return false;
      out.push_back({nodes[static_cast<std::size_t>(best)], gpus, 0});
      return true;
    }
    int rest = gpus;
    for (std::size_t k = 0; k < nodes.size() && rest > 0; ++k) {
      const Node& n = nodes_[static_cast<std::size_t>(nodes[k])];
      if (!usable(n) || free[k] != gpn)
        continue;
      out.push_back({nodes[k], std::min(gpn, rest), 0});
      rest -= gpn;
    }
    return rest <= 0;
  }

  std::vector<int> free_vector(int pool) const {
    std::vector<int> f;
    for (int id : pools_[static_cast<std::size_t>(pool)].nodes) {
      f.push_back(nodes_[static_cast<std::size_t>(id)].free_gpus);
    }
    return f;
  }

  void take(int j, int pool, const std::vector<Piece>& pieces) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    job.pool = pool;
    job.gpus = 0;
    job.pieces.clear();
    for (auto p : pieces) {
      Node& n = nodes_[static_cast<std::size_t>(p.node)];
      n.free_gpus -= p.gpus;
      n.jobs.push_back(j);
      n.unneeded_since = -1.0;
      p.gen = n.gen;
      job.pieces.push_back(p);
      job.gpus += p.gpus;
    }
    job.alloc_since = now();
    job.rates = nullptr;
    if (!job.rec->scenario_path.empty()) {
      job.rates = &w_.scenario_models.at(job.rec->scenario_path)
                       .tokens_per_s.at(w_.pools[static_cast<std::size_t>(pool)].instance.name);
    }
  }

  void release(int j) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    for (const auto& p : job.pieces) {
      Node& n = nodes_[static_cast<std::size_t>(p.node)];
      if (n.gen != p.gen)
        continue;  // the node went away meanwhile
      n.free_gpus += p.gpus;
      n.jobs.erase(std::find(n.jobs.begin(), n.jobs.end(), j));
    }
    busy_gpu_s_ += held_gpu_s(job, now());
    lost_.failure_gpu_hours += detection_gpu_s(job, now()) / 3600.0;
    job.pieces.clear();
    job.gpus = 0;
    changed();
  }

  // GPUs the job holds on nodes still up. Pieces on a node that went away were counted when it
  // did (close_pieces_on), so a failed node is neither billed nor busy.
  [[nodiscard]] int live_gpus(const Job& job) const {
    int g = 0;
    for (const auto& p : job.pieces) {
      if (nodes_[static_cast<std::size_t>(p.node)].gen == p.gen)
        g += p.gpus;
    }
    return g;
  }

  [[nodiscard]] double held_gpu_s(const Job& job, double until) const {
    return (until - job.alloc_since) * live_gpus(job);
  }

  // GPU-seconds a failed job holds on nodes still up while it waits to notice (detect_s).
  [[nodiscard]] double detection_gpu_s(const Job& job, double until) const {
    return job.recovering ? (until - job.failed_at) * live_gpus(job) : 0.0;
  }

  // Counts the busy (and, during detection, lost) time of the pieces still held on node `id` up
  // to now, before it goes away.
  void close_pieces_on(int id) {
    const Node& n = nodes_[static_cast<std::size_t>(id)];
    for (int j : n.jobs) {
      const Job& job = jobs_[static_cast<std::size_t>(j)];
      for (const auto& p : job.pieces) {
        if (p.node != id || p.gen != n.gen)
          continue;
        busy_gpu_s_ += (now() - job.alloc_since) * p.gpus;
        if (job.recovering)
          lost_.failure_gpu_hours += (now() - job.failed_at) * p.gpus / 3600.0;
      }
    }
  }

  [[nodiscard]] double rate(const Job& job) const {
    if (job.rates != nullptr)
      return job.rates->at(job.gpus);
    return static_cast<double>(job.gpus) / job.rec->gpus;  // linear in GPUs for rigid-work jobs
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

  // The job's actor lives on its first node and sleeps through each phase (restart, compute
  // until the next checkpoint or the end, checkpoint save); the phase start and rate are kept
  // so that an interruption can account for exactly the work done so far.
  void job_actor(int j) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
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
        lost_.restart_gpu_hours += f.restart_cost_s * job.gpus / 3600.0;
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
        lost_.checkpoint_gpu_hours += f.checkpoint_cost_s * job.gpus / 3600.0;
      }
      job.saved_remaining = job.remaining;
      job.computed_since_ckpt_s = 0.0;
      if (job.rec->is_elastic() && resize_at_checkpoint(j)) {
        restart = true;
        notify();
        sg4::this_actor::set_host(nodes_[static_cast<std::size_t>(job.pieces.front().node)].host);
      }
    }
  }

  static void enter(Job& job, Phase phase, double rate) {
    job.phase = phase;
    job.phase_start = now();
    job.phase_rate = rate;
  }

  // A node under a running job goes away: stop the job's actor, account for the phase it was
  // in, and requeue it from its last checkpoint (or from an emergency checkpoint saved inside
  // the notice). After a failure the job holds its other nodes until it notices (detect_s).
  void interrupt(int j, OffReason why, double notice_s) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    if (job.state != JobState::kRunning || job.recovering)
      return;
    ++job.epoch;
    if (job.actor) {
      job.actor->kill();
      job.actor = nullptr;
    }
    const auto& f = w_.failures;
    const double g = job.gpus;
    const double dt = now() - job.phase_start;
    switch (job.phase) {
      case Phase::kRestart:
        lost_.restart_gpu_hours += dt * g / 3600.0;
        break;
      case Phase::kCheckpoint:
        lost_.checkpoint_gpu_hours += dt * g / 3600.0;
        break;
      case Phase::kCompute:
        job.computed_since_ckpt_s += dt;
        job.remaining -= dt * job.phase_rate;
        break;
    }
    ++result_.job_restarts;
    if (why == OffReason::kFailure) {
      // Detection time is counted as the job's live pieces are released (detection_gpu_s).
      lost_.failure_gpu_hours += job.computed_since_ckpt_s * g / 3600.0;
      job.remaining = job.saved_remaining;
      job.recovering = true;
      job.failed_at = now();
      events_.push({now() + f.detect_s, seq_++, EventType::kJobRecovered, -1, 0, j});
      return;
    }
    if (notice_s >= f.checkpoint_cost_s) {
      // Emergency checkpoint inside the notice: the last checkpoint_cost seconds of computing
      // went to the save instead (a save already under way simply completes).
      if (job.phase == Phase::kCompute) {
        const double save = std::min(f.checkpoint_cost_s, job.computed_since_ckpt_s);
        job.remaining += save * job.phase_rate;
        lost_.checkpoint_gpu_hours += save * g / 3600.0;
      }
      job.saved_remaining = job.remaining;
    } else {
      auto& bucket =
          why == OffReason::kSpot ? lost_.preemption_gpu_hours : lost_.disruption_gpu_hours;
      bucket += job.computed_since_ckpt_s * g / 3600.0;
      job.remaining = job.saved_remaining;
    }
    release(j);
    enqueue(j);
  }

  void interrupt_all(int id) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    const std::vector<int> victims = n.jobs;
    for (int j : victims)
      interrupt(j, n.reason, n.reason == OffReason::kFailure ? 0.0 : n.notice_s);
  }

  // Elastic jobs resize at checkpoints: shrink to the minimum when others wait, grow into
  // free GPUs of the pool when nobody waits (Pollux-style, without its goodput model).
  bool resize_at_checkpoint(int j) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    const int pool = job.pool;
    const auto options = sizes(job, pool);
    // Free GPUs of the pool plus the job's own (on nodes still usable: a cordoned node's GPUs
    // cannot be reused).
    auto free = free_vector(pool);
    const auto& nodes = pools_[static_cast<std::size_t>(pool)].nodes;
    for (const auto& p : job.pieces) {
      const auto k =
          static_cast<std::size_t>(std::find(nodes.begin(), nodes.end(), p.node) - nodes.begin());
      free[k] += p.gpus;
    }
    std::vector<int> candidates;
    if (!queue_.empty()) {
      if (!options.empty() && options.back() < job.gpus)
        candidates.push_back(options.back());
    } else {
      const auto& r = *job.rec;
      const int gpn = w_.pools[static_cast<std::size_t>(pool)].gpus_per_node();
      if (r.scenario_path.empty()) {
        for (int g = r.max_gpus; g > job.gpus; --g) {
          if (g <= gpn || g % gpn == 0)
            candidates.push_back(g);
        }
      } else {
        for (auto it = job.rates->rbegin(); it != job.rates->rend(); ++it) {
          if (it->first > job.gpus)
            candidates.push_back(it->first);
        }
      }
      // Growing pays a restart; only worth it when the job has well over that left to run.
      if (job.remaining / rate(job) < 4 * w_.failures.restart_cost_s)
        candidates.clear();
    }
    std::vector<Piece> place;
    for (int g : candidates) {
      if (!find_place(pool, g, free, place))
        continue;
      release(j);
      take(j, pool, place);
      job.resized = true;
      ++result_.job_resizes;
      return true;
    }
    return false;
  }

  void finish_job(int j) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    job.actor = nullptr;
    release(j);
    job.state = JobState::kDone;
    job.end = now();
    ++finished_;
    notify();
  }

  void enqueue(int j) {
    Job& job = jobs_[static_cast<std::size_t>(j)];
    job.state = JobState::kQueued;
    job.queued_at = now();
    queue_.insert({-job.rec->priority, job.rec->submit_s, j});
    ++queued_by_min_[job.rec->scenario_path.empty() ? job.rec->min_gpus : 1];
    changed();
  }

  // Smallest GPU count any queued job could start with (scenario jobs count as 1).
  [[nodiscard]] int queued_min_gpus() const {
    return queued_by_min_.empty() ? std::numeric_limits<int>::max() : queued_by_min_.begin()->first;
  }

  void forget_queued(const Job& job) {
    const auto it = queued_by_min_.find(job.rec->scenario_path.empty() ? job.rec->min_gpus : 1);
    if (--it->second == 0)
      queued_by_min_.erase(it);
  }

  // Records a state change for the control loop. Never yields: a simcall here would let other
  // actors run in the middle of a job's bookkeeping. Job actors call notify() before blocking.
  void changed() { tick_wanted_ = std::min(tick_wanted_, now()); }

  // ---- scheduler ----------------------------------------------------------------------------

  void schedule() {
    if (queue_.empty())
      return;
    std::vector<std::vector<int>> free(pools_.size());
    int total_free = 0;
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      free[p] = free_vector(static_cast<int>(p));
      for (std::size_t k = 0; k < free[p].size(); ++k) {
        if (usable(nodes_[static_cast<std::size_t>(pools_[p].nodes[k])]))
          total_free += free[p][k];
      }
    }
    if (total_free == 0)
      return;
    // Fits are monotone in size within a pass (free capacity only shrinks), so a job no
    // smaller than one that failed cannot fit either.
    int smallest_failed = std::numeric_limits<int>::max();
    std::vector<Piece> place;
    for (auto it = queue_.begin(); it != queue_.end();) {
      const int j = std::get<2>(*it);
      Job& job = jobs_[static_cast<std::size_t>(j)];
      const int smallest = job.rec->min_gpus;
      if (smallest >= smallest_failed && job.rec->scenario_path.empty()) {
        if (w_.queue == QueueOrder::kFifo)
          break;
        ++it;
        continue;
      }
      bool placed = false;
      // The smallest size that was tried and did not fit: an elastic job held back from its
      // smaller sizes while capacity boots says nothing about them.
      int failed_size = std::numeric_limits<int>::max();
      for (std::size_t p = 0; p < pools_.size() && !placed; ++p) {
        const auto options = sizes(job, static_cast<int>(p));
        for (int g : options) {
          // An elastic job starts below its request only when no capacity is on its way.
          if (g != options.front() && booting(static_cast<int>(p)) > 0)
            break;
          if (find_place(static_cast<int>(p), g, free[p], place)) {
            take(j, static_cast<int>(p), place);
            free[p] = free_vector(static_cast<int>(p));
            placed = true;
            break;
          }
          failed_size = std::min(failed_size, g);
        }
      }
      if (!placed) {
        if (job.rec->scenario_path.empty())
          smallest_failed = std::min(smallest_failed, failed_size);
        if (w_.queue == QueueOrder::kFifo || smallest_failed <= queued_min_gpus())
          break;
        ++it;
        continue;
      }
      it = queue_.erase(it);
      forget_queued(job);
      job.state = JobState::kRunning;
      ++job.attempts;
      if (job.first_start < 0)
        job.first_start = now();
      job.actor =
          sg4::Actor::create("job", nodes_[static_cast<std::size_t>(job.pieces.front().node)].host,
                             [this, j] { job_actor(j); });
    }
  }

  // ---- node lifecycle -----------------------------------------------------------------------

  void backoff(int pool) {
    auto& pr = pools_[static_cast<std::size_t>(pool)];
    if (now() - pr.last_failure > loop_.backoff_reset_s && loop_.backoff_reset_s > 0) {
      pr.backoff_s = 0.0;
    }
    pr.last_failure = now();
    last_failure_ = now();
    if (loop_.backoff_initial_s <= 0)
      return;
    pr.backoff_s = pr.backoff_s <= 0 ? loop_.backoff_initial_s
                                     : std::min(2 * pr.backoff_s, loop_.backoff_max_s);
    pr.backoff_until = now() + pr.backoff_s;
  }

  [[nodiscard]] int count(int pool, bool include_draining) const {
    int c = 0;
    for (int id : pools_[static_cast<std::size_t>(pool)].nodes) {
      const auto s = nodes_[static_cast<std::size_t>(id)].state;
      if (s == NodeState::kBooting || s == NodeState::kReady ||
          (include_draining && (s == NodeState::kDraining || s == NodeState::kShutdown))) {
        ++c;
      }
    }
    return c;
  }

  [[nodiscard]] int booting(int pool) const {
    int c = 0;
    for (int id : pools_[static_cast<std::size_t>(pool)].nodes) {
      c += nodes_[static_cast<std::size_t>(id)].state == NodeState::kBooting ? 1 : 0;
    }
    return c;
  }

  [[nodiscard]] int off_slots(int pool) const {
    int c = 0;
    for (int id : pools_[static_cast<std::size_t>(pool)].nodes) {
      c += nodes_[static_cast<std::size_t>(id)].state == NodeState::kOff ? 1 : 0;
    }
    return c;
  }

  int off_slot(int pool) const {
    for (int id : pools_[static_cast<std::size_t>(pool)].nodes) {
      if (nodes_[static_cast<std::size_t>(id)].state == NodeState::kOff)
        return id;
    }
    return -1;
  }

  // Launches one node of a pool; false on insufficient capacity (the pool backs off).
  bool launch(int pool, bool instant) {
    const auto& spec = w_.pools[static_cast<std::size_t>(pool)];
    const int id = off_slot(pool);
    if (id < 0)
      return false;
    Node& n = nodes_[static_cast<std::size_t>(id)];
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double draw = u(rng_prov_);
    const double delay = spec.boot.sample(rng_prov_) + spec.image_pull.sample(rng_prov_) +
                         spec.init.sample(rng_prov_);
    // The market's capacity limits even the nodes a static cluster starts with.
    if (spec.available_nodes >= 0 && count(pool, true) >= spec.available_nodes) {
      if (instant)
        return false;
      ++result_.launch_failures;
      backoff(pool);
      return false;
    }
    if (!instant && !loop_.zero_delay && draw < spec.ice_probability) {
      ++result_.launch_failures;
      backoff(pool);
      return false;
    }
    ++n.gen;
    n.host->turn_on();
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
    last_add_ = now();
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
    Node& n = nodes_[static_cast<std::size_t>(id)];
    const auto& spec = w_.pools[static_cast<std::size_t>(n.pool)];
    n.state = NodeState::kReady;
    n.ready_at = now();
    n.free_gpus = spec.gpus_per_node();
    auto& pr = pools_[static_cast<std::size_t>(n.pool)];
    if (loop_.backoff_reset_s > 0 && now() - pr.last_failure > loop_.backoff_reset_s) {
      pr.backoff_s = 0.0;
    }
    if (w_.failures.gpu_mtbf_s > 0) {
      std::exponential_distribution<double> ttf(spec.gpus_per_node() / w_.failures.gpu_mtbf_s);
      push(now() + ttf(rng_fail_), EventType::kFailure, id);
    }
    if (spec.pricing == Pricing::kSpot && spec.interruptions_per_node_month > 0) {
      std::exponential_distribution<double> tti(spec.interruptions_per_node_month / kMonth_s);
      push(now() + tti(rng_spot_), EventType::kSpotNotice, id);
    }
    if (loop_.expire_after_s > 0)
      push(n.billed_since + loop_.expire_after_s, EventType::kExpire, id);
    changed();
  }

  // Stops billing and powers the host off; jobs on it see their execs fail.
  void power_off(int id, OffReason why, NodeState next) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    n.reason = why;
    interrupt_all(id);
    close_pieces_on(id);
    if (n.state != NodeState::kShutdown) {
      pools_[static_cast<std::size_t>(n.pool)].billed_s += now() - n.billed_since;
    }
    n.reason = why;
    n.state = next;
    ++n.gen;
    n.free_gpus = 0;
    if (n.host->is_on())
      n.host->turn_off();
    changed();
  }

  // Voluntary or forced removal: empty nodes shut down at once, busy ones are cordoned and
  // killed after a checkpoint's worth of grace.
  void remove_node(int id, OffReason why, double grace_s) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    n.reason = why;
    n.notice_s = grace_s;
    if (n.jobs.empty()) {
      shutdown(id);
    } else {
      n.state = NodeState::kDraining;
      push(now() + grace_s, EventType::kKill, id);
    }
    last_delete_ = now();
  }

  void shutdown(int id) {
    Node& n = nodes_[static_cast<std::size_t>(id)];
    const OffReason why = n.reason;
    interrupt_all(id);
    close_pieces_on(id);
    ++n.gen;
    n.state = NodeState::kShutdown;
    n.free_gpus = 0;
    n.reason = why;
    if (n.host->is_on())
      n.host->turn_off();
    push(now() + loop_.termination_s, EventType::kShutdownDone, id);
    changed();
  }

  void handle(const Event& ev) {
    if (ev.type == EventType::kJobRecovered) {
      Job& job = jobs_[static_cast<std::size_t>(ev.job)];
      release(ev.job);
      job.recovering = false;
      enqueue(ev.job);
      return;
    }
    Node& n = nodes_[static_cast<std::size_t>(ev.node)];
    if (ev.gen != n.gen)
      return;
    const auto& spec = w_.pools[static_cast<std::size_t>(n.pool)];
    switch (ev.type) {
      case EventType::kReady:
        if (n.state == NodeState::kBooting)
          become_ready(ev.node);
        break;
      case EventType::kTimeout:
        ++result_.provision_timeouts;
        power_off(ev.node, OffReason::kNone, NodeState::kOff);
        backoff(n.pool);
        break;
      case EventType::kFailure: {
        if (n.state != NodeState::kReady && n.state != NodeState::kDraining)
          break;
        ++result_.node_failures;
        power_off(ev.node, OffReason::kFailure, NodeState::kFailed);
        events_.push({now() + w_.failures.repair.sample(rng_repair_), seq_++, EventType::kRepaired,
                      ev.node, n.gen});
        break;
      }
      case EventType::kRepaired:
        if (n.state == NodeState::kFailed) {
          n.state = NodeState::kOff;
          changed();
        }
        break;
      case EventType::kSpotNotice: {
        if (n.state != NodeState::kReady)
          break;
        ++result_.spot_interruptions;
        n.reason = OffReason::kSpot;
        n.notice_s = spec.notice_s;
        n.state = NodeState::kDraining;
        push(now() + spec.notice_s, EventType::kKill, ev.node);
        if (loop_.replace_on_notice && !n.jobs.empty())
          (void)launch(n.pool, false);
        // Correlated interruptions: the same market pulls other spot nodes within minutes. Only
        // an independent trigger spreads (no cascades of cascades).
        std::uniform_real_distribution<double> u(0.0, 1.0);
        for (int other : pools_[static_cast<std::size_t>(n.pool)].nodes) {
          if (other == ev.node || ev.job == kCorrelated)
            continue;
          const Node& o = nodes_[static_cast<std::size_t>(other)];
          if (o.state != NodeState::kReady)
            continue;
          const double draw = u(rng_spot_);
          const double when = u(rng_spot_) * kCorrelationWindow_s;
          if (draw < spec.interruption_correlation) {
            events_.push({now() + when, seq_++, EventType::kSpotNotice, other,
                          nodes_[static_cast<std::size_t>(other)].gen, kCorrelated});
          }
        }
        changed();
        break;
      }
      case EventType::kKill:
        if (n.state != NodeState::kDraining)
          break;
        if (n.reason == OffReason::kSpot) {
          power_off(ev.node, OffReason::kSpot, NodeState::kOff);
        } else {
          shutdown(ev.node);  // billed until kShutdownDone
        }
        break;
      case EventType::kShutdownDone:
        if (n.state == NodeState::kShutdown) {
          pools_[static_cast<std::size_t>(n.pool)].billed_s += now() - n.billed_since;
          n.state = NodeState::kOff;
          changed();
        }
        break;
      case EventType::kJobRecovered:
        break;  // handled above
      case EventType::kExpire:
        if (n.state == NodeState::kReady) {
          ++result_.scale_downs;
          remove_node(ev.node, OffReason::kScaleDown, w_.failures.checkpoint_cost_s);
        }
        break;
    }
  }

  // ---- the control loop ---------------------------------------------------------------------

  // GPUs the queue still needs after packing it onto ready and booting capacity, turned into
  // node launches per pool by the expander. Returns the earliest time waiting could change it.
  double scale_up() {
    double wake = kInf;
    // Pools below their minimum launch regardless of caps (Ray min_workers, CA min size).
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      int target = loop_.autoscale ? w_.pools[p].min_nodes : w_.pools[p].max_nodes;
      if (w_.pools[p].available_nodes >= 0)
        target = std::min(target, w_.pools[p].available_nodes);
      const int need = target - count(static_cast<int>(p), true);
      for (int k = 0; k < need; ++k) {
        if (now() < pools_[p].backoff_until) {
          wake = std::min(wake, pools_[p].backoff_until);
          break;
        }
        if (!launch(static_cast<int>(p), false))
          break;
      }
    }
    std::fill(nominated_.begin(), nominated_.end(), false);
    if (!loop_.autoscale || queue_.empty())
      return wake;

    // Capacity the queue can count on: free GPUs of ready nodes and whole booting nodes. Ready
    // nodes the pending jobs are packed onto are nominated: scale-down leaves them alone
    // (CA's re-placement simulation, Ray's demand packing, Karpenter's nominated nodes).
    std::vector<std::vector<int>> free(pools_.size()), ids(pools_.size());
    std::vector<int> pending(pools_.size(), 0), running(pools_.size(), 0);
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      for (int id : pools_[p].nodes) {
        const Node& n = nodes_[static_cast<std::size_t>(id)];
        if (n.state == NodeState::kReady) {
          free[p].push_back(n.free_gpus);
          ids[p].push_back(id);
          ++running[p];
        } else if (n.state == NodeState::kBooting) {
          free[p].push_back(w_.pools[p].gpus_per_node());
          ids[p].push_back(id);
          ++pending[p];
        }
      }
    }
    std::vector<int> launches(pools_.size(), 0);
    std::vector<std::vector<int>> fresh(pools_.size());
    // Packs g GPUs onto slots (best fit, or whole nodes); marks used slots' nodes in `mark`.
    auto fit = [this](std::vector<int>& slots, int g, int gpn, const std::vector<int>* mark) {
      auto nominate = [&](std::size_t k) {
        if (mark != nullptr)
          nominated_[static_cast<std::size_t>((*mark)[k])] = true;
      };
      if (g <= gpn) {
        int best = -1;
        for (std::size_t k = 0; k < slots.size(); ++k) {
          if (slots[k] >= g && (best < 0 || slots[k] < slots[static_cast<std::size_t>(best)])) {
            best = static_cast<int>(k);
          }
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
    };
    // Expander: pools in listed order (priority) or by price per GPU-hour.
    std::vector<std::size_t> order(pools_.size());
    for (std::size_t p = 0; p < order.size(); ++p)
      order[p] = p;
    if (loop_.expander == Expander::kPrice) {
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return w_.pools[a].price_usd_per_hour / w_.pools[a].gpus_per_node() <
               w_.pools[b].price_usd_per_hour / w_.pools[b].gpus_per_node();
      });
    }
    int room_left = 0;
    for (std::size_t p = 0; p < pools_.size(); ++p)
      room_left += off_slots(static_cast<int>(p));
    for (const auto& entry : queue_) {
      const int j = std::get<2>(entry);
      const Job& job = jobs_[static_cast<std::size_t>(j)];
      if (room_left <= 0)
        break;  // every pool is at its maximum: nothing more to launch
      if (job.queued_at + loop_.demand_delay_s > now()) {
        wake = std::min(wake, job.queued_at + loop_.demand_delay_s);
        continue;
      }
      bool covered = false;
      for (std::size_t p = 0; p < pools_.size() && !covered; ++p) {
        const auto s = sizes(job, static_cast<int>(p));
        if (!s.empty())
          covered = fit(free[p], s.front(), w_.pools[p].gpus_per_node(), &ids[p]);
      }
      if (covered)
        continue;
      for (std::size_t p : order) {
        const auto s = sizes(job, static_cast<int>(p));
        if (s.empty())
          continue;
        const int gpn = w_.pools[p].gpus_per_node();
        if (now() < pools_[p].backoff_until) {
          wake = std::min(wake, pools_[p].backoff_until);
          continue;
        }
        if (fit(fresh[p], s.front(), gpn, nullptr))
          break;
        int nodes_needed = (s.front() + gpn - 1) / gpn;
        // A gang job counts the whole free nodes it already has (ready or booting) and asks
        // only for the rest, as CA's binpacking estimator does; those nodes are nominated.
        std::vector<std::size_t> have;
        if (s.front() > gpn) {
          for (std::size_t k = 0;
               k < free[p].size() && static_cast<int>(have.size()) < nodes_needed; ++k) {
            if (free[p][k] == gpn)
              have.push_back(k);
          }
        }
        int room = off_slots(static_cast<int>(p)) - launches[p];
        if (loop_.zero_delay && w_.pools[p].available_nodes >= 0) {
          // The oracle knows the market's capacity; real loops find out through ICE.
          room = std::min(
              room, w_.pools[p].available_nodes - count(static_cast<int>(p), true) - launches[p]);
        }
        if (room < nodes_needed - static_cast<int>(have.size()))
          continue;
        for (std::size_t k : have) {
          free[p][k] = 0;
          nominated_[static_cast<std::size_t>(ids[p][k])] = true;
        }
        nodes_needed -= static_cast<int>(have.size());
        if (s.front() <= gpn) {
          fresh[p].push_back(gpn);
          (void)fit(fresh[p], s.front(), gpn, nullptr);
        }
        launches[p] += nodes_needed;
        room_left -= nodes_needed;
        break;
      }
    }
    // Rate caps, then launch.
    const int resume_allowance = resume_allowance_now();
    int launched_this_tick = 0;
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      int want = launches[p];
      if (loop_.upscaling_speed > 0) {
        // Ray: allowed pending = max(UPSCALING_INITIAL_NUM_NODES, speed * max(running, 1)).
        const int allowed =
            std::max(loop_.upscaling_floor,
                     static_cast<int>(std::floor(loop_.upscaling_speed * std::max(running[p], 1))));
        want = std::min(want, std::max(0, allowed - pending[p]));
      }
      if (loop_.conservative)
        want = std::min(want, std::max(0, std::max(running[p], 1) - pending[p]));
      if (loop_.max_pending > 0)
        want = std::min(want, std::max(0, loop_.max_pending - pending[p]));
      if (loop_.resume_rate_per_min > 0)
        want = std::min(want, resume_allowance - launched_this_tick);
      if (want < launches[p])
        wake = std::min(wake, now() + loop_.tick_s);
      for (int k = 0; k < want; ++k) {
        if (!launch(static_cast<int>(p), false)) {
          wake = std::min(wake, now() + loop_.tick_s);
          break;
        }
        ++launched_this_tick;
      }
    }
    resume_count_ += launched_this_tick;
    return wake;
  }

  // Slurm's ResumeRate (slurmctld power_save.c): a launch counter that each power-save scan
  // scales by (60 - dt) / 60 (zeroes if dt >= 60 s); nodes resume while its rounded value is
  // below the rate, so a burst of ResumeRate nodes, then about ResumeRate per minute. The
  // engine skips idle scans, so the decay of each one is applied for the time that passed.
  int resume_allowance_now() {
    if (loop_.resume_rate_per_min <= 0)
      return std::numeric_limits<int>::max();
    const double dt = now() - last_resume_scan_;
    last_resume_scan_ = now();
    if (dt >= 60.0 || loop_.tick_s >= 60.0)
      resume_count_ = 0.0;
    else
      resume_count_ *= std::pow((60.0 - loop_.tick_s) / 60.0, dt / loop_.tick_s);
    const double rounded = std::floor(resume_count_ + 0.5);
    return std::max(0, static_cast<int>(std::ceil(loop_.resume_rate_per_min - rounded)));
  }

  // Can every job on node `id` be re-placed on other ready nodes of its pool?
  bool replaceable(int id, std::vector<int>& free) const {
    const Node& n = nodes_[static_cast<std::size_t>(id)];
    const auto& nodes = pools_[static_cast<std::size_t>(n.pool)].nodes;
    const auto self =
        static_cast<std::size_t>(std::find(nodes.begin(), nodes.end(), id) - nodes.begin());
    std::vector<int> trial = free;
    trial[self] = 0;
    const int gpn = w_.pools[static_cast<std::size_t>(n.pool)].gpus_per_node();
    for (int j : n.jobs) {
      const Job& job = jobs_[static_cast<std::size_t>(j)];
      if (job.gpus > gpn || job.pieces.size() != 1)
        return false;  // gang jobs stay put
      int best = -1;
      for (std::size_t k = 0; k < trial.size(); ++k) {
        const Node& o = nodes_[static_cast<std::size_t>(nodes[k])];
        if (k == self || !usable(o) || trial[k] < job.gpus)
          continue;
        if (best < 0 || trial[k] < trial[static_cast<std::size_t>(best)])
          best = static_cast<int>(k);
      }
      if (best < 0)
        return false;
      trial[static_cast<std::size_t>(best)] -= job.gpus;
    }
    trial[self] = 0;
    free = trial;
    return true;
  }

  double scale_down() {
    if (loop_.scale_down == ScaleDownPredicate::kNever)
      return kInf;
    double wake = kInf;
    const double cooldown =
        std::max({last_add_ + loop_.delay_after_add_s, last_delete_ + loop_.delay_after_delete_s,
                  last_failure_ + loop_.delay_after_failure_s});
    int total = 0, disrupting = 0;
    for (const auto& n : nodes_) {
      if (n.state == NodeState::kBooting || n.state == NodeState::kReady)
        ++total;
      if (n.state == NodeState::kDraining && n.reason == OffReason::kScaleDown)
        ++disrupting;
    }
    int budget = loop_.budget_fraction >= 1.0
                     ? std::numeric_limits<int>::max()
                     : static_cast<int>(std::ceil(loop_.budget_fraction * total)) - disrupting;
    int deleted = 0;
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      auto free = free_vector(static_cast<int>(p));
      int on = count(static_cast<int>(p), false);
      const int gpn = w_.pools[p].gpus_per_node();
      for (int id : pools_[p].nodes) {
        Node& n = nodes_[static_cast<std::size_t>(id)];
        if (n.state != NodeState::kReady)
          continue;
        bool unneeded = n.jobs.empty();
        // Moving running jobs only pays when nothing waits: with pending jobs the scheduling
        // simulation of CA and Karpenter would need new nodes for them anyway.
        if (!unneeded && loop_.scale_down == ScaleDownPredicate::kUnderutilized && queue_.empty()) {
          const double util = static_cast<double>(gpn - n.free_gpus) / gpn;
          auto trial = free;
          unneeded = util < loop_.utilization_threshold && replaceable(id, trial);
        }
        if (!unneeded || nominated_[static_cast<std::size_t>(id)]) {
          n.unneeded_since = -1.0;
          continue;
        }
        if (n.unneeded_since < 0)
          n.unneeded_since = now();
        const double due = std::max(n.unneeded_since + loop_.dwell_s, cooldown);
        if (due > now() + kEps) {
          wake = std::min(wake, due);
          continue;
        }
        if (on <= w_.pools[p].min_nodes)
          continue;
        if (budget <= 0 ||
            (loop_.max_delete_per_tick > 0 && deleted >= loop_.max_delete_per_tick)) {
          wake = std::min(wake, now() + loop_.tick_s);
          continue;
        }
        if (!n.jobs.empty()) {
          auto trial = free;
          if (!replaceable(id, trial))
            continue;
          free = trial;
        }
        ++result_.scale_downs;
        remove_node(id, OffReason::kScaleDown, w_.failures.checkpoint_cost_s);
        --on;
        ++deleted;
        if (!n.jobs.empty())
          --budget;
      }
    }
    return wake;
  }

  void sample() {
    if (result_.timeline.samples.size() >= kMaxTimelineSamples)
      return;
    traces::TimelineSample s;
    s.time_s = now();
    for (const auto& n : nodes_) {
      switch (n.state) {
        case NodeState::kBooting:
          ++s.nodes_booting;
          break;
        case NodeState::kReady:
          ++(n.jobs.empty() ? s.nodes_idle : s.nodes_busy);
          break;
        case NodeState::kDraining:
        case NodeState::kShutdown:
          ++s.nodes_draining;
          break;
        case NodeState::kFailed:
          ++s.nodes_failed;
          break;
        case NodeState::kOff:
          break;
      }
    }
    for (const auto& j : jobs_) {
      if (j.state == JobState::kRunning) {
        ++s.jobs_running;
        s.gpus_busy += j.gpus;
      }
    }
    s.jobs_queued = static_cast<int>(queue_.size());
    result_.timeline.samples.push_back(s);
  }

  void control_loop() {
    // Pools start at their minimum (static: maximum), already running.
    for (std::size_t p = 0; p < pools_.size(); ++p) {
      const int n0 = loop_.autoscale ? w_.pools[p].min_nodes : w_.pools[p].max_nodes;
      for (int k = 0; k < n0; ++k)
        (void)launch(static_cast<int>(p), true);
    }
    std::size_t next_job = 0;
    double next_sample = 0.0;
    double next_tick = 0.0;
    double last_tick = -kInf;
    for (;;) {
      const double t = now();
      while (!events_.empty() && events_.top().t <= t + kEps) {
        const Event ev = events_.top();
        events_.pop();
        handle(ev);
      }
      while (next_job < jobs_.size() && jobs_[next_job].rec->submit_s <= t + kEps) {
        enqueue(static_cast<int>(next_job++));
      }
      schedule();
      if (t + kEps >= next_tick) {
        tick_wanted_ = kInf;
        const double a = scale_up();
        const double b = scale_down();
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
      if (finished_ == static_cast<int>(jobs_.size()) || t >= horizon_)
        break;
      double wake = std::min({next_tick, next_sample, horizon_});
      if (!events_.empty())
        wake = std::min(wake, events_.top().t);
      if (next_job < jobs_.size())
        wake = std::min(wake, jobs_[next_job].rec->submit_s);
      if (wake > t + kEps) {
        (void)wake_->acquire_timeout(wake - t);
      }
      while (!wake_->would_block())
        wake_->acquire();
    }
    end_time_ = now();
    sample();
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      Node& n = nodes_[i];
      if (n.state == NodeState::kBooting || n.state == NodeState::kReady ||
          n.state == NodeState::kDraining || n.state == NodeState::kShutdown) {
        pools_[static_cast<std::size_t>(n.pool)].billed_s += end_time_ - n.billed_since;
        n.state = NodeState::kOff;
      }
      if (n.host->is_on())
        n.host->turn_off();
    }
    for (auto& j : jobs_) {
      if (j.state == JobState::kRunning) {
        busy_gpu_s_ += held_gpu_s(j, end_time_);
        lost_.failure_gpu_hours += detection_gpu_s(j, end_time_) / 3600.0;
      }
    }
  }

  const WhatIf& w_;
  ControlLoop loop_;
  std::mt19937_64 rng_prov_, rng_fail_, rng_spot_, rng_repair_;
  std::vector<Node> nodes_;
  std::vector<bool> nominated_;  // ready nodes the pending jobs are packed onto (this tick)
  std::vector<PoolRuntime> pools_;
  std::vector<Job> jobs_;
  std::set<std::tuple<int, double, int>> queue_;
  std::map<int, int> queued_by_min_;  // queued jobs by their smallest start size
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  sg4::Host* ctrl_ = nullptr;
  sg4::SemaphorePtr wake_;
  double horizon_ = 0.0;
  double end_time_ = 0.0;
  double tick_wanted_ = 0.0;
  double last_add_ = -kInf;
  double last_delete_ = -kInf;
  double resume_count_ = 0.0;  // Slurm's decaying ResumeRate counter
  double last_resume_scan_ = -kInf;
  double last_failure_ = -kInf;
  double busy_gpu_s_ = 0.0;
  int finished_ = 0;
  GoodputLoss lost_;
  PolicyResult result_;
};

// Nearest-rank percentile (deterministic, no interpolation).
double percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0.0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

PolicyResult Simulation::finish_result() {
  PolicyResult r = result_;
  r.end_time_s = end_time_;
  double billed_gpu_s = 0.0;
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    const auto& spec = w_.pools[p];
    // A capacity block is paid for every reserved node for the whole run, used or not.
    const double node_s =
        spec.pricing == Pricing::kCapacityBlock ? spec.max_nodes * end_time_ : pools_[p].billed_s;
    const double cost = node_s / 3600.0 * spec.price_usd_per_hour;
    r.cost_by_pricing_usd[to_string(spec.pricing)] += cost;
    r.cost_usd += cost;
    billed_gpu_s += node_s * spec.gpus_per_node();
  }
  r.gpu_hours_billed = billed_gpu_s / 3600.0;
  r.gpu_hours_busy = busy_gpu_s_ / 3600.0;
  r.utilization = billed_gpu_s > 0 ? busy_gpu_s_ / billed_gpu_s : 0.0;
  std::vector<double> waits, jcts;
  for (const auto& j : jobs_) {
    if (j.rec->submit_s > end_time_)
      continue;  // after the horizon
    // Jobs that never started count with the wait they had when the run ended (censored).
    waits.push_back((j.first_start >= 0 ? j.first_start : end_time_) - j.rec->submit_s);
    if (j.state == JobState::kDone)
      jcts.push_back(j.end - j.rec->submit_s);
  }
  r.queue_wait_p50_s = percentile(waits, 0.50);
  r.queue_wait_p95_s = percentile(waits, 0.95);
  r.queue_wait_max_s = waits.empty() ? 0.0 : *std::max_element(waits.begin(), waits.end());
  r.jct_p50_s = percentile(jcts, 0.50);
  r.jct_p95_s = percentile(jcts, 0.95);
  r.jobs_finished = finished_;
  r.lost = lost_;
  return r;
}

}  // namespace

double Delay::sample(std::mt19937_64& rng) const {
  std::normal_distribution<double> z(0.0, 1.0);
  const double draw = z(rng);
  if (p95_s <= median_s || median_s <= 0)
    return median_s;
  // Log-normal with the given median and 95th percentile: sigma = ln(p95/median) / 1.6449.
  const double sigma = std::log(p95_s / median_s) / 1.6448536269514722;
  return median_s * std::exp(sigma * draw);
}

PolicyResult run_policy(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed) {
  int argc = 3;
  std::string a0 = "capsim-whatif", a1 = "--log=root.thres:critical",
              a2 = "--cfg=contexts/stack-size:256";
  char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
  sg4::Engine engine(&argc, argv);
  Simulation sim(whatif, policy, seed);
  sim.build_platform(engine);
  sim.start();
  engine.run();
  return sim.finish_result();
}

}  // namespace capsim::whatif
