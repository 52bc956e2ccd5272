#include "calibrate/gemm_fit.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/gemm_cost.hpp"

#include "io/input_error.hpp"

namespace capsim::calibrate {
namespace {

const std::string kCsv = std::string(CAPSIM_DATA_DIR) + "/gemm/gemm_measurements.csv";

TEST(GemmCsvTest, ReadsAllRows) {
  const auto rows = read_gemm_csv(kCsv);
  EXPECT_EQ(rows.size(), 83U);
  EXPECT_EQ(rows.front().gpu, "A100-SXM");
  EXPECT_DOUBLE_EQ(rows.front().flop_per_s, 271.2e12);
  EXPECT_EQ(rows.front().line, 2);
}

// Rows whose source or note says "brute-force search" (MAMF's current table) are search maxima:
// A100 SXM and PCIe, H100 and GH200 bf16, H100 and H200 fp8.
TEST(GemmCsvTest, MarksTheBestOfABruteForceSearch) {
  const auto rows = read_gemm_csv(kCsv);
  int marked = 0;
  for (const auto& r : rows) {
    if (r.search_maximum) {
      ++marked;
      EXPECT_NE(r.source.find("MAMF"), std::string::npos) << r.line;
    }
  }
  EXPECT_EQ(marked, 6);
  EXPECT_TRUE(rows.front().search_maximum);
}

TEST(GemmCsvTest, BadRowNamesLine) {
  try {
    (void)read_gemm_csv(std::string(CAPSIM_TEST_DATA_DIR) + "/nccl_bad/empty_allreduce.txt");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string(CAPSIM_TEST_DATA_DIR) +
                  "/nccl_bad/empty_allreduce.txt:1: expected the header to start with "
                  "gpu,dtype,M,N,K,tflops,source");
  }
}

// A GEMM table is UTF-8 text: its names go into profiles, which are JSON. A device is not a
// table (/dev/zero would be read forever).
TEST(GemmCsvTest, NonTextAndNonFilesAreRefused) {
  const std::string path = ::testing::TempDir() + "capsim_gemm_bad_utf8.csv";
  std::ofstream(path, std::ios::binary)
      << "gpu,dtype,M,N,K,tflops,source\nA100\xFF,bf16,8192,8192,8192,271.2,x\n";
  try {
    (void)read_gemm_csv(path);
    FAIL() << "accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path +
                                         ":2: invalid UTF-8 (byte 0xFF) at column 5; a GEMM table "
                                         "is UTF-8 text without NUL bytes");
  }
  std::filesystem::remove(path);
  try {
    (void)read_gemm_csv("/dev/null");
    FAIL() << "accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/dev/null: is not a regular file (a FIFO, device or socket); capsim reads its "
              "inputs from files");
  }
}

// A100: the triton #6523 sweep runs ~30% below every other A100 source; it keeps its own level
// and the consensus (MAMF, mli, triton #3551/#7085) sets max_efficiency near MAMF's 0.87.
TEST(GemmFitTest, A100ConsensusExcludesTheSlowSweep) {
  const auto rows = read_gemm_csv(kCsv);
  const GemmFit fit = fit_gemm(rows, *builtin_catalog().find_gpu("A100-SXM4-80GB"));
  bool saw_slow = false;
  for (const auto& s : fit.sources) {
    if (s.source.find("#6523") != std::string::npos) {
      saw_slow = true;
      EXPECT_FALSE(s.consensus);
      EXPECT_LT(s.scale, 0.85);
    }
    if (s.source.find("#3551") != std::string::npos) {
      EXPECT_TRUE(s.consensus);
    }
  }
  EXPECT_TRUE(saw_slow);
  EXPECT_GT(fit.params.max_efficiency, 0.8);
  EXPECT_LT(fit.params.max_efficiency, 0.98);
  EXPECT_LT(fit.record.mape_pct, 10.0);
}

// No shape may beat the best of a brute-force search: the model's ceiling stays at or below
// MAMF's best efficiency (A100 271.2 / 312, H100 794.5 / 989), and the fitted model is never
// faster than that on any shape, however large.
TEST(GemmFitTest, CeilingStaysBelowTheSearchMaximum) {
  const auto rows = read_gemm_csv(kCsv);
  for (const auto& [name, best] :
       {std::pair{"A100-SXM4-80GB", 271.2e12}, std::pair{"H100-SXM5-80GB", 794.5e12}}) {
    const GpuSpec& gpu = *builtin_catalog().find_gpu(name);
    const GemmFit fit = fit_gemm(rows, gpu);
    EXPECT_NEAR(fit.max_efficiency_bound, best / gpu.peak_flop_per_s(Precision::kBf16), 1e-12);
    EXPECT_LE(fit.params.max_efficiency, fit.max_efficiency_bound) << name;
    for (const double n : {4096.0, 8192.0, 16384.0, 65536.0}) {
      const GemmShape s{n, n, n, 1};
      EXPECT_LE(s.flop() / gemm_time_s(fit.params, gpu, Precision::kBf16, s), best) << name << n;
    }
  }
}

// The H100 fp8 row of MAMF's search (1402.6 TFLOP/s, 71% of the fp8 peak where bf16 reaches 80%)
// bounds fp8 GEMMs on their own: no fp8 shape beats it, while bf16 keeps its ceiling. A100 has
// no fp8 rows (nor fp8): its ceiling stays unset.
TEST(GemmFitTest, Fp8CeilingStaysBelowItsSearchMaximum) {
  const auto rows = read_gemm_csv(kCsv);
  const GpuSpec& h100 = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  const GemmFit fit = fit_gemm(rows, h100);
  EXPECT_NEAR(fit.fp8_max_efficiency_bound, 1402.6e12 / 1979e12, 1e-12);
  ASSERT_NE(fit.fp8_bound_row, nullptr);
  EXPECT_EQ(fit.fp8_bound_row->dtype, "fp8_e4m3");
  EXPECT_DOUBLE_EQ(fit.params.fp8_max_efficiency, fit.fp8_max_efficiency_bound);
  EXPECT_LT(fit.params.fp8_max_efficiency, fit.params.max_efficiency);
  for (const double n : {4096.0, 8192.0, 16384.0, 65536.0}) {
    const GemmShape s{n, n, n, 1};
    EXPECT_LE(s.flop() / gemm_time_s(fit.params, h100, Precision::kFp8, s), 1402.6e12) << n;
  }
  EXPECT_DOUBLE_EQ(
      fit_gemm(rows, *builtin_catalog().find_gpu("A100-SXM4-80GB")).params.fp8_max_efficiency, 0.0);
}

// Without search-maximum rows the ceiling is free (bound 1).
TEST(GemmFitTest, NoSearchRowsLeaveTheCeilingFree) {
  auto rows = read_gemm_csv(kCsv);
  for (auto& r : rows)
    r.search_maximum = false;
  const GemmFit fit = fit_gemm(rows, *builtin_catalog().find_gpu("A100-SXM4-80GB"));
  EXPECT_DOUBLE_EQ(fit.max_efficiency_bound, 1.0);
  EXPECT_GT(fit.params.max_efficiency, 271.2e12 / 312e12);
}

TEST(GemmFitTest, H100MisalignedKCostsAbout30Percent) {
  const auto rows = read_gemm_csv(kCsv);
  const GemmFit fit = fit_gemm(rows, *builtin_catalog().find_gpu("H100-SXM5-80GB"));
  EXPECT_LT(fit.params.misaligned_8, 0.8);
  EXPECT_GT(fit.params.misaligned_8, 0.6);
  EXPECT_LT(fit.record.mape_pct, 12.0);
}

// Monotone where physics says so: a bigger GEMM never takes less time.
TEST(GemmFitTest, FittedTimeGrowsWithEveryDimension) {
  const auto rows = read_gemm_csv(kCsv);
  for (const char* name : {"A100-SXM4-80GB", "H100-SXM5-80GB"}) {
    const GpuSpec& gpu = *builtin_catalog().find_gpu(name);
    const GemmParams p = fit_gemm(rows, gpu).params;
    for (double base = 64; base <= 16384; base *= 2) {
      // 1e-12 relative: equal-cost shapes may differ in the last bit.
      const double t = gemm_time_s(p, gpu, Precision::kBf16, {base, base, base, 1}) * (1 - 1e-12);
      EXPECT_LE(t, gemm_time_s(p, gpu, Precision::kBf16, {base + 64, base, base, 1})) << name;
      EXPECT_LE(t, gemm_time_s(p, gpu, Precision::kBf16, {base, base + 64, base, 1})) << name;
      EXPECT_LE(t, gemm_time_s(p, gpu, Precision::kBf16, {base, base, base + 64, 1})) << name;
    }
  }
}

// The harness records CUDA's device name: its rows belong to the family like the CSV's;
// PCIe and NVL boards do not.
TEST(GemmFitTest, HarnessDeviceNamesJoinTheirFamily) {
  const GpuSpec& a100 = *builtin_catalog().find_gpu("A100-SXM4-80GB");
  const GpuSpec& h100 = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  GemmMeasurement row;
  row.dtype = "bf16";
  row.gpu = "NVIDIA A100-SXM4-80GB";
  EXPECT_TRUE(gemm_row_matches(row, a100));
  row.gpu = "NVIDIA H100 80GB HBM3";
  EXPECT_TRUE(gemm_row_matches(row, h100));
  row.gpu = "NVIDIA H100 NVL";
  EXPECT_FALSE(gemm_row_matches(row, h100));
  row.gpu = "NVIDIA A100-PCIE-40GB";
  EXPECT_FALSE(gemm_row_in_family(row, a100));
  row.gpu = "NVIDIA A100 PCIe";
  EXPECT_FALSE(gemm_row_in_family(row, a100));
}

// Two sources 30%+ apart both sit outside the consensus band around their midpoint: the one
// closest to it keeps the absolute level, so the fit still has consensus rows to report.
TEST(GemmFitTest, TwoDisagreeingSourcesKeepAConsensus) {
  std::vector<GemmMeasurement> rows;
  for (const auto& r : read_gemm_csv(kCsv)) {
    if (r.source.find("#3551") != std::string::npos || r.source.find("#6523") != std::string::npos)
      rows.push_back(r);
  }
  const GemmFit fit = fit_gemm(rows, *builtin_catalog().find_gpu("A100-SXM4-80GB"));
  int consensus = 0;
  for (const auto& src : fit.sources)
    consensus += src.consensus ? 1 : 0;
  EXPECT_EQ(consensus, 1);
  EXPECT_GT(fit.record.points, 0);
}

std::string write_csv(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// The CSV names its optional columns; a dtype the fitter would silently drop is an error.
TEST(GemmCsvTest, RejectsUnknownDtypesAndColumns) {
  const std::string dtype = write_csv(
      "gemm_dtype.csv", "gpu,dtype,M,N,K,tflops,source\nA100-SXM,FP16,1024,1024,1024,100,x\n");
  try {
    (void)read_gemm_csv(dtype);
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), dtype +
                                         ":2: expected dtype bf16, fp16, fp8_e4m3, fp8_e5m2 "
                                         "or tf32, got \"FP16\"");
  }
  const std::string column = write_csv(
      "gemm_column.csv", "gpu,dtype,M,N,K,tflops,source,batches\nA100-SXM,fp16,64,64,64,1,x,4\n");
  try {
    (void)read_gemm_csv(column);
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              column + ":1: unknown column \"batches\"; optional columns: batch, library, note");
  }
  const std::string quote =
      write_csv("gemm_quote.csv", "gpu,dtype,M,N,K,tflops,source\nA100-SXM,fp16,64,64,64,1,\"x\n");
  try {
    (void)read_gemm_csv(quote);
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), quote + ":2: unterminated quoted field");
  }
  // Optional columns by name, in any order.
  const auto rows = read_gemm_csv(write_csv("gemm_order.csv",
                                            "gpu,dtype,M,N,K,tflops,source,note,batch\nA100-SXM,"
                                            "fp16,64,64,64,1,x,brute-force search,4\n"));
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].batch, 4.0);
  EXPECT_TRUE(rows[0].search_maximum);
}

}  // namespace
}  // namespace capsim::calibrate
