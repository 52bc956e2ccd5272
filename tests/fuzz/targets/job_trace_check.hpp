// The job-trace targets (one per format `capsim whatif` imports) share one body.
#pragma once

#include <cstddef>
#include <cstdint>

#include "traces/job_trace.hpp"

namespace capsim::fuzz {

// Reads `data` as a trace of `format` and aborts unless the jobs it accepts are ordered by
// submit time from 0 with finite times and 1 <= min_gpus <= max_gpus.
void check_job_trace(traces::JobTraceFormat format, const std::uint8_t* data, std::size_t size);

}  // namespace capsim::fuzz
