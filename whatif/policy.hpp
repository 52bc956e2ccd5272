#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// One knob of a preset: its native name (as the real autoscaler spells it), default and meaning.
struct KnobInfo {
  std::string name;
  std::string default_value;  // as written in JSON
  std::string meaning;
};

// Returns every preset name: static, cluster-autoscaler, ray-v1, kuberay-v2, karpenter,
// slurm-power-save, kuberay-ca-asg.
[[nodiscard]] std::vector<std::string> preset_names();

// Returns the knobs a preset accepts, with defaults from the autoscalers' sources
// (docs/design/autoscaling.md §1).
[[nodiscard]] const std::vector<KnobInfo>& preset_knobs(const std::string& preset);

// Builds a policy from a preset and the user's knobs (an object of native knob names).
// Throws InputError naming `file` and the pointer of the bad knob; unknown knobs list the
// allowed ones.
[[nodiscard]] PolicySpec make_policy(const std::string& name, const std::string& preset,
                                     const nlohmann::json& knobs, const std::string& file,
                                     const std::string& pointer);

// Returns every knob of `preset`: the value in `knobs` or the default, durations written as
// seconds ("600s"), so two knob sets that configure the same loop compare equal.
// REQUIRES: `knobs` passes make_policy for `preset`.
[[nodiscard]] nlohmann::json complete_knobs(const std::string& preset, const nlohmann::json& knobs);

}  // namespace capsim::whatif
