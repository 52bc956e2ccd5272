#pragma once

#include <string>
#include <utility>
#include <vector>

#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// The file `capsim whatif --emit` writes for `policy`: {file name, text}. A policy read from a
// configuration gets its own files back with the knobs it ran with (patched_config,
// config_patch.hpp), or, where they cannot say them, the format's writer's file for it; a policy
// of a capsim preset gets Karpenter NodePools on its pools (as_karpenter, policy_source.hpp).
[[nodiscard]] std::pair<std::string, std::string> emitted_file(const WhatIf& whatif,
                                                               const PolicySpec& policy);

}  // namespace capsim::whatif
