// Laws a planner must obey whatever its cost model says: asking for less (a later deadline,
// fewer tokens, a smaller model) or offering more (more node counts, another instance type, a
// lower price) never makes the chosen plan worse. Each law is checked on the embedded default
// plan over a reduced node range, screen only and with a deterministic stand-in for the event
// engine (the confirmation set depends on the target, which is where such a law could break).
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/analytic_estimator.hpp"
#include "models/io/profile_io.hpp"
#include "planner/plan_io.hpp"
#include "planner/planner.hpp"

namespace capsim::planner {
namespace {

constexpr double kDay = 86400.0;

PlanSpec law_plan() {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.node_counts = {2, 4, 8, 16, 32};
  return plan;
}

// A stand-in for the event engine: the screen's numbers, 3% slower per pipeline stage beyond
// the first, so confirmed and screened rankings differ.
ConfirmFn pipeline_penalised_confirmer() {
  return [](const std::vector<Scenario>& scenarios, const ProgressFn&) {
    ConfirmBatch batch;
    for (const auto& sc : scenarios) {
      const SimulationResult r = estimate_iteration(sc, resolve_profile(sc));
      const double factor = 1.0 + 0.03 * (sc.parallelism.pipeline - 1);
      ConfirmOutcome o;
      o.ok = true;
      o.evaluation = {"event",        r.iteration_time_s * factor, r.tokens_per_s / factor,
                      r.mfu / factor, r.memory.peak_bytes,         r.memory.capacity_bytes};
      batch.outcomes.push_back(o);
    }
    return batch;
  };
}

// The plan's answer: its first-ranked entry when that meets the target, else nothing.
struct Answer {
  double cost_usd = 0.0;
  double wall_time_s = 0.0;
};

std::optional<Answer> answer(const PlanSpec& plan, bool confirm) {
  PlanOptions options;
  options.jobs = 2;
  if (confirm)
    options.confirm = pipeline_penalised_confirmer();
  const PlanResult r = run_plan(plan, options);
  if (r.ranked.empty() || !r.ranked.front().meets_target)
    return std::nullopt;
  return Answer{r.ranked.front().cost_usd, r.ranked.front().wall_time_s};
}

// Runs `plans`, ordered from the most to the least demanding, and checks that the objective's
// key never rises along the list once an answer exists (an easier plan never loses its
// answer). Returns how many distinct keys were seen, so a law test can insist the variation
// changed the answer at least once (else it checked nothing).
size_t expect_never_worse(const std::vector<PlanSpec>& plans, bool confirm,
                          const std::function<double(const Answer&)>& key) {
  std::optional<double> previous;
  std::set<double> distinct;
  for (size_t i = 0; i < plans.size(); ++i) {
    const std::optional<Answer> a = answer(plans[i], confirm);
    if (!a) {
      EXPECT_FALSE(previous) << "plan " << i << " lost the answer a harder plan had";
      continue;
    }
    const double k = key(*a);
    if (previous) {
      EXPECT_LE(k, *previous * (1 + 1e-12)) << "plan " << i << " answers worse";
    }
    previous = k;
    distinct.insert(k);
  }
  return distinct.size();
}

double cost(const Answer& a) {
  return a.cost_usd;
}
double wall_time(const Answer& a) {
  return a.wall_time_s;
}

class PlannerLawTest : public ::testing::TestWithParam<bool> {};

TEST_P(PlannerLawTest, ALaterDeadlineNeverCostsMore) {
  std::vector<PlanSpec> plans;
  for (double days : {10.0, 20.0, 40.0, 80.0, 160.0}) {
    PlanSpec plan = law_plan();
    plan.deadline_s = days * kDay;
    plans.push_back(plan);
  }
  EXPECT_GE(expect_never_worse(plans, GetParam(), cost), 2u);
}

TEST_P(PlannerLawTest, FewerTokensNeverCostMore) {
  std::vector<PlanSpec> plans;
  for (double tokens : {4e12, 2e12, 1e12, 0.5e12}) {
    PlanSpec plan = law_plan();
    plan.tokens = tokens;
    plans.push_back(plan);
  }
  EXPECT_GE(expect_never_worse(plans, GetParam(), cost), 3u);
}

TEST_P(PlannerLawTest, MoreNodeCountsNeverCostMoreOrTakeLonger) {
  const std::vector<std::vector<int>> ranges = {{2}, {2, 4}, {2, 4, 8}, {2, 4, 8, 16, 32}};
  std::vector<PlanSpec> cheapest;
  std::vector<PlanSpec> fastest;
  for (const auto& nodes : ranges) {
    PlanSpec plan = law_plan();
    plan.deadline_s = 0.0;  // the smallest cluster must have an answer too
    plan.node_counts = nodes;
    cheapest.push_back(plan);
    plan.objective = Objective::kMinTime;
    fastest.push_back(plan);
  }
  EXPECT_GE(expect_never_worse(cheapest, GetParam(), cost), 2u);
  EXPECT_GE(expect_never_worse(fastest, GetParam(), wall_time), 3u);
}

TEST_P(PlannerLawTest, AnotherInstanceTypeNeverCostsMore) {
  PlanSpec one = law_plan();
  one.deadline_s = 80 * kDay;               // p4d alone needs ~50 days on 32 nodes
  one.instances = {one.instances.front()};  // p4d alone
  PlanSpec all = law_plan();
  all.deadline_s = one.deadline_s;
  ASSERT_GT(all.instances.size(), 1u);
  EXPECT_EQ(expect_never_worse({one, all}, GetParam(), cost), 2u);
}

TEST_P(PlannerLawTest, ALowerPriceNeverCostsMore) {
  std::vector<PlanSpec> plans;
  for (double scale : {1.0, 0.8, 0.6, 0.4}) {
    PlanSpec plan = law_plan();
    for (auto& instance : plan.instances) {
      if (instance.name == "p5.48xlarge") {
        for (auto& price : instance.prices)
          price.usd_per_node_hour *= scale;
      }
    }
    plans.push_back(plan);
  }
  EXPECT_GE(expect_never_worse(plans, GetParam(), cost), 3u);
}

TEST_P(PlannerLawTest, ASmallerModelNeverCostsMore) {
  std::vector<PlanSpec> plans;
  for (int ffn : {36864, 32768, 28672, 24576}) {  // every TP degree up to 8 divides each
    PlanSpec plan = law_plan();
    plan.model.ffn_hidden_size = ffn;
    plans.push_back(plan);
  }
  EXPECT_GE(expect_never_worse(plans, GetParam(), cost), 3u);
}

TEST_P(PlannerLawTest, RarerFailuresNeverCostMore) {
  std::vector<PlanSpec> plans;
  for (double mtbf_hours : {2e3, 1e4, 5e4, 2.5e5}) {
    PlanSpec plan = law_plan();
    plan.failure = FailureModel{mtbf_hours * 3600.0, 60.0, 600.0};
    plans.push_back(plan);
  }
  EXPECT_GE(expect_never_worse(plans, GetParam(), cost), 3u);
}

INSTANTIATE_TEST_SUITE_P(ScreenAndConfirmed, PlannerLawTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return std::string(param_info.param ? "Confirmed" : "Screen");
                         });

}  // namespace
}  // namespace capsim::planner
