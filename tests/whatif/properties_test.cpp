// Laws that hold for every policy and seed, checked on seeded random workloads. Each TEST
// forks its simulations (run_all), so one TEST may run many.
#include <cmath>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "tests/whatif/whatif_test_util.hpp"
#include "whatif/results.hpp"
#include "whatif/runner.hpp"

namespace capsim::whatif {
namespace {

using testing::job;
using testing::pool;

// A random mix of rigid and elastic jobs over a day (LevelDB-style seeded generator).
std::vector<traces::JobRecord> random_jobs(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(1.0 / 600.0);
  std::lognormal_distribution<double> dur(std::log(3600.0), 0.8);
  std::discrete_distribution<int> size({30, 15, 15, 25, 10, 5});
  const int sizes[] = {1, 2, 4, 8, 16, 32};
  std::vector<traces::JobRecord> jobs;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += gap(rng);
    const int g = sizes[size(rng)];
    const bool elastic = g >= 4 && rng() % 4 == 0;
    jobs.push_back(job("j" + std::to_string(i), std::floor(t), g, std::ceil(dur(rng)),
                       elastic ? g / 2 : 0, elastic ? 2 * g : 0));
  }
  return jobs;
}

std::vector<PolicySpec> all_presets() {
  std::vector<PolicySpec> out;
  for (const auto& p : preset_names())
    out.push_back(testing::policy(p));
  return out;
}

double useful_gpu_hours(const WhatIf& w) {
  double s = 0;
  for (const auto& j : w.jobs)
    s += j.duration_s * j.gpus / 3600.0;
  return s;
}

class LawTest : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(LawTest, EveryPolicyConservesWorkAndMoney) {
  const std::uint64_t seed = GetParam();
  WhatIf w = testing::whatif({pool("od", 0, 12, 420), pool("spot", 0, 8, 300, Pricing::kSpot, 4)},
                             random_jobs(seed, 60));
  w.pools[0].boot = {420, 900};
  w.pools[0].ice_probability = 0.1;
  w.pools[1].interruptions_per_node_month = 20;
  w.pools[1].interruption_correlation = 0.3;
  w.failures.gpu_mtbf_s = 2000.0 * 3600;
  w.failures.repair = {3600, 7200};
  w.failures.detect_s = 300;
  w.failures.checkpoint_interval_s = 1200;
  w.failures.checkpoint_cost_s = 30;
  w.failures.restart_cost_s = 120;
  w.seed = seed;
  const auto runs = run_all(w, all_presets(), 1, 2);
  const double useful = useful_gpu_hours(w);
  int max_nodes = 0;
  for (const auto& p : w.pools)
    max_nodes += p.max_nodes;
  for (const auto& p : runs) {
    const PolicyResult& r = p.runs.front();
    SCOPED_TRACE(p.name);
    EXPECT_EQ(r.jobs_finished, r.jobs_total);
    // Every allocated GPU-second either advanced a job or is charged to a loss cause.
    EXPECT_NEAR(r.gpu_hours_busy, useful + r.lost.total(), 1e-6 * useful);
    EXPECT_LE(r.gpu_hours_busy, r.gpu_hours_billed + 1e-9);
    double by_pricing = 0;
    for (const auto& [k, v] : r.cost_by_pricing_usd)
      by_pricing += v;
    EXPECT_NEAR(r.cost_usd, by_pricing, 1e-9 * r.cost_usd);
    EXPECT_LE(r.queue_wait_p50_s, r.queue_wait_p95_s);
    EXPECT_LE(r.queue_wait_p95_s, r.queue_wait_p99_s);
    EXPECT_LE(r.queue_wait_p99_s, r.queue_wait_max_s);
    EXPECT_LE(r.queue_wait_mean_s, r.queue_wait_max_s);
    ASSERT_EQ(r.jct_p50_s.has_value(), r.jobs_finished > 0);
    if (r.jct_p50_s) {
      EXPECT_LE(*r.jct_p50_s, *r.jct_p95_s);
      EXPECT_LE(*r.jct_p95_s, *r.jct_max_s);
    }
    EXPECT_GE(r.queue_wait_p50_s, 0.0);
    for (const auto& s : r.timeline.samples) {
      EXPECT_LE(s.nodes_booting + s.nodes_idle + s.nodes_busy + s.nodes_draining + s.nodes_failed,
                max_nodes);
      // A job that lost a node holds its GPUs until it notices (detect), so failed nodes count.
      EXPECT_LE(s.gpus_busy, 8 * (s.nodes_busy + s.nodes_draining + s.nodes_failed));
    }
    if (p.preset == "static") {
      EXPECT_EQ(r.scale_downs, 0);
    }
  }
}

TEST_P(LawTest, AStaticPoolThatHoldsEveryJobNeverQueues) {
  // With capacity for all jobs at once and nothing failing, the static cluster starts every
  // job on submission, so no autoscaled policy can wait less.
  const std::uint64_t seed = GetParam();
  WhatIf w = testing::whatif({pool("od", 0, 128, 600)}, random_jobs(seed, 40));
  w.pools[0].boot = {300, 900};
  int total = 0;
  for (const auto& j : w.jobs)
    total += j.max_gpus;
  ASSERT_LE(total, 128 * 8 / 2);  // enough room even with fragmentation
  const auto runs = run_all(w, all_presets(), 1, 2);
  const PolicyResult& fixed = runs.front().runs.front();
  ASSERT_EQ(runs.front().preset, "static");
  EXPECT_DOUBLE_EQ(fixed.queue_wait_max_s, 0.0);
  for (const auto& p : runs) {
    EXPECT_LE(fixed.queue_wait_p50_s, p.runs.front().queue_wait_p50_s) << p.name;
    EXPECT_LE(fixed.queue_wait_p95_s, p.runs.front().queue_wait_p95_s) << p.name;
    // Autoscaled policies never bill more GPU-hours than the cluster held at its maximum.
    EXPECT_LE(p.runs.front().gpu_hours_billed, 128 * 8 * p.runs.front().end_time_s / 3600 + 1e-9);
  }
}

TEST_P(LawTest, MoreStaticNodesNeverMakeJobsWaitLonger) {
  // The same jobs on a static pool two nodes larger: each job starts no later, so no wait
  // quantile and no completion-time quantile grows (15 comparisons over the three seeds).
  const std::uint64_t seed = GetParam();
  for (const int n : {4, 6, 8, 12, 16}) {
    const WhatIf small = testing::whatif({pool("od", n, n, 600)}, random_jobs(seed, 80));
    const WhatIf big = testing::whatif({pool("od", n + 2, n + 2, 600)}, random_jobs(seed, 80));
    const PolicyResult a = run_all(small, {testing::policy("static")}, 1, 1).front().runs.front();
    const PolicyResult b = run_all(big, {testing::policy("static")}, 1, 1).front().runs.front();
    SCOPED_TRACE(std::to_string(n) + " -> " + std::to_string(n + 2) + " nodes");
    EXPECT_LE(b.queue_wait_p50_s, a.queue_wait_p50_s);
    EXPECT_LE(b.queue_wait_p95_s, a.queue_wait_p95_s);
    EXPECT_LE(b.queue_wait_max_s, a.queue_wait_max_s);
    ASSERT_TRUE(a.jct_p95_s && b.jct_p95_s);
    EXPECT_LE(*b.jct_p95_s, *a.jct_p95_s);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, LawTest, ::testing::Values(301, 302, 303));

TEST(ReplicaTest, SameSeedSameBytesAndSpreadsBracketTheMean) {
  WhatIf w = testing::whatif({pool("od", 0, 12, 420), pool("spot", 0, 8, 300, Pricing::kSpot, 4)},
                             random_jobs(11, 40));
  w.pools[0].boot = {420, 900};
  w.pools[1].interruptions_per_node_month = 20;
  w.failures.gpu_mtbf_s = 2000.0 * 3600;
  w.failures.checkpoint_interval_s = 1800;
  w.failures.checkpoint_cost_s = 30;
  const std::vector<PolicySpec> policies{testing::policy("cluster-autoscaler"),
                                         testing::policy("karpenter")};
  const auto a = summary_json(w, run_all(w, policies, 3, 2)).dump(2);
  const auto b = summary_json(w, run_all(w, policies, 3, 1)).dump(2);
  EXPECT_EQ(a, b);  // byte-identical, whatever the parallelism
  const auto j = nlohmann::json::parse(a);
  EXPECT_EQ(j.at("seeds"), nlohmann::json({1, 2, 3}));
  for (const auto& p : j.at("policies")) {
    for (const auto& key : {"cost_usd", "queue_wait_p95_s", "jct_p50_s"}) {
      const auto& s = p.at("spread").at(key);
      EXPECT_LE(s.at("min").get<double>(), p.at(key).get<double>() + 1e-6);
      EXPECT_GE(s.at("max").get<double>(), p.at(key).get<double>() - 1e-6);
      EXPECT_GE(s.at("std").get<double>(), 0.0);
    }
  }
  // Another seed changes the draws.
  w.seed = 99;
  EXPECT_NE(summary_json(w, run_all(w, policies, 3, 2)).dump(2), a);
}

}  // namespace
}  // namespace capsim::whatif
