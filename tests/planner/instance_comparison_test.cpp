// The by-instance comparison of a plan over several kinds of hardware: each option's cheapest
// and fastest entries are the minima over the ranked entries of that option that meet the
// target, and the per-GPU figures follow from them.
#include "planner/instance_comparison.hpp"

#include <string>

#include <gtest/gtest.h>

#include "planner/plan_io.hpp"
#include "planner/planner.hpp"

namespace capsim::planner {
namespace {

const std::string kPlans = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/plans/";

// The shipped H200/B200/GB200 comparison, ranked on the analytic screen alone.
PlanResult screened(const PlanSpec& plan) {
  PlanOptions opts;
  opts.jobs = 2;
  return run_plan(plan, opts);
}

TEST(InstanceComparisonTest, EachOptionKeepsItsCheapestAndFastestEntry) {
  for (const char* file : {"llama405b-h200-b200-gb200.json", "qwen3-235b-h200-b200-gb200.json"}) {
    const PlanSpec plan = load_plan(kPlans + file);
    const PlanResult r = screened(plan);
    const std::vector<InstanceOption> options = compare_instances(plan, r);
    ASSERT_EQ(options.size(), plan.instances.size()) << file;  // one pricing option each
    for (const InstanceOption& o : options) {
      ASSERT_TRUE(o.cheapest.has_value()) << file << " " << plan.instances[o.instance].name;
      const RankedEntry& cheap = r.ranked[*o.cheapest];
      const RankedEntry& fast = r.ranked[*o.fastest];
      for (const RankedEntry& e : r.ranked) {
        const ScreenedCandidate& c = r.candidates[e.candidate];
        if (!e.meets_target || static_cast<size_t>(c.candidate.instance) != o.instance)
          continue;
        EXPECT_GE(e.cost_usd, cheap.cost_usd);
        EXPECT_GE(e.wall_time_s, fast.wall_time_s);
      }
      // $/M tokens = $/GPU-h / (tokens/s/GPU x 3600) x 1e6, and the steady cost follows from it.
      const double tokens = plan.tokens;
      const double steady_cost = o.usd_per_million_tokens * tokens / 1e6;
      const int gpus = r.candidates[cheap.candidate].candidate.parallelism.num_gpus();
      EXPECT_NEAR(steady_cost, gpus * o.usd_per_gpu_hour * cheap.time_to_train_s / 3600.0,
                  0.01 * steady_cost)
          << file;
    }
    const std::string table = instance_comparison_table(plan, r);
    EXPECT_NE(table.find("cheapest: "), std::string::npos) << table;
    EXPECT_NE(table.find("fastest: "), std::string::npos) << table;
  }
}

// A plan over one instance has nothing to compare: no section.
TEST(InstanceComparisonTest, OneInstanceHasNoSection) {
  const PlanSpec plan = load_plan(std::string(CAPSIM_SOURCE_DIR) + "/tests/data/plans/small.json");
  EXPECT_EQ(instance_comparison_table(plan, screened(plan)), "");
}

}  // namespace
}  // namespace capsim::planner
