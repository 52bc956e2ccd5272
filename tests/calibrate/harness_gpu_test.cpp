// The CUDA/NCCL/cuBLASLt backend on a real device (LABELS gpu); skipped without one.
#include <gtest/gtest.h>

#include "calibrate/harness/cuda_backend.hpp"

namespace capsim::calibrate::harness {
namespace {

TEST(HarnessGpuTest, SmallNcclSweepRunsAndChecks) {
  if (!cuda_device_available())
    GTEST_SKIP() << "no CUDA device";
  auto backend = make_cuda_backend({});
  NcclSweep sweep;
  sweep.collectives = parse_collectives_arg("all");
  sweep.max_bytes = 1 << 20;
  const Measurements m = run_nccl(*backend, sweep);  // throws on wrong elements
  ASSERT_EQ(m.collectives.size(), 6U);
  for (const auto& c : m.collectives) {
    for (const auto& s : c.samples)
      EXPECT_GT(s.time_s, 0.0);
  }
  EXPECT_FALSE(m.machine.nccl_version.empty());
}

TEST(HarnessGpuTest, GemmRunsAndChecks) {
  if (!cuda_device_available())
    GTEST_SKIP() << "no CUDA device";
  CudaBackendOptions options;
  options.gpus = 1;
  auto backend = make_cuda_backend(options);
  GemmSweep sweep;
  sweep.shapes = {{1024, 1024, 1024, 1}, {4096, 4096, 10922, 1}, {512, 512, 512, 4}};
  sweep.repeats = 5;
  const Measurements m = run_gemm(*backend, sweep);  // throws on wrong elements
  ASSERT_EQ(m.gemms.size(), 3U);
  for (const auto& g : m.gemms)
    EXPECT_GT(g.flop_per_s, 1e12);
}

}  // namespace
}  // namespace capsim::calibrate::harness
