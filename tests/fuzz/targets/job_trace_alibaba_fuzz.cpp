// `capsim whatif` with a "alibaba-openb" trace (the what-if's trace "format"): the job-trace reader
// on any text.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/targets/job_trace_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  capsim::fuzz::check_job_trace(capsim::traces::JobTraceFormat::kAlibabaOpenb, data, size);
  return 0;
}
