#pragma once

#include "whatif/detail/run_state.hpp"
#include "whatif/detail/timed_events.hpp"

namespace capsim::whatif::detail {

// Acts on a timed event that fell due: a node booted or timed out, failed or was repaired, got
// a spot notice (which may pull other spot nodes of its market), was killed after its grace,
// finished terminating or expired; or a failed job noticed its failure. Events of a node whose
// generation moved on since they were scheduled are stale and ignored.
void handle_timed_event(RunState& run, const TimedEvent& ev);

}  // namespace capsim::whatif::detail
