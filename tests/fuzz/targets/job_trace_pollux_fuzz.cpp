// `capsim whatif` with a "pollux-workload" trace (the what-if's trace "format"): the job-trace
// reader on any text.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/targets/job_trace_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  capsim::fuzz::check_job_trace(capsim::traces::JobTraceFormat::kPolluxWorkload, data, size);
  return 0;
}
