// The plan's sensitivity: each move reaches the estimator (a NIC move re-times the winner as
// the estimator times it with that NIC), moves act in the direction they must (slower hardware
// never shortens the run), a uniform price move scales cost alone, the failure rate needs the
// goodput model, and the robust choice's worst case is never worse than the winner's. Also the
// CLI's table, JSON and report.
#include "planner/sensitivity.hpp"

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "planner/plan_io.hpp"
#include "planner/planner.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "tests/cli/run_capsim.hpp"
#include "tests/planner/skewed_confirmer.hpp"
#include "tests/test_paths.hpp"

namespace capsim::planner {
namespace {

using capsim::testing::kSourceDir;

PlanSpec small_plan() {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.node_counts = {8, 16, 32};
  return plan;
}

PlanResult run(const PlanSpec& plan, bool confirm) {
  PlanOptions options;
  options.jobs = 2;
  if (confirm)
    options.confirm = testing::skewed_confirmer(0.03);
  return run_plan(plan, options);
}

std::vector<SensitivityCase> cases_of(const Sensitivity& s, SensitivityFactor factor) {
  std::vector<SensitivityCase> out;
  for (const SensitivityCase& c : s.cases) {
    if (c.factor == factor)
      out.push_back(c);
  }
  return out;
}

TEST(SensitivityTest, EveryFactorAndChangeOnce) {
  const PlanSpec plan = small_plan();
  const PlanResult result = run(plan, false);
  const auto s = plan_sensitivity(plan, result);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->cases.size(), kSensitivityFactors.size() * kSensitivityChanges.size());
  for (const SensitivityFactor f : kSensitivityFactors) {
    const auto cases = cases_of(*s, f);
    ASSERT_EQ(cases.size(), kSensitivityChanges.size()) << to_string(f);
    for (size_t i = 0; i < cases.size(); ++i)
      EXPECT_EQ(cases[i].change, kSensitivityChanges[i]);
  }
}

// A NIC move re-times the winner exactly as the estimator times its scenario with that NIC
// (screen only, goodput off: the all-in time is the steady time, proportional to the step).
TEST(SensitivityTest, NicMoveIsTheEstimatorsRatio) {
  PlanSpec plan = small_plan();
  plan.failure.reset();
  const PlanResult result = run(plan, false);
  const auto s = plan_sensitivity(plan, result);
  ASSERT_TRUE(s);
  const RankedEntry& winner = result.ranked.front();
  Scenario sc = candidate_scenario(plan, result.candidates[winner.candidate].candidate);
  ASSERT_GT(sc.cluster.num_nodes, 1);
  const HardwareProfile profile = io::resolve_profile(sc);
  const double planned = estimate::estimate_iteration(sc, profile).iteration_time_s;
  sc.cluster.nic_bandwidth_bytes_per_s *= 0.75;
  const double slower = estimate::estimate_iteration(sc, profile).iteration_time_s;
  EXPECT_GT(slower, planned);  // the winner's layout crosses the network
  const SensitivityCase c = cases_of(*s, SensitivityFactor::kNicBandwidth).front();
  EXPECT_NEAR(c.wall_time_s, winner.wall_time_s * slower / planned, 1e-9 * c.wall_time_s);
}

// Less of any hardware input never shortens the run; more never lengthens it.
TEST(SensitivityTest, SlowerHardwareNeverShortensTheRun) {
  const PlanSpec plan = small_plan();
  const PlanResult result = run(plan, true);
  const auto s = plan_sensitivity(plan, result);
  ASSERT_TRUE(s);
  for (const SensitivityFactor f :
       {SensitivityFactor::kNicBandwidth, SensitivityFactor::kKernelEfficiency,
        SensitivityFactor::kHbmBandwidth}) {
    const auto cases = cases_of(*s, f);
    const double nominal = result.ranked.front().wall_time_s;
    EXPECT_GE(cases[0].wall_time_s, cases[1].wall_time_s) << to_string(f);
    EXPECT_GE(cases[1].wall_time_s, nominal * (1 - 1e-12)) << to_string(f);
    EXPECT_GE(nominal, cases[2].wall_time_s * (1 - 1e-12)) << to_string(f);
    EXPECT_GE(cases[2].wall_time_s, cases[3].wall_time_s) << to_string(f);
  }
  // Kernels are most of a step: a quarter slower costs the run at least a tenth.
  EXPECT_GT(cases_of(*s, SensitivityFactor::kKernelEfficiency)[0].wall_time_s,
            1.1 * result.ranked.front().wall_time_s);
}

// Every price moves alike: the winner stays first, its days stay, its cost scales.
TEST(SensitivityTest, UniformPriceMoveScalesCostOnly) {
  const PlanSpec plan = small_plan();
  const PlanResult result = run(plan, false);
  const auto s = plan_sensitivity(plan, result);
  ASSERT_TRUE(s);
  const RankedEntry& winner = result.ranked.front();
  for (const SensitivityCase& c : cases_of(*s, SensitivityFactor::kPrice)) {
    EXPECT_EQ(c.rank, 1);
    EXPECT_EQ(c.winner, 0U);
    EXPECT_DOUBLE_EQ(c.wall_time_s, winner.wall_time_s);
    EXPECT_NEAR(c.cost_usd, winner.cost_usd * (1.0 + c.change), 1e-9 * winner.cost_usd);
  }
}

TEST(SensitivityTest, FailureRateNeedsTheGoodputModel) {
  PlanSpec plan = small_plan();
  ASSERT_TRUE(plan.failure);
  const auto with = plan_sensitivity(plan, run(plan, false));
  ASSERT_TRUE(with);
  const auto rates = cases_of(*with, SensitivityFactor::kFailureRate);
  for (size_t i = 0; i + 1 < rates.size(); ++i) {
    EXPECT_TRUE(rates[i].applies);
    EXPECT_LT(rates[i].wall_time_s, rates[i + 1].wall_time_s);  // more failures, longer run
  }
  plan.failure.reset();
  const auto without = plan_sensitivity(plan, run(plan, false));
  ASSERT_TRUE(without);
  for (const SensitivityCase& c : cases_of(*without, SensitivityFactor::kFailureRate))
    EXPECT_FALSE(c.applies);
}

// The robust choice is chosen by its worst case: never worse than the winner's on misses, and
// on the worst value when the misses tie.
TEST(SensitivityTest, RobustChoiceIsNoWorseThanTheWinnerInItsWorstCase) {
  int checked = 0;
  for (const double days : {12.0, 16.0, 30.0}) {
    PlanSpec plan = small_plan();
    plan.deadline_s = days * 86400.0;
    const PlanResult result = run(plan, true);
    const auto s = plan_sensitivity(plan, result);
    if (!s)
      continue;
    ++checked;
    EXPECT_LE(s->robust_misses, s->nominal_misses) << days;
    if (s->robust_misses == s->nominal_misses) {
      EXPECT_LE(s->robust_worst, s->nominal_worst) << days;
    }
    if (s->robust == 0) {
      EXPECT_EQ(s->robust_worst, s->nominal_worst);
    }
  }
  EXPECT_GE(checked, 2);  // the deadlines leave winners to judge
}

TEST(SensitivityTest, NoneWithoutAWinner) {
  PlanSpec plan = small_plan();
  plan.deadline_s = 3600.0;
  const PlanResult result = run(plan, false);
  ASSERT_FALSE(result.ranked.empty() && result.ranked.front().meets_target);
  EXPECT_FALSE(plan_sensitivity(plan, result));
}

TEST(SensitivityTest, CliPrintsTableJsonAndReport) {
  const std::string plan = kSourceDir + "/scenarios/plans/llama70b-pareto.json";
  const auto table =
      capsim::testing::run_capsim("plan " + plan + " --engine analytic --sensitivity");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("Sensitivity of the winner"), std::string::npos);
  EXPECT_NE(table.out.find("kernel_efficiency"), std::string::npos);
  EXPECT_NE(table.out.find("Robust choice:"), std::string::npos);

  const auto json =
      capsim::testing::run_capsim("plan " + plan + " --engine analytic --sensitivity --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const auto doc = io::JsonReader::parse_text(json.out, "plan --json");
  const auto& sens = doc.at("sensitivity");
  EXPECT_EQ(sens.at("cases").size(), 20U);
  EXPECT_EQ(sens.at("cases").at(0).at("factor"), "nic_bandwidth");
  EXPECT_EQ(sens.at("cases").at(0).at("change"), -0.25);
  EXPECT_TRUE(sens.at("robust").contains("entry"));
  EXPECT_TRUE(sens.at("nominal").contains("moves_missing_target"));

  const auto plain = capsim::testing::run_capsim("plan " + plan + " --engine analytic --json");
  ASSERT_EQ(plain.exit_code, 0);
  EXPECT_FALSE(io::JsonReader::parse_text(plain.out, "plan --json").contains("sensitivity"));
  EXPECT_EQ(plain.out.find("Sensitivity"), std::string::npos);

  const std::string report = ::testing::TempDir() + "sensitivity-report.html";
  const auto html = capsim::testing::run_capsim(
      "plan " + plan + " --engine analytic --sensitivity --report " + report);
  ASSERT_EQ(html.exit_code, 0) << html.out;
  std::ifstream in(report);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* part :
       {"<h2>Sensitivity</h2>", "<svg id=\"tornado\"", ">kernel_efficiency</text>",
        "id=\"sensitivity-winner\"", "<p id=\"robust\">Robust choice:"})
    EXPECT_NE(page.find(part), std::string::npos) << part;
}

}  // namespace
}  // namespace capsim::planner
