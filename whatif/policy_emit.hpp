#pragma once

#include <string>
#include <utility>
#include <vector>

#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// The file `capsim whatif --emit` writes for `policy`: {file name, text}, its configuration in
// the format it was read from with the knobs it ran with, or, for a policy of a capsim preset,
// Karpenter NodePools on its pools (as_karpenter, policy_source.hpp).
[[nodiscard]] std::pair<std::string, std::string> emitted_file(const WhatIf& whatif,
                                                               const PolicySpec& policy);

}  // namespace capsim::whatif
