#pragma once

#include "models/hardware_profile.hpp"

namespace capsim {

// Returns `profile` with the bus bandwidth of every intra-node collective regime scaled by
// `bandwidth_bytes_per_s / reference_bytes_per_s`: its fits were measured on NVLink running at
// the reference figure, and a ring's or NVLS's bus bandwidth is proportional to the per-GPU
// link bandwidth (nccl-tests doc/PERFORMANCE.md, busBw). Latencies and inter-node fits are
// kept. Returns the profile unchanged when the ratio is 1 or either figure is not positive.
[[nodiscard]] HardwareProfile with_intra_node_bandwidth(HardwareProfile profile,
                                                        double bandwidth_bytes_per_s,
                                                        double reference_bytes_per_s);

}  // namespace capsim
