// `capsim-calibrate ... --dry-run` prints what a run would measure without a GPU: the same sizes,
// shapes and counts the real run takes from the sweep.
#include "calibrate/harness/dry_run.hpp"

#include <string>

#include <gtest/gtest.h>

namespace capsim::calibrate::harness {
namespace {

TEST(DryRunTest, NcclPlanListsEverySizeRangeAndLaunch) {
  NcclSweep sweep;
  sweep.collectives = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather};
  sweep.min_bytes = 8;
  sweep.max_bytes = 1024.0 * 1024;  // 1 MiB: 18 sizes 8 B .. 1 MiB
  const std::string plan = describe_plan(sweep, 8);
  // all-gather sizes round to 8 ranks x 4-byte floats: 32 B is the first (plan_sizes).
  EXPECT_NE(plan.find("all_reduce: 18 sizes, 8 B .. 1 MiB, 900 launches"), std::string::npos)
      << plan;
  EXPECT_NE(plan.find("all_gather: 16 sizes, 32 B .. 1 MiB, 800 launches"), std::string::npos)
      << plan;
  EXPECT_NE(plan.find("1700 collective launches in all"), std::string::npos) << plan;
  sweep.in_place = false;
  EXPECT_NE(describe_plan(sweep, 8).find("850 collective launches"), std::string::npos);
}

TEST(DryRunTest, GemmPlanListsShapesAndTheFp8ShapesItSkips) {
  GemmSweep sweep;
  sweep.shapes = {{4096, 4096, 4096, 1}, {4096, 4096, 1000, 1}};
  sweep.dtypes = {"bf16", "fp8_e4m3"};
  const std::string plan = describe_plan(sweep);
  EXPECT_NE(plan.find("bf16: 2 shapes"), std::string::npos) << plan;
  EXPECT_NE(plan.find("fp8_e4m3: 1 shapes"), std::string::npos) << plan;
  EXPECT_NE(plan.find("fp8_e4m3: 1 skipped"), std::string::npos) << plan;
  EXPECT_NE(plan.find("4096x4096x1000"), std::string::npos) << plan;
  EXPECT_NE(plan.find("120 GEMM runs in all"), std::string::npos) << plan;  // 3 x (10 + 30)
}

TEST(DryRunTest, OverlapPlanCountsEachShapeAloneAndBesideEachCollective) {
  const std::string plan = describe_plan(OverlapRun{});
  EXPECT_NE(plan.find("256 MiB collectives"), std::string::npos) << plan;
  EXPECT_NE(plan.find("collectives: all_reduce all_gather"), std::string::npos) << plan;
  EXPECT_NE(plan.find("6 measurements"), std::string::npos) << plan;  // 2 shapes x (1 + 2)
}

}  // namespace
}  // namespace capsim::calibrate::harness
