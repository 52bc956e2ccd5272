#pragma once

#include <string>

#include "models/scenario.hpp"

namespace capsim::io {

// Checks the rules that tie model, cluster and layout together (docs/scenario.md, "Validation
// rules"); throws InputError pointing below `pointer` (the scenario object's pointer). The checks
// run in a fixed order, and the first that fails names the error.
void check_layout(const ModelSpec& model, const ClusterSpec& cluster,
                  const Parallelism& parallelism, const std::string& file,
                  const std::string& pointer);

}  // namespace capsim::io
