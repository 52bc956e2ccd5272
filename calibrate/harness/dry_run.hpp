#pragma once

#include <string>

#include "calibrate/harness/harness.hpp"

namespace capsim::calibrate::harness {

// `capsim-calibrate ... --dry-run`: what a run would measure, checked like a real run but
// without touching a GPU, so a sweep can be reviewed (and its GPU time judged) on a login node.

// Per collective: the sizes the sweep runs on `ranks` ranks (plan_sizes), their range, and the
// collective launches (warm-up + timed, twice with in-place). REQUIRES: validate(sweep) passed.
[[nodiscard]] std::string describe_plan(const NcclSweep& sweep, int ranks);
// The shapes per dtype (fp8 shapes cuBLASLt cannot run are listed as skipped) and the GEMM runs.
[[nodiscard]] std::string describe_plan(const GemmSweep& sweep);
// The GEMM shapes, the collectives beside them and the GEMM runs alone and beside.
[[nodiscard]] std::string describe_plan(const OverlapRun& run);

}  // namespace capsim::calibrate::harness
