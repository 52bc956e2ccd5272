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

TEST(HarnessGpuTest, OverlapMeasuresSmsTaken) {
  if (!cuda_device_available())
    GTEST_SKIP() << "no CUDA device";
  auto backend = make_cuda_backend({});
  if (backend->ranks() < 2)
    GTEST_SKIP() << "overlap needs at least 2 GPUs";
  OverlapRun run;
  run.shapes = {{4096, 4096, 4096, 1}};
  run.collective_bytes = 64.0 * 1024 * 1024;
  run.repeats = 5;
  // Throws on wrong elements or a collective loop that ended before the GEMMs.
  const Measurements m = run_overlap(*backend, run);
  ASSERT_TRUE(m.overlap.has_value());
  EXPECT_EQ(m.overlap->sms, backend->sm_count());
  ASSERT_EQ(m.overlap->samples.size(), 2U);
  for (const auto& s : m.overlap->samples) {
    EXPECT_GT(s.time_alone_s, 0.0);
    EXPECT_GT(s.time_beside_s, 0.0);
  }
  EXPECT_GE(m.overlap->sms_taken, 0);
  EXPECT_LT(m.overlap->sms_taken, m.overlap->sms);
  // The strict reader accepts what the harness writes.
  EXPECT_NO_THROW((void)read_measurements_json(measurements_to_json(m), "overlap.json"));
}

}  // namespace
}  // namespace capsim::calibrate::harness
