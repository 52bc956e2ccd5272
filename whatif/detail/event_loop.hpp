#pragma once

#include "whatif/detail/run_state.hpp"

namespace capsim::whatif::detail {

// The control loop's actor body: starts the pools at their initial size, then until every job
// finished or the horizon passed, at each wake-up handles the timed events that fell due, queues
// the jobs submitted by now, schedules, runs the autoscaler on its tick grid and samples the
// timeline; then sleeps until the next of those times or a job's notice. Ends the run (bills the
// nodes still up, counts the jobs still running).
void run_control_loop(RunState& run);

}  // namespace capsim::whatif::detail
