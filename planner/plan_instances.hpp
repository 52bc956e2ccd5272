#pragma once

// The /instances and /pricing parts of a `capsim.plan/v1` input: catalog names or objects with
// price overrides, a calibrated profile, or the hardware of an instance the catalog lacks.

#include <string>
#include <vector>

#include "planner/plan.hpp"

#include "io/json_reader.hpp"

namespace capsim::planner {

// The pricing options a plan may list, in the order price overrides are indexed.
[[nodiscard]] const std::vector<std::string>& pricing_names();

// Reads /instances against the plan's `pricing` list into plan.instances: each entry's catalog
// spec (defining the ones the plan describes), its offered prices (override, else catalog) and
// its profile, checked against the instance's GPU; every listed pricing must be offered by one.
void read_instances(io::JsonReader& r, PlanSpec& plan, const std::vector<std::string>& pricing);

}  // namespace capsim::planner
