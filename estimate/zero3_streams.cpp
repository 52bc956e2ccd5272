#include "estimate/zero3_streams.hpp"

#include <algorithm>
#include <limits>

namespace capsim::estimate {
namespace {

// The first cycle starts with empty streams (its first gather is not prefetched); the second,
// the steady state, starts and ends with the neighbours' collectives running, as a micro-batch
// does between two others; the third ends the iteration (no gather to prefetch, the last
// scatters to drain).
constexpr int kCycles = 3;
constexpr size_t kSteadyCycle = 1;
constexpr double kNever = std::numeric_limits<double>::infinity();

enum class Phase { kIdle, kLatency, kWire };

// One collective of a stream: a latency, then bytes on the wire (s at the full link rate).
struct Collective {
  double latency_s = 0.0;
  double wire_s = 0.0;
};

// A stream of collectives run one after another, in play order.
struct Stream {
  std::vector<Collective> order;
  int total = 0;    // collectives in the play
  int allowed = 0;  // collectives it may have started (prefetch credit, finished layers)
  int started = 0;
  int done = 0;
  Phase phase = Phase::kIdle;
  double remaining_s = 0.0;  // of the current phase; on the wire, at the full link rate

  [[nodiscard]] bool busy() const { return phase != Phase::kIdle; }
  [[nodiscard]] bool on_wire() const { return phase == Phase::kWire; }

  // Starts and ends zero-length phases until the stream waits for time or for work.
  void settle() {
    for (;;) {
      if (phase == Phase::kIdle && started < std::min(allowed, total)) {
        phase = Phase::kLatency;
        remaining_s = order[static_cast<size_t>(started)].latency_s;
        ++started;
      } else if (phase == Phase::kLatency && remaining_s <= 0.0) {
        phase = Phase::kWire;
        remaining_s = order[static_cast<size_t>(started - 1)].wire_s;
      } else if (phase == Phase::kWire && remaining_s <= 0.0) {
        ++done;
        phase = Phase::kIdle;
      } else {
        return;
      }
    }
  }

  [[nodiscard]] double time_to_next_s(double wire_speed) const {
    if (phase == Phase::kLatency)
      return remaining_s;
    if (phase == Phase::kWire && wire_speed > 0.0)
      return remaining_s / wire_speed;
    return kNever;
  }

  // Whatever ends within `dt` ends exactly (no rounding residue left to replay).
  void advance(double dt, double wire_speed) {
    if (!busy())
      return;
    const double speed = phase == Phase::kWire ? wire_speed : 1.0;
    remaining_s = time_to_next_s(wire_speed) <= dt ? 0.0 : remaining_s - dt * speed;
  }
};

enum class PlayStep { kLead, kLayerStart, kCompute, kComm, kDrain, kFinished };

// The compute side and both streams of one play, stepped from event to event.
class Player {
 public:
  Player(const std::vector<Zero3Pass>& passes, int layers, const Zero3Collectives& c,
         double compute_rate)
      : passes_(passes),
        layers_(layers),
        compute_rate_(compute_rate),
        num_passes_(passes.size() * kCycles),
        exposed_(num_passes_, 0.0) {
    for (int cycle = 0; cycle < kCycles; ++cycle) {
      for (const Zero3Pass& pass : passes) {
        if (pass.root_gather)
          gather_.order.push_back({c.root_gather_latency_s, c.root_gather_wire_s});
        for (int l = 0; l < layers; ++l) {
          if (pass.gathers) {
            const double k = pass.gather_repeats;
            gather_.order.push_back({k * c.gather_latency_s, k * c.gather_wire_s});
          }
          if (pass.scatters)
            scatter_.order.push_back({c.scatter_latency_s, c.scatter_wire_s});
        }
        if (pass.root_scatter)
          scatter_.order.push_back({c.root_scatter_latency_s, c.root_scatter_wire_s});
      }
    }
    gather_.total = static_cast<int>(gather_.order.size());
    scatter_.total = static_cast<int>(scatter_.order.size());
    gather_.allowed = 1;  // the first gather may start at once
  }

  void run() {
    for (;;) {
      settle();
      if (step_ == PlayStep::kFinished && !scatter_.busy())
        return;
      const double dt = time_to_next_event_s();
      if (!(dt < kNever))
        return;  // nothing can move: cannot happen with consistent inputs; stop, never spin
      advance(dt);
    }
  }

  [[nodiscard]] const std::vector<double>& exposed_s() const { return exposed_; }
  [[nodiscard]] double end_s() const { return now_; }  // the last scatter's end

 private:
  [[nodiscard]] const Zero3Pass& pass() const { return passes_[pass_index_ % passes_.size()]; }
  [[nodiscard]] double compute_speed() const {
    return gather_.busy() || scatter_.busy() ? compute_rate_ : 1.0;
  }
  [[nodiscard]] double wire_speed() const {
    const int on_wire = static_cast<int>(gather_.on_wire()) + static_cast<int>(scatter_.on_wire());
    return on_wire > 0 ? 1.0 / on_wire : 0.0;
  }
  [[nodiscard]] double compute_time_to_next_s() const {
    if (step_ == PlayStep::kCompute)
      return remaining_s_ / compute_speed();
    if (step_ == PlayStep::kComm || step_ == PlayStep::kLead)
      return remaining_s_;
    return kNever;
  }

  // Instantaneous transitions, until every actor waits for time or for another actor.
  void settle() {
    for (bool moved = true; moved;) {
      gather_.settle();
      scatter_.settle();
      moved = settle_compute();
    }
  }

  bool settle_compute() {
    switch (step_) {
      case PlayStep::kLead:
        if (remaining_s_ > 0.0)
          return false;
        step_ = PlayStep::kLayerStart;
        return true;
      case PlayStep::kLayerStart:
        // A pass's lead (the event engine's overhead sleep) comes before everything.
        if (layer_ == 0 && !lead_done_ && pass().lead_s > 0.0) {
          lead_done_ = true;
          step_ = PlayStep::kLead;
          remaining_s_ = pass().lead_s;
          return true;
        }
        // The root unit's gather comes first; the first layer's may start once it is done.
        if (pass().root_gather && layer_ == 0 && !root_gathered_) {
          if (gather_.done <= gathers_used_)
            return false;
          ++gathers_used_;
          ++gather_.allowed;
          root_gathered_ = true;
          return true;
        }
        if (pass().gathers) {
          if (gather_.done <= gathers_used_)
            return false;
          ++gathers_used_;
          // Prefetch: the next layer's gather may start; not across the end of a backward.
          if (!ends_backward())
            ++gather_.allowed;
        }
        step_ = PlayStep::kCompute;
        remaining_s_ = pass().compute_s / layers_;
        return true;
      case PlayStep::kCompute:
        if (remaining_s_ > 0.0)
          return false;
        step_ = PlayStep::kComm;
        remaining_s_ = pass().comm_s / layers_;
        return true;
      case PlayStep::kComm:
        if (remaining_s_ > 0.0)
          return false;
        end_layer();
        return true;
      case PlayStep::kDrain:
        if (scatter_.done < scatter_.allowed)
          return false;
        if (pass().gathers)
          ++gather_.allowed;  // the held prefetch
        end_pass();
        return true;
      case PlayStep::kFinished:
        return false;
    }
    return false;
  }

  // The last layer of a pass that scatters ends the micro-batch's backward: FSDP and DeepSpeed
  // synchronise their streams there (sim/rank_actors.cpp, compute_zero3).
  [[nodiscard]] bool ends_backward() const { return pass().scatters && layer_ == layers_ - 1; }

  void end_layer() {
    const bool drain = ends_backward();
    if (pass().scatters)
      ++scatter_.allowed;
    if (drain && pass().root_scatter)
      ++scatter_.allowed;
    step_ = PlayStep::kLayerStart;
    if (drain) {
      step_ = PlayStep::kDrain;
      return;
    }
    if (++layer_ < layers_)
      return;
    end_pass();
  }

  void end_pass() {
    step_ = PlayStep::kLayerStart;
    root_gathered_ = false;
    lead_done_ = false;
    exposed_[pass_index_] = now_ - pass_start_ - pass().lead_s - pass().compute_s - pass().comm_s;
    layer_ = 0;
    pass_start_ = now_;
    if (++pass_index_ == num_passes_)
      step_ = PlayStep::kFinished;
  }

  [[nodiscard]] double time_to_next_event_s() const {
    const double wire = wire_speed();
    return std::min(
        {compute_time_to_next_s(), gather_.time_to_next_s(wire), scatter_.time_to_next_s(wire)});
  }

  void advance(double dt) {
    now_ += dt;
    if (step_ == PlayStep::kCompute || step_ == PlayStep::kComm || step_ == PlayStep::kLead) {
      const double speed = step_ == PlayStep::kCompute ? compute_speed() : 1.0;
      remaining_s_ = compute_time_to_next_s() <= dt ? 0.0 : remaining_s_ - dt * speed;
    }
    const double wire = wire_speed();
    gather_.advance(dt, wire);
    scatter_.advance(dt, wire);
  }

  const std::vector<Zero3Pass>& passes_;
  int layers_;
  double compute_rate_;
  size_t num_passes_;
  std::vector<double> exposed_;  // per pass played
  Stream gather_;
  Stream scatter_;
  size_t pass_index_ = 0;
  int layer_ = 0;
  int gathers_used_ = 0;
  bool root_gathered_ = false;  // this pass's root gather is done
  bool lead_done_ = false;      // this pass's lead is over
  PlayStep step_ = PlayStep::kLayerStart;
  double remaining_s_ = 0.0;
  double now_ = 0.0;
  double pass_start_ = 0.0;
};

}  // namespace

Zero3Play play_zero3_streams(const std::vector<Zero3Pass>& passes, int layers,
                             const Zero3Collectives& collectives, double compute_rate) {
  Zero3Play play;
  play.exposed_s.assign(passes.size(), 0.0);
  if (passes.empty() || layers < 1)
    return play;
  Player player(passes, layers, collectives, compute_rate);
  player.run();

  const size_t per_cycle = passes.size();
  const std::vector<double>& exposed = player.exposed_s();
  double cycle_s = 0.0;
  double link_s = 0.0;
  size_t last_scattering = per_cycle - 1;
  for (size_t i = 0; i < per_cycle; ++i) {
    play.exposed_s[i] = exposed[kSteadyCycle * per_cycle + i];
    cycle_s += passes[i].lead_s + passes[i].compute_s + passes[i].comm_s + play.exposed_s[i];
    link_s += passes[i].gathers ? layers * collectives.gather_wire_s : 0.0;
    link_s += passes[i].scatters ? layers * collectives.scatter_wire_s : 0.0;
    link_s += passes[i].root_gather ? collectives.root_gather_wire_s : 0.0;
    link_s += passes[i].root_scatter ? collectives.root_scatter_wire_s : 0.0;
    if (passes[i].scatters)
      last_scattering = i;
  }
  // Compute does not wait for the reduce-scatters, so a scatter stream with more bytes than its
  // share of the link falls behind by the same amount every cycle: over many micro-batches the
  // link, not compute, paces a cycle.
  if (link_s > cycle_s) {
    play.exposed_s[last_scattering] += link_s - cycle_s;
    cycle_s = link_s;
  }
  // Whatever the played cycles took beyond that pace: the first gather that nothing prefetched,
  // the last cycle's lack of a next gather, the scatters (or their backlog) still draining.
  play.once_s = player.end_s() - kCycles * cycle_s;
  return play;
}

}  // namespace capsim::estimate
