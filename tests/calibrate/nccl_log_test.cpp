#include "calibrate/nccl_log.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "io/input_error.hpp"

namespace capsim::calibrate {
namespace {

const std::string kLogs = std::string(CAPSIM_DATA_DIR) + "/nccl/";
const std::string kBad = std::string(CAPSIM_TEST_DATA_DIR) + "/nccl_bad/";

std::string error_of(const std::string& path) {
  try {
    (void)read_nccl_log(path);
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NcclLogTest, EveryShippedLogImports) {
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kLogs)) {
    if (entry.path().extension() != ".txt")
      continue;
    ++logs;
    const CollectiveCurve c = read_nccl_log(entry.path().string());
    EXPECT_FALSE(c.samples.empty()) << entry.path();
    EXPECT_GE(c.ranks, 2) << entry.path();
    EXPECT_EQ(c.ranks, c.nodes * c.ranks_per_node) << entry.path();
    for (size_t i = 1; i < c.samples.size(); ++i) {
      EXPECT_GT(c.samples[i].bytes, c.samples[i - 1].bytes) << entry.path();
    }
  }
  EXPECT_EQ(logs, 22);
}

struct Expected {
  const char* file;
  CollectiveKind kind;
  int ranks;
  int nodes;
  size_t rows;
};

class NcclLogShapeTest : public ::testing::TestWithParam<Expected> {};

// Rank and node counts per INDEX.md, except the CoreWeave H100 log whose busbw/algbw = 1.9792
// = 2*95/96 implies 96 ranks, not the 64 its note states (2*63/64 = 1.96875).
TEST_P(NcclLogShapeTest, ShapeAndRows) {
  const Expected e = GetParam();
  const CollectiveCurve c = read_nccl_log(kLogs + e.file);
  EXPECT_EQ(c.kind, e.kind);
  EXPECT_EQ(c.ranks, e.ranks);
  EXPECT_EQ(c.nodes, e.nodes);
  EXPECT_EQ(c.samples.size(), e.rows);
}

INSTANTIATE_TEST_SUITE_P(
    Logs, NcclLogShapeTest,
    ::testing::Values(
        Expected{"a100_p4d_2node_allreduce_awsdlami2024.txt", CollectiveKind::kAllReduce, 16, 2,
                 28},
        Expected{"a100_p4d_2node_allreduce_awsdlami2020ring.txt", CollectiveKind::kAllReduce, 16, 2,
                 28},
        Expected{"a100_p4de_2node_allreduce_awsome.txt", CollectiveKind::kAllReduce, 16, 2, 28},
        Expected{"a100_1node_allreduce_g8_thanos.txt", CollectiveKind::kAllReduce, 8, 1, 30},
        Expected{"a100_1node_allreduce_mpi8_thanos.txt", CollectiveKind::kAllReduce, 8, 1, 30},
        Expected{"a100_1node_sendrecv_liplus.txt", CollectiveKind::kSendRecv, 2, 1, 4},
        Expected{"a100_oci_1node_allreduce_10G_ocitut.txt", CollectiveKind::kAllReduce, 8, 1, 1},
        Expected{"a100_ib_hdr_4node2gpu_allreduce_nccltests311.txt", CollectiveKind::kAllReduce, 8,
                 4, 15},
        Expected{"a100_ibhdr_16node128gpu_allreduce_coreweave2022.txt", CollectiveKind::kAllReduce,
                 128, 16, 30},
        Expected{"a100_ibhdr_4node32gpu_allreduce_coreweave2023jan.txt", CollectiveKind::kAllReduce,
                 32, 4, 31},
        Expected{"h100_p5_2node_allreduce_awsomeEKS_partial.txt", CollectiveKind::kAllReduce, 16, 2,
                 6},
        Expected{"h100_ibndr_2node_allreduce_ring_nccltests290.txt", CollectiveKind::kAllReduce, 16,
                 2, 11},
        Expected{"h100_ibndr_8node64gpu_allreduce_sharp_coreweave.txt", CollectiveKind::kAllReduce,
                 96, 12, 5}));

TEST(NcclLogTest, ReadsVersionsDevicesAndBothColumns) {
  const CollectiveCurve c = read_nccl_log(kLogs + "a100_p4d_2node_allreduce_awsdlami2020ring.txt");
  EXPECT_EQ(c.nccl_version, "2.7.8");
  EXPECT_EQ(c.gpu, "A100-SXM4-40GB");
  EXPECT_DOUBLE_EQ(c.samples.front().bytes, 8.0);
  EXPECT_DOUBLE_EQ(c.samples.front().time_s, 158.9e-6);
  EXPECT_DOUBLE_EQ(c.samples.front().time_in_place_s, 158.1e-6);
  EXPECT_DOUBLE_EQ(c.samples.front().best_time_s(), 158.1e-6);
  EXPECT_FALSE(c.ranks_inferred);
  const CollectiveCurve h = read_nccl_log(kLogs + "h100_1node_allreduce_nccltests290.txt");
  EXPECT_EQ(h.gpu, "NVIDIA H100 80GB HBM3");
}

TEST(NcclLogTest, StripsLauncherPrefixes) {
  EXPECT_EQ(strip_launcher_prefix("[1,0]<stdout>:   8  2 float"), "   8  2 float");
  EXPECT_EQ(strip_launcher_prefix(" 0: #  Rank"), "#  Rank");
  EXPECT_EQ(strip_launcher_prefix("0: "), "");
  EXPECT_EQ(strip_launcher_prefix("           8             2     float"),
            "           8             2     float");
}

TEST(NcclLogTest, ElidedRankLinesAreInferredAndFlagged) {
  const CollectiveCurve c =
      read_nccl_log(kLogs + "a100_ibhdr_16node128gpu_allreduce_coreweave2022.txt");
  EXPECT_TRUE(c.ranks_inferred);
  EXPECT_TRUE(c.nodes_inferred);
  EXPECT_EQ(c.ranks_per_node, 8);
}

TEST(NcclLogTest, MalformedLogsNameFileAndLine) {
  EXPECT_EQ(error_of(kBad + "bad_time_allreduce.txt"),
            kBad +
                "bad_time_allreduce.txt:7: expected a number for the out-of-place time (us), "
                "got \"abc\"");
  EXPECT_EQ(error_of(kBad + "tiny_time_allreduce.txt"),
            kBad + "tiny_time_allreduce.txt:7: time out of range [0.001 us, 1e12 us]");
  EXPECT_EQ(error_of(kBad + "truncated_allreduce.txt"),
            kBad +
                "truncated_allreduce.txt:7: data row has 6 fields after the datatype, expected "
                "9 (the root, then time algbw busbw #wrong out-of-place and in-place; an optional "
                "redop before them)");
  EXPECT_EQ(error_of(kBad + "empty_allreduce.txt"),
            kBad + "empty_allreduce.txt: no nccl-tests data rows found");
  EXPECT_EQ(error_of(kBad + "mystery_log.txt"),
            kBad +
                "mystery_log.txt: cannot tell which collective this log measures: no \"# "
                "Collective test starting\" line and the file name names none of allreduce, "
                "allgather, reducescatter, alltoall, broadcast, sendrecv");
  EXPECT_EQ(error_of(kBad + "two_sweeps_allreduce.txt"),
            kBad +
                "two_sweeps_allreduce.txt:7: size 8 does not increase (previous row has 1024); "
                "one log must hold one sweep");
  EXPECT_EQ(error_of(kBad + "rank_mismatch_allreduce.txt"),
            kBad +
                "rank_mismatch_allreduce.txt: busbw/algbw implies 16 ranks but the log lists 2 "
                "Rank lines");
  EXPECT_EQ(error_of(kBad + "bad_ratio_allreduce.txt"),
            kBad +
                "bad_ratio_allreduce.txt:2: busbw/algbw does not match any rank count for "
                "all-reduce (2(n-1)/n)");
  EXPECT_EQ(error_of(kBad + "no_such_allreduce.txt"),
            kBad + "no_such_allreduce.txt: cannot open file");
  // A device never ends: refused before a byte is read.
  EXPECT_EQ(error_of("/dev/zero"),
            "/dev/zero: is not a regular file (a FIFO, device or socket); capsim reads its inputs "
            "from files");
}

TEST(NcclLogTest, ParsesOtherCollectivesFromTheHeaderLine) {
  const std::string text =
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "   1073741824      33554432     float    none      -1   5000.0  214.75  187.90      0   "
      "5000.0  214.75  187.90      0\n";
  const CollectiveCurve c = parse_nccl_log(text, "x.txt");
  EXPECT_EQ(c.kind, CollectiveKind::kAllGather);
  EXPECT_EQ(c.ranks, 8);  // (n-1)/n = 0.875
}

// Old-format alltoall rows leave redop blank (11 tokens); broadcast rows carry a root.
TEST(NcclLogTest, ParsesBlankRedopAndRootColumns) {
  const std::string alltoall =
      "#       size         count    type   redop     time   algbw   busbw  error     time   "
      "algbw   busbw  error\n"
      "   1073741824      16777216   float            9000.0  119.30  111.85  0e+00   9000.0  "
      "119.30  111.85  0e+00\n";
  const CollectiveCurve a = parse_nccl_log(alltoall, "x_alltoall_y.txt");
  EXPECT_EQ(a.kind, CollectiveKind::kAllToAll);
  EXPECT_EQ(a.ranks, 16);  // (n-1)/n = 0.9375
  const std::string broadcast =
      "# Collective test starting: broadcast_perf\n"
      "   1073741824     268435456     float    none       0   5000.0  214.75  214.75      0   "
      "5000.0  214.75  214.75      0\n";
  const CollectiveCurve b = parse_nccl_log(broadcast, "b.txt");
  EXPECT_EQ(b.kind, CollectiveKind::kBroadcast);
  EXPECT_DOUBLE_EQ(b.samples[0].time_s, 5e-3);
}

std::string text_error_of(const std::string& text, const std::string& name) {
  try {
    (void)parse_nccl_log(text, name);
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

// nccl-tests prints size-0 rows where the count per rank rounds down to 0 (all-gather from
// -b 8 on 8 ranks): they are skipped, not a second sweep.
TEST(NcclLogTest, SkipsSizeZeroRows) {
  const std::string text =
      "# Collective test starting: all_gather_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "            0             0     float    none      -1     0.20    0.00    0.00      0     "
      "0.20    0.00    0.00      0\n"
      "            0             0     float    none      -1     0.20    0.00    0.00      0     "
      "0.20    0.00    0.00      0\n"
      "   1073741824      33554432     float    none      -1   5000.0  214.75  187.90      0   "
      "5000.0  214.75  187.90      0\n";
  const CollectiveCurve c = parse_nccl_log(text, "ag.txt");
  ASSERT_EQ(c.samples.size(), 1U);
  EXPECT_EQ(c.ranks, 8);
}

// Rows cut short, sizes and version codes out of range, bytes that are not UTF-8, a
// pathological line, and broadcast bandwidths that cannot say how many ranks elided Rank lines
// hid: each a clear error with the line, or read safely.
TEST(NcclLogTest, RejectsWhatItCannotReadSafely) {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  EXPECT_EQ(text_error_of("# Collective test starting: broadcast_perf\n" + header +
                              "   2147483648     536870912     float    none       3   9000.0  "
                              "238.61  238.61      0   9000.0  238.61  238.61\n",
                          "b.txt"),
            "b.txt:3: data row has 8 fields after the datatype, expected 9 (the root, then time "
            "algbw busbw #wrong out-of-place and in-place; an optional redop before them)");
  EXPECT_EQ(text_error_of(header + std::string(400, '9') +
                              "      1     float    sum      -1   5.0  1.0  1.75  0   5.0  1.0  "
                              "1.75  0\n",
                          "x_allreduce.txt"),
            "x_allreduce.txt:2: size out of range: \"" + std::string(400, '9') + "\"");
  // Beyond the size ceiling of every input (1e18 bytes) the message quotes the size as written,
  // not converted to an integer (which would overflow to a negative size).
  EXPECT_EQ(text_error_of(header + std::string(30, '9') +
                              "      1     float    sum      -1   5.0  1.0  1.75  0   5.0  1.0  "
                              "1.75  0\n",
                          "x_allreduce.txt"),
            "x_allreduce.txt:2: size out of range: \"" + std::string(30, '9') + "\"");
  EXPECT_EQ(text_error_of("# SOURCE: caf\xe9\n" + header, "x_allreduce.txt"),
            "x_allreduce.txt:1: the log is not UTF-8 text (byte 233)");
  EXPECT_EQ(text_error_of("\n# SOURCE: \xed\xa0\x80\n" + header, "x_allreduce.txt"),
            "x_allreduce.txt:2: the log is not UTF-8 text (byte 237)");  // a surrogate
  const std::string row =
      "   1073741824     268435456     float     sum      -1   5000.0  214.75  375.81      0   "
      "5000.0  214.75  375.81      0\n";
  const CollectiveCurve odd =
      parse_nccl_log("# nccl-tests version 2.18.3 nccl-library=99999999999999999999\nNCCL " +
                         std::string(60000, '1') + "\n" + header + row,
                     "x_allreduce.txt");
  EXPECT_TRUE(odd.nccl_version.empty());
  EXPECT_EQ(odd.samples.size(), 1U);
  EXPECT_EQ(text_error_of("# Collective test starting: broadcast_perf\n"
                          "#  Rank  0 Group  0 Pid 1 on host0 device  0 [0x07] NVIDIA A100\n"
                          "#  Rank  1 Group  0 Pid 2 on host0 device  1 [0x0a] NVIDIA A100\n"
                          "...\n" +
                              header +
                              "   1073741824     268435456     float    none       0   5000.0  "
                              "214.75  214.75      0   5000.0  214.75  214.75      0\n",
                          "b.txt"),
            "b.txt: the Rank lines are elided ('...') and broadcast/send-recv bandwidths carry no "
            "rank count; give the full device list or use measurement JSON");
}

}  // namespace
}  // namespace capsim::calibrate
