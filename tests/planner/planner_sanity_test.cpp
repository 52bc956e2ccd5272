// Sanity against the real world: the planner's choices should look like what
// practitioners chose. (1) GPT-3 175B on 1,024 A100: Megatron-LM's published mesh (TP8 PP8
// DP16, GBS 1536; Narayanan et al. SC'21) ranks among the planner's best. (2) The planner's
// ranking of the measured configurations in data/validation/dev.json correlates with their
// measured throughput (Spearman). Results are recorded in docs/planner.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/rank_correlation.hpp"
#include "planner/plan_io.hpp"
#include "planner/planner.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/profile_io.hpp"
#include "io/validation_io.hpp"
#include "tests/test_paths.hpp"

namespace capsim::planner {
namespace {

using capsim::testing::kShippedDataDir;
using capsim::testing::kSourceDir;

// Spearman's rank correlation (models/rank_correlation.hpp).
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  return spearman_rank_correlation(a, b);
}

// Megatron's published GPT-3 mesh (Narayanan et al. 2021) should be among the best layouts the
// planner finds for it: in the top 5% of the screened candidates and within 7% of the best
// time (the screen replays the schedule; the event engine puts it 5.9% behind the best, 17.32 s
// vs 16.29 s).
TEST(PlannerSanityTest, MegatronGpt3LayoutRanksAmongTheBest) {
  PlanSpec plan = load_plan(kSourceDir + "/scenarios/plans/gpt3-175b-1024-a100.json");
  const PlanResult r = run_plan(plan, {});
  ASSERT_EQ(static_cast<long long>(r.candidates.size()), r.screened);  // all kept
  size_t rank = 0;
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const Parallelism& p = r.candidates[r.ranked[i].candidate].candidate.parallelism;
    if (p.tensor == 8 && p.pipeline == 8 && p.data == 16) {
      rank = i + 1;
      break;
    }
  }
  ASSERT_GT(rank, 0u);
  const double best_s = r.candidates[r.ranked[0].candidate].analytic.iteration_time_s;
  const double megatron_s = r.candidates[r.ranked[rank - 1].candidate].analytic.iteration_time_s;
  std::printf(
      "GPT-3 175B / 1,024 A100: TP8 PP8 DP16 first at rank %zu of %lld screened; "
      "%.2f s vs best %.2f s (+%.1f%%)\n",
      rank, r.screened, megatron_s, best_s, 100.0 * (megatron_s / best_s - 1.0));
  EXPECT_LE(static_cast<double>(rank), 0.05 * static_cast<double>(r.screened));
  EXPECT_LT(megatron_s, 1.07 * best_s);
}

TEST(PlannerSanityTest, RankingCorrelatesWithMeasuredThroughput) {
  const auto cases = io::load_validation_cases(kShippedDataDir + "/validation/dev.json");
  // Groups of configurations of the same model on the same hardware: the choice a planner
  // makes. Megatron SC'21: by model (Table 2 compares PTD-P and ZeRO-3 at three sizes);
  // MPT: by (model, GPU) across sequence lengths, micro-batches and node counts.
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  std::vector<double> all_pred;
  std::vector<double> all_meas;
  for (const auto& c : cases) {
    const SimulationResult r =
        estimate::estimate_iteration(c.scenario, io::resolve_profile(c.scenario));
    const std::string key =
        c.group + " | " + c.scenario.model.name + " | " + c.scenario.cluster.gpu.name;
    groups[key].first.push_back(r.tokens_per_s_per_gpu);
    groups[key].second.push_back(c.measured_tokens_per_s_per_gpu);
    all_pred.push_back(r.tokens_per_s_per_gpu);
    all_meas.push_back(c.measured_tokens_per_s_per_gpu);
  }
  double weighted = 0.0;
  double weight = 0.0;
  std::vector<double> rhos;
  for (const auto& [key, v] : groups) {
    if (v.first.size() < 4)
      continue;
    const double rho = spearman(v.first, v.second);
    std::printf("  %-60s n=%2zu  rho=%.3f\n", key.c_str(), v.first.size(), rho);
    weighted += rho * static_cast<double>(v.first.size());
    weight += static_cast<double>(v.first.size());
    rhos.push_back(rho);
  }
  std::sort(rhos.begin(), rhos.end());
  const double median = rhos[rhos.size() / 2];
  const double pooled = spearman(all_pred, all_meas);
  std::printf(
      "pooled over %zu cases: rho=%.3f; over %zu groups: median %.3f, size-weighted "
      "mean %.3f\n",
      all_pred.size(), pooled, rhos.size(), median, weighted / weight);
  EXPECT_GT(pooled, 0.9);
  // Not every group: the Megatron SC'21 groups (PTD-P vs ZeRO-3 at 384-1536 GPUs) rank
  // negatively because both engines find ZeRO-3 at scale far cheaper than it measured
  // (docs/planner.md, "Sanity"); that is an estimator gap, reported, not hidden.
  EXPECT_GE(median, 0.8);
}

}  // namespace
}  // namespace capsim::planner
