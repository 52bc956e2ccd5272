#pragma once

#include <optional>
#include <string>

#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// The configuration `source` was read from, written back for `wanted` (the policy it was read
// as, with knobs a run changed): the files' own text, every document, key and comment kept, with
// the value of each knob that differs from what the files state replaced where the files state
// it (a cluster-autoscaler flag or slurm.conf key they leave out is added as a line of its own),
// after a header comment naming the changes. Several files of a Karpenter policy become one
// YAML stream. None when a changed knob has no place in the files (a YAML key they leave out, a
// knob the format cannot express) or the text would not read back as `wanted`.
[[nodiscard]] std::optional<std::string> patched_config(const ImportedSource& source,
                                                        const ImportedPolicy& wanted);

}  // namespace capsim::whatif
