#pragma once

// Binary byte units (IEC 80000-13): memory sizes are reported in GiB, as nvidia-smi and the
// frameworks print them, and nccl-tests' K/M/G sizes are 1024-based.

namespace capsim {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kTiB = 1024.0 * kGiB;

}  // namespace capsim
