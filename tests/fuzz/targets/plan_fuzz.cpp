// `capsim plan --engine analytic FILE`: the plan reader (capsim.plan/v1) on any bytes, then the
// search and both reports for a plan whose search space is small enough to run per input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"

#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {

// Layouts searched per input at most: a few milliseconds of screening (the default plan's
// hundred thousand take about a second, which would stall the fuzzer).
constexpr double kMaxLayouts = 4096;

double layouts(const capsim::planner::PlanSpec& plan) {
  const auto& s = plan.space;
  double n = 1;
  for (const size_t k :
       {plan.instances.size(), plan.node_counts.size(), plan.global_batch_sizes.size(),
        s.tensor.size(), s.pipeline.size(), s.virtual_pipeline_stages.size(),
        s.micro_batch_size.size(), s.context.size(), s.schedule.size(), s.recompute.size(),
        s.zero_stage.size(), s.sequence_parallel.size(), s.precision.size()})
    n *= static_cast<double>(k);
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("plan.json", fuzz::as_text(data, size));
    const planner::PlanSpec plan = planner::load_plan(path);
    if (layouts(plan) > kMaxLayouts)
      return;
    planner::PlanOptions options;
    options.jobs = 1;
    const planner::PlanResult result = planner::run_plan(plan, options);
    fuzz::require_finite(planner::plan_to_json(plan, result, 0, false), "plan_to_json");
    (void)planner::plan_table(plan, result, 0);
  });
  return 0;
}
