// The planner against the event engine (in forked child processes): it
// finds the true optimum of a small space, and the default plan's winner matches its golden file
// (regenerate with CAPSIM_UPDATE_GOLDEN=1 ctest -R Golden).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"

#include "io/json_reader.hpp"
#include "tests/test_paths.hpp"

namespace capsim::planner {
namespace {

using capsim::testing::kSourceDir;
using capsim::testing::kTestDataDir;

PlanSpec small_space() {
  PlanSpec plan = load_plan(kTestDataDir + "/plans/small.json");
  plan.instances = {{"p4de.24xlarge", {{Pricing::kOnDemand, 27.44705}}},
                    {"p5.48xlarge", {{Pricing::kOnDemand, 55.04}}}};
  plan.node_counts = {1, 2};
  plan.deadline_s = 1000 * 86400.0;  // every group is confirmed
  SearchSpace& s = plan.space;
  s.tensor = {1, 2, 8};
  s.pipeline = {1, 2};
  s.schedule = {Schedule::kOneFOneB};
  s.micro_batch_size = {1, 4};
  s.recompute = {Recompute::kNone, Recompute::kFull};
  s.zero_stage = {0, 1};
  s.sequence_parallel = {false};
  return plan;
}

TEST(PlannerEventTest, FindsTheOptimumOfExhaustiveEventSimulation) {
  PlanSpec plan = small_space();
  // Exhaustive: every feasible candidate (K large enough to keep them all), each simulated.
  PlanSpec all = plan;
  all.confirm_top_k = 64;
  PlanOptions exhaustive;
  exhaustive.jobs = 2;
  exhaustive.confirm = forked_confirmer(2);
  const PlanResult every = run_plan(all, exhaustive);
  ASSERT_TRUE(every.event_available);
  ASSERT_EQ(static_cast<long long>(every.candidates.size()), every.screened);
  ASSERT_GT(every.screened, 20);
  double best_cost = std::numeric_limits<double>::infinity();
  std::string best_name;
  for (const auto& e : every.ranked) {
    const auto& c = every.candidates[e.candidate];
    ASSERT_TRUE(c.confirmed) << c.confirm_error;
    if (e.cost_usd < best_cost) {
      best_cost = e.cost_usd;
      best_name = candidate_scenario(plan, c.candidate).name;
    }
  }
  // The planner: screen everything, confirm only the best 2 per (instance, node count).
  plan.confirm_top_k = 2;
  PlanOptions opts;
  opts.jobs = 2;
  opts.confirm = forked_confirmer(2);
  const PlanResult r = run_plan(plan, opts);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_LT(r.confirmations, every.confirmations);
  const ScreenedCandidate& best = r.candidates[r.ranked[0].candidate];
  EXPECT_TRUE(best.confirmed);
  EXPECT_EQ(candidate_scenario(plan, best.candidate).name, best_name);
  EXPECT_NEAR(r.ranked[0].cost_usd, best_cost, 1e-9 * best_cost);
  std::printf("exhaustive: %d event runs; planner: %d; optimum %s at $%.2f\n", every.confirmations,
              r.confirmations, best_name.c_str(), best_cost);
}

// Runs `plan` with two confirmation children and compares its best entry with `golden`
// (scenarios/plans/expected/), which CAPSIM_UPDATE_GOLDEN=1 rewrites.
void expect_best_as_golden(const PlanSpec& plan, const std::string& golden) {
  PlanOptions opts;
  opts.jobs = 2;
  opts.confirm = forked_confirmer(2);
  const PlanResult r = run_plan(plan, opts);
  const nlohmann::json out = plan_to_json(plan, r, 3, false);
  ASSERT_FALSE(out.at("best").is_null());
  nlohmann::json best = out.at("best");
  if (std::getenv("CAPSIM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden) << nlohmann::json{{"best", best}}.dump(2) << "\n";
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  const nlohmann::json expected = io::JsonReader::parse_file(golden).at("best");
  // The winning configuration must be the same; its numbers may move within 2% as the cost
  // models are refined (regenerate and review the diff when they move more).
  for (const char* key : {"instance", "pricing", "num_nodes", "layout", "engine"}) {
    EXPECT_EQ(best.at(key), expected.at(key)) << key;
  }
  for (const char* key : {"iteration_time_s", "time_to_train_days", "cost_usd", "mfu"}) {
    const double want = expected.at(key).get<double>();
    EXPECT_NEAR(best.at(key).get<double>(), want, 0.02 * std::fabs(want)) << key;
  }
}

TEST(GoldenTest, DefaultPlan) {
  expect_best_as_golden(read_plan_text(default_plan_text(), "<default plan>"),
                        kSourceDir + "/scenarios/plans/expected/default.json");
}

// The shipped comparisons of H200, B200 and GB200 NVL72 capacity, dense and mixture-of-experts.
TEST(GoldenTest, Llama405BHardwareComparisonPlan) {
  expect_best_as_golden(load_plan(kSourceDir + "/scenarios/plans/llama405b-h200-b200-gb200.json"),
                        kSourceDir + "/scenarios/plans/expected/llama405b-h200-b200-gb200.json");
}

TEST(GoldenTest, Qwen3MoeHardwareComparisonPlan) {
  expect_best_as_golden(load_plan(kSourceDir + "/scenarios/plans/qwen3-235b-h200-b200-gb200.json"),
                        kSourceDir + "/scenarios/plans/expected/qwen3-235b-h200-b200-gb200.json");
}

TEST(GoldenTest, DeepSeekV3Plan) {
  expect_best_as_golden(load_plan(kSourceDir + "/scenarios/plans/deepseek-v3-h100.json"),
                        kSourceDir + "/scenarios/plans/expected/deepseek-v3-h100.json");
}

}  // namespace
}  // namespace capsim::planner
