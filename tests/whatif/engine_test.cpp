// Each TEST runs at most one in-process simulation (SimGrid: one engine per process;
// gtest_discover_tests runs every TEST in its own process). Expected numbers are worked by hand.
#include "whatif/engine.hpp"

#include <gtest/gtest.h>

#include "tests/whatif/whatif_test_util.hpp"

namespace capsim::whatif {
namespace {

using testing::job;
using testing::policy;
using testing::pool;

TEST(EngineTest, StaticClusterQueuesTheThirdJob) {
  // Two 8-GPU nodes at $10/h; three 8-GPU jobs at t=0 of 1 h, 2 h, 1 h: the third starts
  // when the first ends (1 h) and ends at 2 h.
  const WhatIf w = testing::whatif(
      {pool("od", 0, 2, 600)}, {job("a", 0, 8, 3600), job("b", 0, 8, 7200), job("c", 0, 8, 3600)});
  const PolicyResult r = run_policy(w, policy("static"), 1);
  EXPECT_DOUBLE_EQ(r.end_time_s, 7200.0);
  EXPECT_NEAR(r.cost_usd, 2 * 2 * 10.0, 1e-9);
  EXPECT_NEAR(r.cost_by_pricing_usd.at("on-demand"), 40.0, 1e-9);
  EXPECT_NEAR(r.gpu_hours_billed, 32.0, 1e-9);
  EXPECT_NEAR(r.gpu_hours_busy, 32.0, 1e-9);
  EXPECT_NEAR(r.utilization, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.queue_wait_p50_s, 0.0);
  EXPECT_DOUBLE_EQ(r.queue_wait_p95_s, 3600.0);
  EXPECT_DOUBLE_EQ(r.queue_wait_max_s, 3600.0);
  EXPECT_DOUBLE_EQ(r.queue_wait_p99_s, 3600.0);
  EXPECT_DOUBLE_EQ(r.queue_wait_mean_s, 1200.0);  // (0 + 0 + 3600) / 3
  EXPECT_DOUBLE_EQ(r.jct_p50_s.value(), 7200.0);
  EXPECT_DOUBLE_EQ(r.jct_p95_s.value(), 7200.0);
  EXPECT_DOUBLE_EQ(r.jct_max_s.value(), 7200.0);
  EXPECT_NEAR(r.cost_per_useful_gpu_hour_usd.value(), 40.0 / 32.0, 1e-12);  // nothing lost
  EXPECT_EQ(r.jobs_finished, 3);
  EXPECT_EQ(r.scale_ups, 0);
  EXPECT_EQ(r.scale_downs, 0);
  EXPECT_DOUBLE_EQ(r.lost.total(), 0.0);
}

// A job larger than the pool can ever hold never runs: no job finishes, so there is no job
// completion time to report (not a time of 0).
TEST(EngineTest, NoJobFinishedMeansNoCompletionTimes) {
  const WhatIf w = testing::whatif({pool("od", 1, 1, 600)}, {job("big", 0, 16, 3600)});
  const PolicyResult r = run_policy(w, policy("static"), 1);
  EXPECT_EQ(r.jobs_finished, 0);
  EXPECT_FALSE(r.jct_p50_s.has_value());
  EXPECT_FALSE(r.jct_p95_s.has_value());
  EXPECT_FALSE(r.jct_max_s.has_value());
  EXPECT_FALSE(r.cost_per_useful_gpu_hour_usd.has_value());  // no GPU was ever busy
}

TEST(EngineTest, AutoscalerWaitsForTheBoot) {
  // Empty pool, 10 min boot: the loop launches at its first tick (t=0), the job starts at 600 s.
  const WhatIf w = testing::whatif({pool("od", 0, 2, 600)}, {job("a", 0, 8, 3600)});
  const PolicyResult r = run_policy(w, policy("cluster-autoscaler"), 1);
  EXPECT_DOUBLE_EQ(r.queue_wait_max_s, 600.0);
  EXPECT_DOUBLE_EQ(r.jct_p50_s.value(), 4200.0);
  EXPECT_EQ(r.scale_ups, 1);
  EXPECT_NEAR(r.cost_usd, 4200.0 / 3600.0 * 10.0, 1e-9);  // billed from launch to the end
  EXPECT_NEAR(r.gpu_hours_busy, 8.0, 1e-9);
}

// First fit: an elastic job held back from its smaller sizes while a node boots does not block
// a later rigid job that fits on the idle node (the 8-GPU job must not wait for the boot).
// One node up, 20 min boots: A (16 GPUs) waits for a second node, E (elastic 4-16) is held at
// its full size, R (8 GPUs, at 2 s) takes the idle node at the next 10 s tick.
TEST(EngineTest, HeldBackElasticJobDoesNotBlockJobsThatFit) {
  const WhatIf w =
      testing::whatif({pool("od", 1, 4, 1200)},
                      {job("A", 0, 16, 3600), job("E", 1, 16, 3600, 4, 16), job("R", 2, 8, 3600)});
  const PolicyResult r = run_policy(w, policy("slurm-power-save"), 1);
  EXPECT_EQ(r.jobs_finished, 3);
  EXPECT_LT(r.queue_wait_max_s, 4000.0);  // E does not wait behind a late start of R
}

TEST(EngineTest, OracleHasNoProvisioningDelay) {
  WhatIf w = testing::whatif({pool("od", 0, 2, 600)}, {job("a", 5, 8, 3600)});
  w.pools[0].ice_probability = 1.0;  // the oracle never meets insufficient capacity
  const PolicyResult r = run_policy(w, policy("oracle"), 1);
  EXPECT_DOUBLE_EQ(r.queue_wait_max_s, 0.0);  // 1 s loop: the arrival at 5 s is on the grid
  EXPECT_NEAR(r.cost_usd, 10.0, 1e-9);        // billed exactly the job's hour
}

TEST(EngineTest, ArrivalsWaitForTheNextTick) {
  // A job submitted at 3 s is seen at the CA's next scan (10 s): wait = 7 s + 600 s boot.
  const WhatIf w = testing::whatif({pool("od", 0, 2, 600)}, {job("a", 3, 8, 3600)});
  const PolicyResult r = run_policy(w, policy("cluster-autoscaler"), 1);
  EXPECT_DOUBLE_EQ(r.queue_wait_max_s, 607.0);
}

TEST(EngineTest, IdleNodesGoAfterTheDwellTime) {
  // Ray v1 (idle_timeout 5 min, 5 s loop): a 1 h job, then another at 2 h. The node idles from
  // 4200 s and is removed at 4500 s; the second job needs a new node.
  const WhatIf w =
      testing::whatif({pool("od", 0, 2, 600)}, {job("a", 0, 8, 3600), job("b", 7200, 8, 3600)});
  const PolicyResult r = run_policy(w, policy("ray-v1"), 1);
  EXPECT_EQ(r.scale_ups, 2);
  EXPECT_EQ(r.scale_downs, 1);
  EXPECT_DOUBLE_EQ(r.end_time_s, 7200.0 + 600.0 + 3600.0);
  // Billed: 0..4500 and 7200..11400.
  EXPECT_NEAR(r.cost_usd, (4500.0 + 4200.0) / 3600.0 * 10.0, 1e-9);
}

TEST(EngineTest, CheckpointsCostTheirSaveTime) {
  // 3 h of work, a checkpoint every hour costing 60 s: two saves, 120 s late.
  WhatIf w = testing::whatif({pool("od", 1, 1, 0)}, {job("a", 0, 8, 3 * 3600)});
  w.failures.checkpoint_interval_s = 3600;
  w.failures.checkpoint_cost_s = 60;
  const PolicyResult r = run_policy(w, policy("static"), 1);
  EXPECT_DOUBLE_EQ(r.end_time_s, 3 * 3600.0 + 120.0);
  EXPECT_NEAR(r.lost.checkpoint_gpu_hours, 2 * 60 * 8 / 3600.0, 1e-9);
  EXPECT_NEAR(r.gpu_hours_busy, 24.0 + 2 * 60 * 8 / 3600.0, 1e-9);
}

// A 24 h 16-GPU job on two static nodes, one failure every ~3 h, 30 min repairs, 10 min
// detection, 5 min restarts.
WhatIf failing_pair(double checkpoint_interval_s, double checkpoint_cost_s) {
  WhatIf w = testing::whatif({pool("od", 2, 2, 0)}, {job("a", 0, 16, 24 * 3600)});
  w.failures.gpu_mtbf_s = 16 * 6 * 3600.0;
  w.failures.repair = {1800.0, 1800.0};
  w.failures.detect_s = 600;
  w.failures.checkpoint_interval_s = checkpoint_interval_s;
  w.failures.checkpoint_cost_s = checkpoint_cost_s;
  w.failures.restart_cost_s = 300;
  return w;
}

TEST(EngineTest, FailuresCostWorkSinceTheCheckpointAndTheRestart) {
  const WhatIf w = failing_pair(1800, 30);
  const PolicyResult r = run_policy(w, policy("static"), 7);
  EXPECT_EQ(r.jobs_finished, 1);
  EXPECT_GE(r.node_failures, 1);
  EXPECT_GE(r.job_restarts, 1);
  EXPECT_LE(r.job_restarts, r.node_failures);  // a node may fail while the job waits for repair
  // Detection holds the surviving node's 8 GPUs; the failed node is neither billed nor busy.
  EXPECT_GT(r.lost.failure_gpu_hours, r.job_restarts * 600 * 8 / 3600.0 - 1e-9);
  EXPECT_LE(r.gpu_hours_busy, r.gpu_hours_billed + 1e-9);
  EXPECT_LE(r.utilization, 1.0);
  EXPECT_NEAR(r.lost.restart_gpu_hours, r.job_restarts * 300 * 16 / 3600.0, 1e-9);
  // Conservation: busy GPU-hours = useful work + every loss.
  EXPECT_NEAR(r.gpu_hours_busy, 16 * 24.0 + r.lost.total(), 1e-6);
}

TEST(EngineTest, FailedNodeIsNeitherBilledNorBusyWhileTheJobNotices) {
  // Checkpoints every minute, so a failure loses at most ~61 s on 16 GPUs plus the 600 s
  // detection on the surviving node's 8 GPUs; the failed node's 8 stop being busy when it
  // stops being billed (counting them too would give at least 600 s x 16 per restart).
  const WhatIf w = failing_pair(60, 1);
  const PolicyResult r = run_policy(w, policy("static"), 7);
  ASSERT_GE(r.job_restarts, 1);
  EXPECT_LE(r.lost.failure_gpu_hours, r.job_restarts * (600 * 8 + 61 * 16) / 3600.0 + 1e-9);
  EXPECT_GT(r.lost.failure_gpu_hours, r.job_restarts * 600 * 8 / 3600.0 - 1e-9);
  EXPECT_NEAR(r.gpu_hours_busy, 16 * 24.0 + r.lost.total(), 1e-6);
}

TEST(EngineTest, SpotNoticeAllowsAnEmergencyCheckpoint) {
  WhatIf w =
      testing::whatif({pool("spot", 0, 4, 300, Pricing::kSpot, 4.0)}, {job("a", 0, 8, 48 * 3600)});
  w.pools[0].interruptions_per_node_month = 60;  // about one every 12 h
  w.failures.checkpoint_interval_s = 3600;
  w.failures.checkpoint_cost_s = 60;  // fits in the 2-minute notice
  w.failures.restart_cost_s = 120;
  const PolicyResult r = run_policy(w, policy("cluster-autoscaler"), 3);
  EXPECT_EQ(r.jobs_finished, 1);
  EXPECT_GT(r.spot_interruptions, 0);
  EXPECT_DOUBLE_EQ(r.lost.preemption_gpu_hours, 0.0);  // saved inside the notice
  EXPECT_GT(r.cost_by_pricing_usd.at("spot"), 0.0);
  EXPECT_NEAR(r.gpu_hours_busy, 8 * 48.0 + r.lost.total(), 1e-6);
}

TEST(EngineTest, SpotWithoutTimeToSaveLosesWork) {
  WhatIf w =
      testing::whatif({pool("spot", 0, 4, 300, Pricing::kSpot, 4.0)}, {job("a", 0, 8, 48 * 3600)});
  w.pools[0].interruptions_per_node_month = 60;
  w.failures.checkpoint_interval_s = 3600;
  w.failures.checkpoint_cost_s = 600;  // longer than the notice
  const PolicyResult r = run_policy(w, policy("cluster-autoscaler"), 3);
  EXPECT_GT(r.lost.preemption_gpu_hours, 0.0);
  EXPECT_NEAR(r.gpu_hours_busy, 8 * 48.0 + r.lost.total(), 1e-6);
}

TEST(EngineTest, CapacityBlockIsPaidWhetherUsedOrNot) {
  const WhatIf w = testing::whatif({pool("cb", 0, 4, 600, Pricing::kCapacityBlock, 14.75)},
                                   {job("a", 0, 8, 3600)});
  const PolicyResult r = run_policy(w, policy("cluster-autoscaler"), 1);
  EXPECT_NEAR(r.cost_usd, 4 * 14.75 * r.end_time_s / 3600.0, 1e-9);
}

TEST(EngineTest, InsufficientCapacityBacksTheGroupOff) {
  WhatIf w = testing::whatif({pool("od", 0, 4, 600)}, {job("a", 0, 8, 3600)});
  w.pools[0].available_nodes = 0;  // nothing to get
  w.horizon_s = 3 * 3600;
  const PolicyResult r = run_policy(w, policy("cluster-autoscaler"), 1);
  EXPECT_EQ(r.jobs_finished, 0);
  // Backoff 5, 10, 20 min after each failure: attempts at 0, 300, 900, 2100, 4500, 6300(+30 min)...
  EXPECT_GE(r.launch_failures, 5);
  EXPECT_LE(r.launch_failures, 9);
  EXPECT_DOUBLE_EQ(r.cost_usd, 0.0);
}

TEST(EngineTest, YoungDalyIntervalFromTheJobMtbf) {
  // One 8-GPU node, GPU MTBF 2,000,000 s: job MTBF M = 250,000 s; C = 50 s gives
  // tau = sqrt(2 * 50 * 250,000) = 5,000 s. A 12,000 s job saves twice (at 5,000 and 10,050 s).
  WhatIf w = testing::whatif({pool("od", 1, 1, 0)}, {job("a", 0, 8, 12000)});
  w.failures.gpu_mtbf_s = 2e6;
  w.failures.young_daly = true;
  w.failures.checkpoint_cost_s = 50;
  const PolicyResult r = run_policy(w, policy("static"), 1);
  ASSERT_EQ(r.node_failures, 0);  // this seed draws no failure within the run
  EXPECT_DOUBLE_EQ(r.end_time_s, 12000.0 + 2 * 50);
  EXPECT_NEAR(r.lost.checkpoint_gpu_hours, 2 * 50 * 8 / 3600.0, 1e-9);
}

TEST(EngineTest, ElasticJobGrowsIntoFreeGpus) {
  // An elastic job asks for 8, may use 32; alone on a static 4-node cluster it grows at its
  // first checkpoint and finishes sooner than at 8 GPUs (work is linear in GPUs).
  WhatIf w = testing::whatif({pool("od", 4, 4, 0)}, {job("e", 0, 8, 8 * 3600, 4, 32)});
  w.failures.checkpoint_interval_s = 3600;
  const PolicyResult r = run_policy(w, policy("static"), 1);
  EXPECT_EQ(r.job_resizes, 1);
  EXPECT_DOUBLE_EQ(r.end_time_s, 3600.0 + 7 * 3600.0 / 4);
  EXPECT_NEAR(r.gpu_hours_busy, 64.0, 1e-9);
}

// Slurm's ResumeRate 2/min with 10 s scans: the counter allows a burst of 2 at t=0, then
// decays by 5/6 per scan (2 -> 1.67 -> 1.39, rounded 2, 2, 1), so one more at t=20 (2.39),
// t=50 (2.38), t=80: the fifth 8-GPU job starts at 80 s + the 600 s boot.
TEST(EngineTest, SlurmResumeRateIsADecayingCounter) {
  const WhatIf w = testing::whatif(
      {pool("od", 0, 5, 600)}, {job("a", 0, 8, 3600), job("b", 0, 8, 3600), job("c", 0, 8, 3600),
                                job("d", 0, 8, 3600), job("e", 0, 8, 3600)});
  const PolicyResult r = run_policy(w, policy("slurm-power-save", {{"resume_rate", 2}}), 1);
  EXPECT_EQ(r.jobs_finished, 5);
  EXPECT_DOUBLE_EQ(r.queue_wait_max_s, 680.0);
}

TEST(EngineTest, TimelineCountsNodesAndQueue) {
  WhatIf w = testing::whatif({pool("od", 0, 2, 600)}, {job("a", 0, 8, 3600), job("b", 0, 8, 3600)});
  w.timeline_interval_s = 300;
  const PolicyResult r = run_policy(w, policy("cluster-autoscaler"), 1);
  ASSERT_GE(r.timeline.samples.size(), 3u);
  const auto& s1 = r.timeline.samples[1];  // t = 300: both nodes booting, both jobs queued
  EXPECT_DOUBLE_EQ(s1.time_s, 300.0);
  EXPECT_EQ(s1.nodes_booting, 2);
  EXPECT_EQ(s1.jobs_queued, 2);
  const auto& s3 = r.timeline.samples[3];  // t = 900: both busy
  EXPECT_EQ(s3.nodes_busy, 2);
  EXPECT_EQ(s3.gpus_busy, 16);
  EXPECT_EQ(s3.jobs_running, 2);
}

}  // namespace
}  // namespace capsim::whatif
