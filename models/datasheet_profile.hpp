#pragma once

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim {

// Returns a profile derived from datasheets and NCCL's own latency tables, for clusters no
// measured profile matches. Its efficiencies are the typical measured ratios cited in
// ../shared/reference/hardware_facts.md, not fits; is_datasheet_default is set.
[[nodiscard]] HardwareProfile datasheet_profile(const GpuSpec& gpu, const ClusterSpec& cluster);

}  // namespace capsim
