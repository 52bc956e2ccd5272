#pragma once

#include "whatif/detail/run_state.hpp"

namespace capsim::whatif::detail {

// Stops the attempts of the jobs on node `node`, which goes away (for its `reason`): accounts
// for the phase each was in and requeues it from its last checkpoint (or from an emergency
// checkpoint saved inside the node's notice). A failure's jobs hold their other nodes until
// they notice it (FailureModel::detect_s); recover_job then requeues them.
void interrupt_jobs_on(RunState& run, int node);

// Gives job `j`'s GPUs back and requeues it: it noticed the failure that interrupted it.
void recover_job(RunState& run, int j);

}  // namespace capsim::whatif::detail
