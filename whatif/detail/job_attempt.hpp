#pragma once

#include "whatif/detail/run_state.hpp"

namespace capsim::whatif::detail {

// Starts job `j`'s attempt on the GPUs the scheduler gave it: an actor on its first node that
// sleeps through the job's phases (restart, compute to the next checkpoint or the end,
// checkpoint save) at the rate of its allocation, resizes elastic jobs at checkpoints, and
// completes the job. job_interruption ends an attempt early.
void start_job_attempt(RunState& run, int j);

}  // namespace capsim::whatif::detail
