#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

namespace capsim::whatif::detail {

// What falls due at a timed event: a node's launch, failure, spot or removal step, or the end
// of a failed job's detection time.
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

// TimedEvent::job of a spot notice caused by another one (such notices spread no further).
inline constexpr int kCorrelated = -2;

struct TimedEvent {
  double t;
  std::uint64_t seq;  // scheduling order: ties at the same time fall due in it
  EventType type;
  int node;
  std::uint64_t gen;  // the node's generation when scheduled: a later one makes the event stale
  int job = -1;
  bool operator>(const TimedEvent& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
};

// The run's future events, earliest first, and those at the same time in scheduling order (so
// a run is deterministic). Times in seconds of simulated time.
class TimedEvents {
 public:
  // Schedules an event at `t`.
  void push(double t, EventType type, int node, std::uint64_t gen, int job = -1) {
    events_.push({t, seq_++, type, node, gen, job});
  }
  [[nodiscard]] bool empty() const { return events_.empty(); }
  // Returns the earliest event's time. REQUIRES: !empty()
  [[nodiscard]] double next_time() const { return events_.top().t; }
  // Removes and returns the earliest event. REQUIRES: !empty()
  TimedEvent pop() {
    const TimedEvent ev = events_.top();
    events_.pop();
    return ev;
  }

 private:
  std::priority_queue<TimedEvent, std::vector<TimedEvent>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
};

}  // namespace capsim::whatif::detail
