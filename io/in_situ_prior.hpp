#pragma once

#include <optional>
#include <string>

#include "models/hardware_profile.hpp"

namespace capsim::io {

// The in-situ factor (HardwareProfile::software_efficiency) for hardware no training step was
// measured on, and where it comes from.
struct InSituPrior {
  double factor = 1.0;
  std::string source;  // one provenance line
};

// Returns the factor a GPU of `architecture` borrows until a profile is fitted on it: its
// family's shipped factor when capsim ships a profile for the architecture; the family's factor
// fitted to published runs when capsim has one (Blackwell); that of the training stack `stack`
// (a training stack's name, "" for none) before either when published runs of it fitted one on
// the family (runs of its `version` where they fitted one of their own, else of every version);
// else the geometric mean of the shipped families' (A100 and H100). Each was fitted to
// published runs of several training stacks (docs/validation.md, "The in-situ factor"): the loss is
// the stacks', so it is the best prior for a GPU they have not been measured on yet.
[[nodiscard]] InSituPrior in_situ_prior(const std::string& architecture,
                                        const std::string& stack = "",
                                        const std::string& version = "");

// The tensor speed (HardwareProfile::tensor_speed) published runs on GPU `gpu_name` fitted over
// its datasheet peaks, and where it comes from; nullopt for a GPU with none (speed 1).
[[nodiscard]] std::optional<InSituPrior> tensor_speed_prior(const std::string& gpu_name);

// Returns `profile` (a datasheet profile) with the prior of its GPU's architecture and `stack`,
// and its GPU's tensor speed where one was fitted.
[[nodiscard]] HardwareProfile with_in_situ_prior(HardwareProfile profile,
                                                 const std::string& architecture,
                                                 const std::string& stack = "",
                                                 const std::string& version = "");

// Whether published runs of `stack` (at `version`, or of every version) on GPUs of
// `architecture` fitted a factor of their own.
[[nodiscard]] bool has_stack_factor(const std::string& architecture, const std::string& stack,
                                    const std::string& version = "");

// Returns a shipped profile with the factor fitted to published runs of `stack` on its GPU's
// family in place of its own (fitted over every stack's runs), where one was fitted; else as is.
[[nodiscard]] HardwareProfile with_stack_factor(HardwareProfile profile, const std::string& stack,
                                                const std::string& version = "");

}  // namespace capsim::io
