// Random valid plans (models, instances, node counts, batches, targets, failure models, search
// restrictions) through the screen: each must run, give the same report on one thread and on
// two, and keep the report's promises: a winner meets the target and fits, every ranked
// entry's numbers are physical, and a plan without a winner says why.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"

namespace capsim::planner {
namespace {

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& values) {
  return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
}

// One random plan that the plan rules accept.
nlohmann::json random_plan(std::mt19937_64& rng, int index) {
  const int heads = pick(rng, std::vector<int>{8, 16, 24, 32, 48, 64});
  const int head_dim = pick(rng, std::vector<int>{64, 128});
  const int hidden = heads * head_dim;
  const bool swiglu = rng() % 2 == 0;
  nlohmann::json model = {{"name", "sweep-" + std::to_string(index)},
                          {"num_layers", pick(rng, std::vector<int>{2, 5, 12, 24, 32, 61})},
                          {"hidden_size", hidden},
                          {"num_attention_heads", heads},
                          {"num_kv_heads", pick(rng, std::vector<int>{heads, 8})},
                          {"ffn_hidden_size", swiglu ? hidden / 3 * 8 / 64 * 64 : 4 * hidden},
                          {"ffn_activation", swiglu ? "swiglu" : "gelu"},
                          {"seq_length", pick(rng, std::vector<int>{1024, 2048, 8192})},
                          {"vocab_size", pick(rng, std::vector<int>{32000, 50257, 128256})}};
  nlohmann::json target = {{"tokens", pick(rng, std::vector<std::string>{"5B", "300B", "2T"})}};
  switch (rng() % 3) {
    case 0:
      target["deadline"] = pick(rng, std::vector<std::string>{"1d", "30d", "365d"});
      break;
    case 1:
      target["min_tokens_per_s"] = pick(rng, std::vector<std::string>{"20k", "2M"});
      break;
    default:
      target["deadline"] = "90d";
      target["min_tokens_per_s"] = "50k";
  }
  const std::vector<std::string> catalog{"p4d.24xlarge",  "p4de.24xlarge", "p5.48xlarge",
                                         "p5en.48xlarge", "dgx-a100",      "dgx-h100"};
  nlohmann::json instances = nlohmann::json::array({pick(rng, catalog)});
  const std::string second = pick(rng, catalog);
  if (second != instances[0])
    instances.push_back(second);
  nlohmann::json plan = {
      {"schema", "capsim.plan/v1"},
      {"name", "sweep-" + std::to_string(index)},
      {"model", model},
      {"target", target},
      {"instances", instances},
      {"num_nodes", rng() % 2 == 0
                        ? nlohmann::json{{"min", 1}, {"max", pick(rng, std::vector<int>{1, 4, 16})}}
                        : nlohmann::json{{"values", {2, 3}}}},
      {"global_batch", rng() % 2 == 0
                           ? nlohmann::json{{"sequences", pick(rng, std::vector<int>{16, 256})}}
                           : nlohmann::json{{"min_tokens", "1M"}, {"max_tokens", "4M"}}},
      {"objective", pick(rng, std::vector<std::string>{"min_cost", "min_time", "pareto"})}};
  if (rng() % 3 == 0)
    plan["failure_model"] = {{"gpu_mtbf", "20000h"}, {"checkpoint_save", "2min"}};
  if (rng() % 3 == 0)
    plan["search"] = {{"recompute", {"none"}}, {"zero_stage", {0, 1}}};
  if (rng() % 4 == 0)
    plan["memory_headroom"] = "6GiB";
  return plan;
}

// Every ranked entry's numbers are physical: a positive, finite step below the peak, a layout
// that fits, and a wall time no shorter than the failure-free one.
void expect_physical_entries(const PlanSpec& plan, const PlanResult& r) {
  for (const RankedEntry& e : r.ranked) {
    const Evaluation& eval = r.candidates[e.candidate].final_evaluation();
    EXPECT_TRUE(std::isfinite(eval.iteration_time_s) && eval.iteration_time_s > 0.0);
    EXPECT_GT(eval.mfu, 0.0);
    EXPECT_LT(eval.mfu, 1.0);
    EXPECT_LE(eval.peak_memory_bytes, eval.capacity_bytes - plan.memory_headroom_bytes);
    EXPECT_GE(e.wall_time_s, e.time_to_train_s);
    EXPECT_GT(e.cost_usd, 0.0);
  }
}

// A winner meets the target; without one, the report says why. Returns whether there is one.
bool expect_winner_or_reason(const PlanSpec& plan, const PlanResult& r,
                             const nlohmann::json& report) {
  if (report.at("best").is_null()) {
    EXPECT_FALSE(report.at("no_best_reason").get<std::string>().empty());
    return false;
  }
  EXPECT_FALSE(report.contains("no_best_reason"));
  const RankedEntry& best = r.ranked.front();
  EXPECT_TRUE(best.meets_target);
  EXPECT_GE(r.candidates[best.candidate].final_evaluation().tokens_per_s, plan.min_tokens_per_s);
  if (plan.deadline_s > 0.0) {
    EXPECT_LE(best.wall_time_s, plan.deadline_s);
  }
  return true;
}

TEST(PlanSweepTest, RandomPlansKeepTheReportsPromises) {
  std::mt19937_64 rng(20261126);
  int with_winner = 0;
  int without = 0;
  for (int i = 0; i < 24; ++i) {
    const nlohmann::json doc = random_plan(rng, i);
    SCOPED_TRACE(doc.dump());
    const PlanSpec plan = read_plan_text(doc.dump(), "sweep.json");
    PlanOptions one;
    one.jobs = 1;
    PlanOptions two;
    two.jobs = 2;
    const PlanResult r = run_plan(plan, one);
    const nlohmann::json report = plan_to_json(plan, r, 0, false);
    ASSERT_EQ(report, plan_to_json(plan, run_plan(plan, two), 0, false)) << "thread count";
    expect_physical_entries(plan, r);
    (expect_winner_or_reason(plan, r, report) ? with_winner : without) += 1;
  }
  // The seed draws both kinds, so both halves of the test run.
  EXPECT_GT(with_winner, 0);
  EXPECT_GT(without, 0);
}

}  // namespace
}  // namespace capsim::planner
