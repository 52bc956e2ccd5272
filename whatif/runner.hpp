#pragma once

#include <cstdint>
#include <vector>

#include "whatif/results.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// Runs every (policy, replica) pair, each in a forked child process (SimGrid allows one engine
// per process; sim::run_forked: results on pipes, no child outlives a stop signal), at most
// `parallel` at once. Replica r uses seed `whatif.seed + r`. Results come back in policy order,
// seeds ascending, whatever order the children finish in. Throws std::runtime_error when a
// child fails (the first failed pair's message, once every child has ended).
[[nodiscard]] std::vector<PolicyRuns> run_all(const WhatIf& whatif,
                                              const std::vector<PolicySpec>& policies, int replicas,
                                              int parallel);

}  // namespace capsim::whatif
