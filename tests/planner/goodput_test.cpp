// The goodput model: its published defaults, each loss it charges, and that Daly's model alone
// is what it reduces to without the other parts.
#include "planner/goodput.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "planner/failure_model.hpp"

namespace capsim::planner::goodput_test {
namespace {

constexpr double kDay = 86400.0;

GoodputRun run_on(int gpus, double steady_s) {
  return GoodputRun{.num_gpus = gpus,
                    .steady_s = steady_s,
                    .iteration_time_s = 5.0,
                    .tokens = 1e12,
                    .pipeline = 1,
                    .virtual_stages = 1,
                    .micro_batches = 8.0};
}

TEST(GoodputTest, PublishedRatesComeFromTheirSources) {
  // Llama 3: 419 unexpected interruptions in 54 days on 16,384 H100: about 3.1 h between them.
  EXPECT_NEAR(1.0 / (kHopperInterruptionsPerGpuHour * 16384.0), 3.09, 0.01);
  EXPECT_EQ(published_interruptions_per_gpu_hour("hopper"), kHopperInterruptionsPerGpuHour);
  EXPECT_EQ(published_interruptions_per_gpu_hour("blackwell"), kHopperInterruptionsPerGpuHour);
  // RSC-1: 6.5 failures per 1,000 node-days of 8 A100.
  EXPECT_NEAR(published_interruptions_per_gpu_hour("ampere") * 8.0 * 24.0 * 1000.0, 6.5, 1e-9);
  // 8% spread over ~27,648 GPUs: a standard deviation under 1%.
  EXPECT_NEAR(kStragglerSigma, 0.00885, 1e-5);
}

TEST(GoodputTest, ResolvedModelDerivesMtbfAndCheckpointCostPerCluster) {
  const FailureModel given = default_failure_model();
  // 70B parameters at 14 bytes each over 32 nodes at 2 TB/s / 2,048 nodes each.
  const FailureModel m = resolve_failure_model(given, "hopper", 70e9, 32);
  EXPECT_DOUBLE_EQ(m.gpu_mtbf_s, 3600.0 / kHopperInterruptionsPerGpuHour);
  EXPECT_DOUBLE_EQ(m.checkpoint_save_s, 70e9 * 14.0 / (32 * 2e12 / 2048.0));
  EXPECT_DOUBLE_EQ(m.checkpoint_restore_s, m.checkpoint_save_s);
  // More nodes write faster.
  EXPECT_LT(resolve_failure_model(given, "hopper", 70e9, 64).checkpoint_save_s,
            m.checkpoint_save_s);
  // A given save cost is kept.
  FailureModel fixed = given;
  fixed.checkpoint_save_s = 42.0;
  EXPECT_EQ(resolve_failure_model(fixed, "ampere", 70e9, 32).checkpoint_save_s, 42.0);
}

TEST(GoodputTest, DalyAloneIsTheOldFailureModel) {
  const FailureModel m = daly_failure_model(50000.0 * 3600.0, 60.0, 600.0);
  const double steady = 20 * kDay;
  const GoodputBreakdown b = goodput_breakdown(m, run_on(2048, steady));
  EXPECT_DOUBLE_EQ(b.wall_s, failure_overhead(m, 2048, steady).expected_wall_s);
  EXPECT_EQ(b.stragglers_s, 0.0);
  EXPECT_EQ(b.startup_s, 0.0);
}

TEST(GoodputTest, PartsSumToTheAllInTime) {
  FailureModel m = resolve_failure_model(default_failure_model(), "hopper", 405e9, 2048);
  m.evaluation_every_s = 6 * 3600.0;
  m.evaluation_s = 300.0;
  m.warmup_iterations = 10;
  GoodputRun run = run_on(16384, 50 * kDay);
  run.pipeline = 16;
  run.micro_batches = 16.0;
  m.batch_ramp = {{252e6, 0.25}, {0.2e12, 0.5}};
  const GoodputBreakdown b = goodput_breakdown(m, run);
  const double sum = b.steady_s + b.stragglers_s + b.batch_ramp_s + b.startup_s + b.evaluation_s +
                     b.checkpoint_s + b.lost_work_s + b.restarts_s;
  EXPECT_NEAR(sum, b.wall_s, 1e-9 * b.wall_s);
  for (double part : {b.stragglers_s, b.batch_ramp_s, b.startup_s, b.evaluation_s, b.checkpoint_s,
                      b.lost_work_s, b.restarts_s})
    EXPECT_GT(part, 0.0);
  EXPECT_EQ(b.startup_s, m.restart_s + 10 * 5.0);
  // About 9 interruptions a day on 16,384 H100 (Llama 3: 466 in 54 days).
  EXPECT_NEAR(b.interruptions / (b.wall_s / kDay), 466.0 / 54.0, 1.0);
}

TEST(GoodputTest, StragglersGrowWithTheGpuCount) {
  EXPECT_EQ(straggler_slowdown(kStragglerSigma, 1), 1.0);
  double last = 1.0;
  for (int gpus : {8, 64, 512, 4096, 32768}) {
    const double s = straggler_slowdown(kStragglerSigma, gpus);
    EXPECT_GT(s, last) << gpus;
    last = s;
  }
  EXPECT_NEAR(straggler_slowdown(0.01, 16384), 1.0 + 0.01 * std::sqrt(2.0 * std::log(16384.0)),
              1e-12);
}

TEST(GoodputTest, BatchRampCostsOnlyWherePipelineBubblesGrow) {
  FailureModel m = daly_failure_model(1e12, 60.0, 60.0);  // failures negligible
  m.batch_ramp = {{0.5e12, 0.5}};
  GoodputRun run = run_on(64, 10 * kDay);
  EXPECT_NEAR(goodput_breakdown(m, run).batch_ramp_s, 0.0, 1e-6);  // no pipeline: same speed
  run.pipeline = 8;
  run.micro_batches = 16.0;
  // Half the tokens at 8 micro-batches: (8 + 7) / 8 over (16 + 7) / 16 per token.
  const double ratio = (15.0 / 8.0) / (23.0 / 16.0);
  EXPECT_NEAR(goodput_breakdown(m, run).batch_ramp_s, 0.5 * 10 * kDay * (ratio - 1.0), 1e-3);
  run.virtual_stages = 7;  // interleaving shrinks the bubble and the ramp's cost
  EXPECT_LT(goodput_breakdown(m, run).batch_ramp_s, 0.5 * 10 * kDay * (ratio - 1.0));
}

TEST(GoodputTest, PlannedStopsCostARestartEach) {
  FailureModel m = daly_failure_model(1e15, 60.0, 120.0);
  m.restart_s = 300.0;
  m.planned_per_gpu_hour = 1e-5;
  const GoodputBreakdown b = goodput_breakdown(m, run_on(1000, 100 * 3600.0));
  // 1e-5 x 1,000 GPUs x ~100 h = ~1 stop, each a relaunch and a reload.
  EXPECT_NEAR(b.interruptions, 1.0, 0.02);
  EXPECT_NEAR(b.restarts_s, b.interruptions * 420.0, 1.0);
}

}  // namespace
}  // namespace capsim::planner::goodput_test
