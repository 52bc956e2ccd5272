#pragma once

#include "cli/cli_util.hpp"

namespace capsim::cli {

// `capsim simulate CLUSTER.json [--json] [--trace OUT.json]`: the jobs of a capsim.cluster/v1
// file on their shared fabric (docs/cluster.md). Returns the exit code; throws InputError for
// bad input or options a cluster file does not take.
int simulate_cluster(const cxxopts::ParseResult& args);

}  // namespace capsim::cli
