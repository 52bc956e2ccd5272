#include "calibrate/collective_fit.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "calibrate/profile_fit.hpp"
#include "models/collective_cost.hpp"

#include "io/profile_io.hpp"

namespace capsim::calibrate::collective_fit_test {
namespace {

const std::string kLogs = std::string(CAPSIM_DATA_DIR) + "/nccl/";

struct LogCase {
  const char* file;
  const char* fabric;
  double nic_bytes_per_s;
  double max_mape_all_pct;    // the fit target (docs/calibration.md): 15
  double max_mape_large_pct;  // the fit target: 5 (sizes >= 1 MiB)
};

// Each log fitted on its own. Four logs cannot meet the targets with any min-over-regimes
// model (NCCL's structure is concave in size; these curves are not) and carry their measured
// bounds instead; docs/calibration.md explains each.
const LogCase kCases[] = {
    {"a100_1node_allreduce_1M-1G_galvatronfixture.txt", "", 0, 15, 5},
    {"a100_1node_allreduce_g8_thanos.txt", "", 0, 15, 5},
    {"a100_1node_allreduce_mpi8_thanos.txt", "", 0, 15, 5},
    {"a100_oci_1node_allreduce_10G_ocitut.txt", "", 0, 15, 5},
    {"a100_oci_roce_2node_allreduce_10G_ocitut.txt", "roce", 200e9, 15, 5},
    {"a100_p4d_2node_allreduce_awsdlami2024.txt", "efa", 50e9, 15, 5},
    {"a100_p4de_2node_allreduce_awsome.txt", "efa", 50e9, 15, 5},
    {"a100_p4de_2node_allreduce_pclusterworkshop.txt", "efa", 50e9, 15, 5},
    {"a100_ibhdr_16node128gpu_allreduce_coreweave2022.txt", "infiniband", 200e9, 15, 5},
    {"a100_ibhdr_4node32gpu_allreduce_coreweave2023jan.txt", "infiniband", 200e9, 15, 5},
    {"a100_ibhdr_4node32gpu_allreduce_coreweave2023jun_partial.txt", "infiniband", 200e9, 15, 5},
    {"h100_p5_1node_allreduce_awsbatch.txt", "", 0, 15, 5},
    {"h100_1node_allreduce_nccltests290.txt", "", 0, 15, 5},
    {"h100_p5_2node_allreduce_awsome.txt", "efa", 400e9, 15, 5},
    {"h100_gcpa3mega_2node_allreduce_ztan.txt", "roce", 200e9, 15, 5},
    {"h100_ibndr_2node_allreduce_default_nccltests290.txt", "infiniband", 400e9, 15, 5},
    {"h100_ibndr_8node64gpu_allreduce_sharp_coreweave.txt", "infiniband", 400e9, 15, 5},
    {"h100_p5_2node_allreduce_awsomeEKS_partial.txt", "efa", 400e9, 15, 5},  // 6 irregular rows
    // Known exceptions (measured bounds, not targets):
    {"a100_1node_sendrecv_liplus.txt", "", 0, 10, 10},  // 128 MiB point: 110 GB/s
    {"a100_p4d_2node_allreduce_awsdlami2020ring.txt", "efa", 50e9, 15, 6},  // noisy 64 MiB
    {"a100_ib_hdr_4node2gpu_allreduce_nccltests311.txt", "infiniband", 25e9, 22, 16},   // 1 MiB
    {"h100_ibndr_2node_allreduce_ring_nccltests290.txt", "infiniband", 400e9, 15, 10},  // slows
};

class OwnFitTest : public ::testing::TestWithParam<LogCase> {};

TEST_P(OwnFitTest, MeetsFitQuality) {
  const LogCase c = GetParam();
  const CollectiveCurve curve = read_nccl_log(kLogs + c.file);
  CollectiveFitOptions options;
  options.gpu_has_nvls = std::string(c.file).rfind("h100", 0) == 0;
  options.node_nic_bandwidth_bytes_per_s = c.nic_bytes_per_s;
  options.plugin_latency_s = std::string(c.fabric) == "efa" ? 75e-6 : 0.0;
  const CollectiveFit fit = fit_collective({curve}, options);
  const FitRecord rec = evaluate_fit(fit, curve, c.nic_bytes_per_s);
  EXPECT_LE(rec.mape_pct, c.max_mape_all_pct) << c.file;
  EXPECT_LE(rec.mape_large_pct, c.max_mape_large_pct) << c.file;
  EXPECT_NEAR(fit.mape_pct, rec.mape_pct, 1e-9);
  // Across nodes a ring cannot pass the NICs' line rate: a faster regime is a tree (or NVLS
  // tree), and the rings fitted below it stay under the line rate too.
  for (const auto& a : fit.algorithms) {
    if (fit.inter_node && a.algorithm == CollectiveAlgorithm::kRing && c.nic_bytes_per_s > 0.0) {
      EXPECT_LE(a.bus_bandwidth_bytes_per_s, c.nic_bytes_per_s * (1.0 + 1e-9)) << c.file;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllLogs, OwnFitTest, ::testing::ValuesIn(kCases));

// Every log that feeds a shipped profile meets the targets with the profile as shipped,
// except the A100 send/recv log (see above).
TEST(ShippedProfileTest, FitQualityRecordsMeetTargets) {
  for (const auto& e : io::embedded_profiles()) {
    const HardwareProfile p = io::embedded_profile(std::string(e.file));
    ASSERT_FALSE(p.fit_quality.empty()) << e.file;
    for (const auto& rec : p.fit_quality) {
      if (rec.source == "a100_1node_sendrecv_liplus.txt")
        continue;
      EXPECT_LE(rec.mape_pct, 15.0) << e.file << " " << rec.curve;
      if (rec.points_large > 0) {
        EXPECT_LE(rec.mape_large_pct, 5.0) << e.file << " " << rec.source;
      }
    }
  }
}

// Synthetic NCCL-like curve (LL regime + Simple regime): the fit recovers both bandwidths.
// An empty all-reduce curve over the 8 GPUs of one node.
CollectiveCurve one_node_all_reduce() {
  CollectiveCurve curve;
  curve.kind = CollectiveKind::kAllReduce;
  curve.ranks = 8;
  curve.nodes = 1;
  curve.ranks_per_node = 8;
  return curve;
}

TEST(CollectiveFitTest, RecoversSyntheticRegimes) {
  CollectiveCurve curve = one_node_all_reduce();
  const GroupShape g = curve_shape(curve);
  const AlgorithmParams ll{CollectiveAlgorithm::kRing, 8e-6, 1e-6, 0.0, 60e9};
  const AlgorithmParams simple{CollectiveAlgorithm::kRing, 10e-6, 4e-6, 0.0, 230e9};
  for (double b = 8; b <= 4.0 * 1024 * 1024 * 1024; b *= 2) {
    const double t = std::min(algorithm_time_s(ll, curve.kind, b, g, 1.0),
                              algorithm_time_s(simple, curve.kind, b, g, 1.0));
    curve.samples.push_back({b, t, 0.0, 0});
  }
  const CollectiveFit fit = fit_collective({curve}, {});
  const FitRecord rec = evaluate_fit(fit, curve);
  EXPECT_LT(rec.mape_pct, 1.0);
  EXPECT_NEAR(fit.algorithms.back().bus_bandwidth_bytes_per_s, 230e9, 0.01 * 230e9);
  bool found_ll = false;
  for (const auto& a : fit.algorithms) {
    found_ll = found_ll || std::abs(a.bus_bandwidth_bytes_per_s - 60e9) < 0.05 * 60e9;
  }
  EXPECT_TRUE(found_ll);
}

// One outlying row (a shared cluster's hiccup) does not pull the fit: the fitter minimises
// absolute relative error, so the other rows stay on their curve.
TEST(CollectiveFitTest, OneOutlierDoesNotPullTheOtherRows) {
  CollectiveCurve curve = one_node_all_reduce();
  const GroupShape g = curve_shape(curve);
  const AlgorithmParams simple{CollectiveAlgorithm::kRing, 10e-6, 4e-6, 0.0, 230e9};
  const double outlier_bytes = 64.0 * 1024 * 1024;
  for (double b = 1024.0 * 1024; b <= 1024.0 * 1024 * 1024; b *= 2) {
    const double t = algorithm_time_s(simple, curve.kind, b, g, 1.0);
    curve.samples.push_back({b, b == outlier_bytes ? 1.4 * t : t, 0.0, 0});
  }
  const CollectiveFit fit = fit_collective({curve}, {});
  const auto model = model_times(fit, curve);
  for (size_t i = 0; i < model.size(); ++i) {
    if (curve.samples[i].bytes == outlier_bytes)
      continue;
    EXPECT_NEAR(model[i] / curve.samples[i].best_time_s(), 1.0, 0.005) << curve.samples[i].bytes;
  }
}

// On Hopper the fastest single-node regime is NVLink SHARP; the rings below it stay within
// NCCL's ring maximum (18 NVLinks x 20.6 GB/s), however the segments split the points.
TEST(CollectiveFitTest, RingRegimesBelowNvlsStayUnderTheRingMaximum) {
  const HardwareProfile p = io::embedded_profile("h100-ib.json");
  const CollectiveFit* fit = find_collective_fit(p, CollectiveKind::kAllReduce, false);
  ASSERT_NE(fit, nullptr);
  for (const auto& a : fit->algorithms) {
    if (a.algorithm == CollectiveAlgorithm::kRing) {
      EXPECT_LE(a.bus_bandwidth_bytes_per_s, 18 * 20.6e9 * (1 + 1e-5));
    }
  }
}

// Extrapolation to other node counts follows NCCL's step counts: a ring adds 2(n-1) network
// steps for all-reduce, a tree 2 log2(nodes) (docs/design/nccl-cost-model.md §2).
TEST(CollectiveFitTest, ExtrapolatesWithNcclStepCounts) {
  const HardwareProfile p = io::embedded_profile("a100-efa.json");
  const CollectiveFit* fit = find_collective_fit(p, CollectiveKind::kAllReduce, true);
  ASSERT_NE(fit, nullptr);
  for (const auto& a : fit->algorithms) {
    const GroupShape two{16, 8, 2, 0.0};
    const GroupShape eight{64, 8, 8, 0.0};
    const double l2 = algorithm_time_s(a, CollectiveKind::kAllReduce, 0.0, two, 1.0);
    const double l8 = algorithm_time_s(a, CollectiveKind::kAllReduce, 0.0, eight, 1.0);
    if (a.algorithm == CollectiveAlgorithm::kRing) {
      // 2 nodes: 30 steps, 2 inter; 8 nodes: 126 steps, 14 inter.
      EXPECT_NEAR(l8 - l2, 12 * a.inter_step_latency_s + (112 - 28) * a.intra_step_latency_s,
                  1e-12);
    } else if (a.algorithm == CollectiveAlgorithm::kTree) {
      EXPECT_NEAR(l8 - l2, 2.0 * (3.0 - 1.0) * a.inter_step_latency_s, 1e-12);
    }
  }
  // Beyond 2 nodes a tree is held to the NICs' line rate (collective_time_s).
  const double bytes = 1024.0 * 1024 * 1024;
  const GroupShape eight{64, 8, 8, 0.0};
  const double t = collective_time_s(p, CollectiveKind::kAllReduce, bytes, eight);
  EXPECT_GE(t, bytes * bus_bandwidth_factor(CollectiveKind::kAllReduce, 64) /
                   p.reference_node_nic_bandwidth_bytes_per_s);
}

// All-gather across nodes: NCCL has no tree for it, so neither does the fit.
TEST(CollectiveFitTest, AllGatherFitUsesRingsOnly) {
  CollectiveCurve curve;
  curve.kind = CollectiveKind::kAllGather;
  curve.ranks = 16;
  curve.nodes = 2;
  curve.ranks_per_node = 8;
  const GroupShape g{16, 8, 2, 0.0};
  const AlgorithmParams ring{CollectiveAlgorithm::kRing, 10e-6, 2e-6, 20e-6, 45e9};
  for (double b = 1024; b <= 1024.0 * 1024 * 1024; b *= 4) {
    curve.samples.push_back({b, algorithm_time_s(ring, curve.kind, b, g, 1.0), 0.0, 0});
  }
  CollectiveFitOptions options;
  options.node_nic_bandwidth_bytes_per_s = 50e9;
  const CollectiveFit fit = fit_collective({curve}, options);
  for (const auto& a : fit.algorithms)
    EXPECT_EQ(a.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_LT(evaluate_fit(fit, curve).mape_pct, 1.0);
}

TEST(CollectiveFitTest, HopperSingleNodeFastestRegimeIsNvls) {
  const HardwareProfile p = io::embedded_profile("h100-efa.json");
  const CollectiveFit* fit = find_collective_fit(p, CollectiveKind::kAllReduce, false);
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->algorithms.back().algorithm, CollectiveAlgorithm::kNvls);
}

// When NVLS takes the largest all-reduce messages, NCCL's ring Simple protocol is never measured,
// yet NCCL runs it for large all-gathers and reduce-scatters (NVLS gives them less than half its
// all-reduce bandwidth). The fit adds it as NCCL's model implies it from the fitted LL128 regime
// (bus bandwidth / 0.92), without changing the fitted all-reduce curve.
TEST(CollectiveFitTest, NvlsFitImpliesTheRingSimpleRegime) {
  CollectiveCurve curve = one_node_all_reduce();
  const GroupShape g = curve_shape(curve);
  const AlgorithmParams ll{CollectiveAlgorithm::kRing, 6.6e-6, 0.6e-6, 0.0, 40e9};
  const AlgorithmParams ll128{CollectiveAlgorithm::kRing, 14e-6, 1.9e-6, 0.0, 300e9};
  const AlgorithmParams nvls{CollectiveAlgorithm::kNvls, 0.0, 60e-6, 0.0, 460e9};
  for (double b = 8; b <= 16.0 * 1024 * 1024 * 1024; b *= 2) {
    const double t = std::min({algorithm_time_s(ll, curve.kind, b, g, 1.0),
                               algorithm_time_s(ll128, curve.kind, b, g, 1.0),
                               algorithm_time_s(nvls, curve.kind, b, g, 1.0)});
    curve.samples.push_back({b, t, 0.0, 0});
  }
  CollectiveFitOptions options;
  options.gpu_has_nvls = true;
  const CollectiveFit fit = fit_collective({curve}, options);
  ASSERT_GE(fit.algorithms.size(), 3U);
  ASSERT_EQ(fit.algorithms.back().algorithm, CollectiveAlgorithm::kNvls);
  const AlgorithmParams& simple = fit.algorithms[fit.algorithms.size() - 2];
  const AlgorithmParams& fitted_ll128 = fit.algorithms[fit.algorithms.size() - 3];
  EXPECT_NEAR(fitted_ll128.bus_bandwidth_bytes_per_s, 300e9, 0.02 * 300e9);
  EXPECT_NEAR(simple.bus_bandwidth_bytes_per_s, fitted_ll128.bus_bandwidth_bytes_per_s / 0.92, 1e3);
  // The fitted all-reduce curve is the same with or without the implied regime.
  CollectiveFit without = fit;
  without.algorithms.erase(without.algorithms.end() - 2);
  const auto with_times = model_times(fit, curve);
  const auto without_times = model_times(without, curve);
  for (size_t i = 0; i < with_times.size(); ++i)
    EXPECT_DOUBLE_EQ(with_times[i], without_times[i]) << curve.samples[i].bytes;
  // A large all-gather borrowing this fit runs on the implied ring Simple regime.
  HardwareProfile p;
  p.collectives.push_back(fit);
  const double bytes = 1024.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(collective_time_s(p, CollectiveKind::kAllGather, bytes, g),
                   algorithm_time_s(simple, CollectiveKind::kAllGather, bytes, g, 1.0));
}

TEST(CollectiveFitTest, MoreNicBandwidthIsNeverSlower) {
  const HardwareProfile p = io::embedded_profile("a100-ib.json");
  for (double bytes = 1e3; bytes < 1e10; bytes *= 10) {
    GroupShape g{64, 8, 8, 100e9};
    const double slow = collective_time_s(p, CollectiveKind::kAllReduce, bytes, g);
    g.nic_bandwidth_per_node_bytes_per_s = 200e9;
    EXPECT_LE(collective_time_s(p, CollectiveKind::kAllReduce, bytes, g), slow);
  }
}

}  // namespace
}  // namespace capsim::calibrate::collective_fit_test
