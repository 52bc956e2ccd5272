#pragma once

#include "whatif/detail/run_state.hpp"

namespace capsim::whatif::detail {

// Removes ready node `id` as a scale-down: an empty node shuts down at once, a busy one is
// cordoned and killed after a checkpoint's worth of grace (a kKill event).
void scale_down_node(RunState& run, int id);

// Stops billing node `id` and powers its host off, for `why`; the jobs on it are interrupted
// and the node moves to `next`.
void power_off(RunState& run, int id, OffReason why, NodeState next);

// Powers node `id`'s host off but keeps billing it until its termination completes (a
// kShutdownDone event after the loop's termination time); the jobs on it are interrupted.
void shut_down(RunState& run, int id);

// Adds the node's billed time up to now to its pool.
void stop_billing(RunState& run, const Node& n);

}  // namespace capsim::whatif::detail
