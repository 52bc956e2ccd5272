#include "tests/fuzz/targets/job_trace_check.hpp"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/targets/fuzz_support.hpp"

namespace capsim::fuzz {

void check_job_trace(traces::JobTraceFormat format, const std::uint8_t* data, std::size_t size) {
  run_one([&] {
    traces::JobTraceOptions options;
    options.format = format;
    options.path = "trace.csv";
    std::istringstream in{std::string(as_text(data, size))};
    const std::vector<traces::JobRecord> jobs = traces::read_job_trace(options, in);
    for (size_t i = 0; i < jobs.size(); ++i) {
      const traces::JobRecord& j = jobs[i];
      require(std::isfinite(j.submit_s) && j.submit_s >= 0.0, "a job's submit time");
      require(std::isfinite(j.duration_s) && j.duration_s >= 0.0, "a job's duration");
      require(std::isfinite(j.tokens) && j.tokens >= 0.0, "a job's tokens");
      require(j.gpus >= 1 && j.min_gpus >= 1 && j.min_gpus <= j.max_gpus, "a job's GPU counts");
      require(i == 0 || jobs[i - 1].submit_s <= j.submit_s, "jobs out of submit order");
    }
  });
}

}  // namespace capsim::fuzz
