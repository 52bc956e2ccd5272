// The step `capsim simulate --engine analytic` takes after reading a scenario, shared by the
// targets whose inputs carry scenarios.
#pragma once

#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim::fuzz {

// Estimates one iteration of `scenario` on `profile` and aborts unless every figure of the
// result is finite and the iteration time positive.
void check_estimate(const Scenario& scenario, const HardwareProfile& profile);

}  // namespace capsim::fuzz
