#pragma once

#include <string>
#include <vector>

#include "models/hardware_profile.hpp"

#include "io/validation_io.hpp"

namespace capsim::calibrate {

// HardwareProfile::software_efficiency fitted to measured iterations of the user's own stack.
struct StepFit {
  double software_efficiency = 1.0;
  double attention_scale = 1.0;  // factor on the attention efficiencies (1 unless fitted)
  double tensor_speed = 1.0;     // HardwareProfile::tensor_speed (the base's unless fitted)
  HardwareProfile profile;       // the base with both applied
  std::vector<double> predicted_before_s;  // per run, analytic engine, the base profile
  std::vector<double> predicted_after_s;   // per run, analytic engine, the fitted profile
};

// Fits `base.software_efficiency` so that the analytic engine reproduces `runs`' measured
// iteration times: the value in [0.1, 2] minimising the mean absolute log error (golden-section
// search on its logarithm; the time falls monotonically as it grows; absolute, so a few odd runs
// do not dominate). With `fit_attention`, also a factor in [0.1, 2] on the profile's attention
// efficiencies (capped at 1), fitted in turn with it; that needs runs at two or more sequence
// lengths. Every run's GPU must be of the profile's
// architecture. Throws InputError naming `file` and the run's JSON pointer otherwise, or when
// there is no run.
[[nodiscard]] StepFit fit_software_efficiency(const std::vector<io::ValidationCase>& runs,
                                              const HardwareProfile& base, const std::string& file,
                                              bool fit_attention = false);

// Fits `base.tensor_speed` (HardwareProfile::tensor_speed) the same way, in [0.5, 2], keeping
// its software_efficiency: for a GPU whose runs outpace its datasheet peaks at its family's
// in-situ factor. Throws as fit_software_efficiency does.
[[nodiscard]] StepFit fit_tensor_speed(const std::vector<io::ValidationCase>& runs,
                                       const HardwareProfile& base, const std::string& file);

// Sets `profile.tensor_speed` and replaces the provenance line that states where it came from
// (every such line starts "tensor_speed ").
void set_tensor_speed(HardwareProfile& profile, double speed, const std::string& provenance);

// Whether the factor fitted on `base` serves a run resolving to `other`: the same profile, or
// datasheet profiles of one architecture on one fabric at one tensor speed (B200 and GB200 runs
// fit one Blackwell factor, GB300's, at its own tensor speed, do not join them; a profile serves
// every GPU of its architecture).
[[nodiscard]] bool one_factor_serves(const HardwareProfile& base, const HardwareProfile& other);

// Sets `profile.software_efficiency` and replaces the provenance line that states where it came
// from (every such line starts "software_efficiency "), so a profile never claims two origins.
void set_software_efficiency(HardwareProfile& profile, double efficiency,
                             const std::string& provenance);

// The provenance line that states where `profile.software_efficiency` came from, or
// "software_efficiency VALUE" when the profile has none.
[[nodiscard]] std::string software_efficiency_origin(const HardwareProfile& profile);

// Leave-all-but-one-out: for every run, fit on it alone and predict the others. Returns, per
// run, the mean absolute percentage error of the others' predictions (0 with one run).
[[nodiscard]] std::vector<double> cross_validate_one_step(
    const std::vector<io::ValidationCase>& runs, const HardwareProfile& base,
    const std::string& file);

}  // namespace capsim::calibrate
