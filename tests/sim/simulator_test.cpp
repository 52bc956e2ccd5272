#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "models/collective_cost.hpp"
#include "sim/isolated_simulation.hpp"
#include "sim/iteration_simulator.hpp"
#include "traces/chrome_trace.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/qwen3_dualpipev.hpp"
#include "tests/sim/sim_test_util.hpp"

// Every TEST here runs its own SimGrid simulation, in its own process (gtest_discover_tests);
// tests that compare two simulations run one of them in a forked child.

namespace capsim::sim {
namespace {

using test::make_costs;
using test::make_profile;
using test::make_scenario;

constexpr double kMs = 1e-3;

TEST(EventEngineTest, SingleStageIsTheSumOfItsOps) {
  const Scenario sc = make_scenario(8, 1, 1, 4, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.5 * kMs, 0.0, 0.0);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_EQ(r.engine, "event");
  EXPECT_NEAR(r.iteration_time_s, 4 * 3 * kMs + 0.5 * kMs, 1e-12);
  EXPECT_NEAR(r.breakdown.compute_s, 12 * kMs, 1e-12);
  EXPECT_NEAR(r.breakdown.optimizer_s, 0.5 * kMs, 1e-12);
  EXPECT_NEAR(r.breakdown.bubble_s, 0.0, 1e-12);
  EXPECT_GT(r.tokens_per_s, 0.0);
}

// Narayanan et al. 2021 §2.2: (M + P - 1)(f + b) without communication cost.
TEST(EventEngineTest, OneFOneBMatchesClosedForm) {
  const Scenario sc = make_scenario(2, 4, 1, 8, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s, (8 + 4 - 1) * 3 * kMs, 1e-12);
  EXPECT_NEAR(r.breakdown.bubble_s, 3 * 3 * kMs, 1e-12);
}

TEST(EventEngineTest, GpipeMatchesClosedForm) {
  const Scenario sc = make_scenario(2, 4, 1, 8, Schedule::kGpipe);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s, (8 + 4 - 1) * 3 * kMs, 1e-12);
}

// Interleaving divides the bubble by v (Narayanan et al. 2021 §2.2.2).
TEST(EventEngineTest, InterleavedDividesTheBubble) {
  const Scenario sc = make_scenario(2, 4, 1, 8, Schedule::kInterleaved, 2);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s, 8 * 3 * kMs + 3 * 3 * kMs / 2, 1e-12);
}

// Micro-batch groups other than P (10 micro-batches on 4 stages in groups of 5): the event
// engine plays the order the estimator replays and gives its time.
TEST(EventEngineTest, InterleavedMicroBatchGroupsMatchTheEstimator) {
  Scenario sc = make_scenario(2, 4, 1, 10, Schedule::kInterleaved, 2);
  sc.parallelism.microbatch_group_size = 5;
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s,
              estimate::estimate_iteration(sc, costs, make_profile()).iteration_time_s, 1e-9);
  EXPECT_GE(r.iteration_time_s, 10 * 3 * kMs);
}

// ZB-H1 (Qi et al. 2024): bubble at most (P-1)(F + B - W) with F = B = W.
TEST(EventEngineTest, ZeroBubbleShrinksTheBubble) {
  const Scenario sc = make_scenario(2, 4, 1, 8, Schedule::kZeroBubble);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_LE(r.iteration_time_s, 8 * 3 * kMs + 3 * 1 * kMs + 1e-12);
  EXPECT_LT(r.iteration_time_s, (8 + 4 - 1) * 3 * kMs);
}

// ZB-H1 with fewer micro-batches than stages: too few deferred W's to fill the drain. The
// replay gives (P-1)(F + B - W) + (P - m) W (F = B = W = 1 ms here), and so does the estimator.
TEST(EventEngineTest, ZeroBubbleWithFewMicroBatchesMatchesTheEstimator) {
  for (const int m : {1, 2, 3, 4, 8}) {
    const Scenario sc = make_scenario(2, 4, 1, m, Schedule::kZeroBubble);
    const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
    const double expected = (m * 3.0 + 3.0 * 1.0 + std::max(0, 4 - m) * 1.0) * kMs;
    const std::string event = test::run_in_child([&] {
      return test::format_double(simulate_iteration(sc, costs, make_profile()).iteration_time_s);
    });
    EXPECT_NEAR(std::stod(event), expected, 1e-9) << "m = " << m;
    EXPECT_NEAR(estimate::estimate_iteration(sc, costs, make_profile()).iteration_time_s, expected,
                1e-9)
        << "m = " << m;
  }
}

// DualPipeV (F = 1 ms, B = 2 ms per stage, each chunk half of it): the event engine plays the
// order the estimator replays, paired forwards' activations leaving with their pair's
// backward, and its bubble is below 1F1B's (P - 1)(F + B).
TEST(EventEngineTest, DualPipeVMatchesTheEstimator) {
  for (const int m : {8, 11, 16}) {
    const Scenario sc = make_scenario(2, 4, 1, m, Schedule::kDualPipeV, 2);
    const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
    const double analytic =
        estimate::estimate_iteration(sc, costs, make_profile()).iteration_time_s;
    const std::string event = test::run_in_child([&] {
      return test::format_double(simulate_iteration(sc, costs, make_profile()).iteration_time_s);
    });
    EXPECT_NEAR(std::stod(event), analytic, 1e-9) << "m = " << m;
    EXPECT_LT(analytic, (m + 4 - 1) * 3 * kMs) << "m = " << m;
    EXPECT_GE(analytic, m * 3 * kMs) << "m = " << m;
  }
}

// A lone PP transfer takes the profile's send/recv time: 50 MB at 20 GB/s = 2.5 ms per hop.
TEST(EventEngineTest, PipelineTransfersTakeTheProfileTime) {
  const Scenario sc = make_scenario(8, 2, 1, 1, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 50e6, 0.0);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  // F0 (1) + hop (2.5) + F1 (1) + B1 (2) + hop (2.5) + B0 (2). Stage 0 ends last; from its
  // view its own send (1F1B blocks on it, as Megatron does) and the gradient's transfer are
  // exposed PP time, and the rest of its wait is bubble.
  EXPECT_NEAR(r.iteration_time_s, 11 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.pp_comm_exposed_s, 5.0 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.bubble_s, 3.0 * kMs, 1e-9);
}

// DP buckets overlap the last backward: 1 GB of gradients in 40 buckets of 25 MB, each 1.25 ms
// (two ranks, 20 GB/s): 50 ms of reduction, of which the last backward hides up to 2 ms.
TEST(EventEngineTest, DataParallelBucketsOverlapTheLastBackward) {
  const Scenario sc = make_scenario(8, 1, 2, 2, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.5e9);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  // Buckets released every 2/40 ms during the last backward; the reduction ends at
  // 2 * 3 ms - 2 ms + 2/40 ms + 40 * 1.25 ms.
  // SimGrid resolves each flow's end to ~1e-10 s (surf/precision); 40 flows stay within 1e-8.
  EXPECT_NEAR(r.iteration_time_s, 4 * kMs + 0.05 * kMs + 50 * kMs, 1e-8);
  EXPECT_NEAR(r.breakdown.dp_comm_exposed_s, 50 * kMs + 0.05 * kMs - 2 * kMs, 1e-8);
}

// Without overlap_grad_reduce (Megatron-LM's own default) every bucket goes out after the last
// backward: the whole reduction, 40 x 1.25 ms, follows the 6 ms of compute.
TEST(EventEngineTest, WithoutOverlapTheBucketsFollowTheLastBackward) {
  Scenario sc = make_scenario(8, 1, 2, 2, Schedule::kOneFOneB);
  sc.parallelism.overlap_grad_reduce = false;
  sc.parallelism.overlap_param_gather = false;
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.5e9);
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s, 6 * kMs + 50 * kMs, 1e-8);
  EXPECT_NEAR(r.breakdown.dp_comm_exposed_s, 50 * kMs, 1e-8);
}

// Megatron-Core buckets only stage 0's first virtual chunk: with two chunks of 0.5e9 gradient
// elements (2 bytes each, 25 MB buckets) stage 0's chunk 0 reduces in 40 buckets and its chunk
// 1 in one; stage 1 reduces each chunk as one bucket. The every-chunk layout (Apex, PyTorch
// DDP) splits all four chunks.
TEST(EventEngineTest, OnlyTheFirstChunkOfTheFirstStageIsBucketed) {
  const Scenario sc = make_scenario(8, 2, 2, 2, Schedule::kInterleaved, 2);
  IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 1e6, 1e9);
  const auto bucket_slices = [&] {
    traces::ChromeTrace trace;
    SimOptions opt;
    opt.trace = &trace;
    (void)simulate_iteration(sc, costs, make_profile(), opt);
    std::vector<int> per_track(trace.tracks.size(), 0);
    for (const auto& s : trace.slices) {
      if (s.category == "dp" && s.name.rfind("DP all-reduce", 0) == 0)
        ++per_track[static_cast<size_t>(s.track)];
    }
    std::string out;
    for (const int n : per_track)
      out += std::to_string(n) + " ";
    return out;
  };
  EXPECT_EQ(test::run_in_child(bucket_slices), "41 2 ");
  costs.megatron_core_buckets = false;
  EXPECT_EQ(test::run_in_child(bucket_slices), "80 80 ");
}

// Collectives beside compute take SMs (compute rate 0.5 here). One micro-batch, 40 MB of
// gradients in two 20 MB buckets of 1 ms each, released halfway through and at the end of the
// 2 ms backward: bucket 1 runs while compute does half its remaining 1 ms of work, so compute
// ends at 1 + 1 + 1.5 ms and bucket 2 at 4.5 ms (4 ms with free overlap). The 0.5 ms of
// slowdown is charged to exposed DP communication.
TEST(EventEngineTest, CollectivesSlowComputeBesideThem) {
  const Scenario sc = make_scenario(8, 1, 2, 1, Schedule::kOneFOneB);
  IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 20e6);
  costs.dp_bucket_bytes = 20e6;
  costs.compute_rate_during_comm = 0.5;
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s, 4.5 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.compute_s, 3 * kMs, 1e-12);
  EXPECT_NEAR(r.breakdown.dp_comm_exposed_s, 1.5 * kMs, 1e-9);
}

// Buckets fill to the bucket size and the last holds the rest (Megatron-Core): 40 MB in 25 MB
// buckets are a 25 MB bucket (1.25 ms), released 5/8 into the 2 ms backward, and a 15 MB one
// (0.75 ms) at its end. Compute at half speed beside the first: at 2.25 ms 0.75 ms of work is
// left, 0.625 ms of it done by 3.5 ms, the rest by 3.625 ms; the last bucket ends at 4.375 ms.
TEST(EventEngineTest, TheLastBucketHoldsTheRest) {
  const Scenario sc = make_scenario(8, 1, 2, 1, Schedule::kOneFOneB);
  IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 20e6);
  costs.compute_rate_during_comm = 0.5;
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s, 4.375 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.dp_comm_exposed_s, 1.375 * kMs, 1e-9);
}

// The same with the collectives holding most of the GPU (compute rate 0.25, as a large
// collective_sms gives): bucket 1 lets compute do 0.25 ms in its 1 ms, so compute ends at
// 1 + 1 + 1 + 0.75 ms and bucket 2 at 4.75 ms, as overlapped_exposed_s says. SimGrid's fair
// share must not cap the slowdown at half the host.
TEST(EventEngineTest, CollectivesHoldingMostSmsSlowComputeBelowHalfSpeed) {
  const Scenario sc = make_scenario(8, 1, 2, 1, Schedule::kOneFOneB);
  IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 20e6);
  costs.dp_bucket_bytes = 20e6;
  costs.compute_rate_during_comm = 0.25;
  const SimulationResult r = simulate_iteration(sc, costs, make_profile());
  EXPECT_NEAR(r.iteration_time_s, 4.75 * kMs, 1e-9);
  EXPECT_NEAR(r.breakdown.compute_s, 3 * kMs, 1e-12);
  EXPECT_NEAR(r.breakdown.dp_comm_exposed_s, 1.75 * kMs, 1e-9);
}

TEST(EventEngineTest, SecondSimulationInOneProcessThrows) {
  const Scenario sc = make_scenario(8, 1, 1, 1, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.0, 0.0, 0.0);
  (void)simulate_iteration(sc, costs, make_profile());
  EXPECT_THROW((void)simulate_iteration(sc, costs, make_profile()), std::logic_error);
}

TEST(EventEngineTest, TraceHasOneTrackPerSimulatedGpu) {
  const Scenario sc = make_scenario(2, 2, 2, 4, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.1 * kMs, 1e6, 1e8);
  traces::ChromeTrace trace;
  SimOptions opt;
  opt.exploit_symmetry = false;
  opt.trace = &trace;
  SimStats stats;
  (void)simulate_iteration(sc, costs, make_profile(), opt, &stats);
  EXPECT_EQ(stats.simulated_gpus, 8);
  EXPECT_EQ(trace.tracks.size(), 8u);
  EXPECT_EQ(trace.streams.size(), 5u);
  int forwards = 0;
  for (const auto& s : trace.slices) {
    if (s.category == "compute" && s.name[0] == 'F')
      ++forwards;
  }
  EXPECT_EQ(forwards, 8 * 4);
}

// Expert-parallel exchanges are exposed communication of their ops, reported as EP and shown
// as their own trace slices; the expert-DP reduction precedes the optimizer step. The analytic
// engine charges the same.
TEST(EventEngineTest, ExpertParallelExchangesAreTheirOwnSlices) {
  const Scenario sc = make_scenario(8, 1, 1, 4, Schedule::kOneFOneB);
  IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.1 * kMs, 1e6, 1e8);
  for (ChunkCosts& ch : costs.stages.front().chunks) {
    ch.forward_ep_comm_s = 0.25 * kMs;
    ch.backward_ep_comm_s = 0.5 * kMs;
  }
  costs.stages.front().expert_dp_s = 0.2 * kMs;
  traces::ChromeTrace trace;
  SimOptions opt;
  opt.trace = &trace;
  const SimulationResult r = simulate_iteration(sc, costs, make_profile(), opt);
  const double m = costs.micro_batches;
  EXPECT_NEAR(r.breakdown.ep_comm_exposed_s, m * 0.75 * kMs, 1e-12);
  EXPECT_NEAR(r.iteration_time_s, m * 3.75 * kMs + 0.2 * kMs + 0.1 * kMs, 1e-9);
  int exchanges = 0;
  int expert_reductions = 0;
  for (const auto& slice : trace.slices) {
    exchanges += slice.category == "ep" ? 1 : 0;
    expert_reductions += slice.name == "expert-DP gradients" ? 1 : 0;
  }
  EXPECT_EQ(exchanges, 2 * costs.micro_batches);
  EXPECT_EQ(expert_reductions, 1);
  const SimulationResult a = estimate::estimate_iteration(sc, costs, make_profile(), nullptr);
  EXPECT_NEAR(a.iteration_time_s, r.iteration_time_s, 1e-9);
  EXPECT_NEAR(a.breakdown.ep_comm_exposed_s, r.breakdown.ep_comm_exposed_s, 1e-12);
}

// Every GPU of 16,384 simulated (TP8 PP2 DP1024): beyond ~32k actors the stacks' guard pages
// exceed Linux's vm.max_map_count and SimGrid aborts ("Failed to protect stack"); the replay
// drops them for large runs. The result equals the reduced run's (the layout is symmetric).
TEST(EventEngineTest, EveryGpuRunsSixteenThousandGpus) {
#if defined(__SANITIZE_ADDRESS__)
  // 16,384 actors' stacks and their shadow memory exceed what AddressSanitizer can map here
  // (ENOMEM); the release build runs this test.
  GTEST_SKIP() << "too many actor stacks for AddressSanitizer";
#endif
  const Scenario sc = make_scenario(8, 2, 1024, 2, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.1 * kMs, 1e6, 1e8);
  const auto run = [&](bool every_gpu) {
    return test::run_in_child([&] {
      SimOptions opt;
      opt.exploit_symmetry = !every_gpu;
      SimStats stats;
      const SimulationResult r = simulate_iteration(sc, costs, make_profile(), opt, &stats);
      return std::to_string(stats.simulated_gpus) + " " + test::format_double(r.iteration_time_s);
    });
  };
  const std::string reduced = run(false);
  const std::string every = run(true);
  ASSERT_EQ(every.rfind("16384 ", 0), 0u) << every;
  EXPECT_EQ(every.substr(6), reduced.substr(reduced.find(' ') + 1));
}

// Perfetto needs the slices of one thread disjoint or nested: the compute actor's own
// communication, the DP buckets and ZeRO-3's gathers and scatters run at the same time, so each
// has its own thread. ZeRO-0 and ZeRO-3 layouts with buckets beside TP and PP traffic.
TEST(EventEngineTest, TraceSlicesOfOneThreadNeverOverlap) {
  for (int zero : {0, 3}) {
    Scenario sc = make_scenario(8, 2, 2, 4, Schedule::kOneFOneB);
    sc.parallelism.zero_stage = zero;
    const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.1 * kMs, 30e6, 3e8);
    const std::string overlaps = test::run_in_child([&] {
      traces::ChromeTrace trace;
      SimOptions opt;
      opt.trace = &trace;
      (void)simulate_iteration(sc, costs, make_profile(5e-6), opt);
      std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> threads;
      for (const auto& sl : trace.slices)
        threads[{sl.track, sl.stream}].emplace_back(sl.start_s, sl.start_s + sl.duration_s);
      int count = 0;
      for (auto& [thread, spans] : threads) {
        std::sort(spans.begin(), spans.end());
        for (size_t i = 1; i < spans.size(); ++i) {
          const bool starts_inside = spans[i].first < spans[i - 1].second - 1e-12;
          const bool ends_outside = spans[i].second > spans[i - 1].second + 1e-12;
          if (starts_inside && ends_outside)  // partial overlap (nesting is allowed)
            ++count;
        }
      }
      return std::to_string(count);
    });
    EXPECT_EQ(overlaps, "0") << "ZeRO-" << zero;
  }
}

TEST(EventEngineTest, SameInputGivesByteIdenticalTrace) {
  const Scenario sc = make_scenario(8, 2, 2, 4, Schedule::kOneFOneB);
  const IterationCosts costs = make_costs(sc, 1 * kMs, 2 * kMs, 0.1 * kMs, 30e6, 3e8);
  auto body = [&] {
    traces::ChromeTrace trace;
    SimOptions opt;
    opt.trace = &trace;
    const SimulationResult r = simulate_iteration(sc, costs, make_profile(5e-6), opt);
    std::ostringstream out;
    write_chrome_trace(out, trace);
    return test::format_double(r.iteration_time_s) + "\n" + out.str();
  };
  const std::string child = test::run_in_child(body);
  EXPECT_EQ(child, body());
}

// Symmetry: the reduced run (one TP rank per stage, one DP replica, links scaled to the
// simulated GPU's share, the DP ring folded onto a mirror) equals the run of every GPU.
struct SymmetryCase {
  const char* name;
  int tp, pp, dp, micro_batches;
  Schedule schedule;
  int virtual_stages;
  int zero_stage;
  int nics_per_node;
  double oversubscription;
  int nodes_per_leaf = 1;
  bool uniform_buckets = false;  // every chunk bucketed alike (dp_bucket_layout every-chunk)
};

class SymmetryTest : public testing::TestWithParam<SymmetryCase> {};

TEST_P(SymmetryTest, ReducedRunEqualsFullRun) {
  const SymmetryCase& k = GetParam();
  Scenario sc = make_scenario(k.tp, k.pp, k.dp, k.micro_batches, k.schedule, k.virtual_stages);
  sc.parallelism.zero_stage = k.zero_stage;
  sc.cluster.nics_per_node = k.nics_per_node;
  sc.cluster.nic_bandwidth_bytes_per_s = 200e9 / k.nics_per_node;
  if (k.oversubscription > 1.0) {
    sc.cluster.topology = Topology::kOversubscribed;
    sc.cluster.oversubscription = k.oversubscription;
    sc.cluster.nodes_per_leaf = k.nodes_per_leaf;
  }
  IterationCosts costs = make_costs(sc, 4 * kMs, 8 * kMs, 1 * kMs, 50e6, 2e8);
  costs.megatron_core_buckets = !k.uniform_buckets;
  auto run = [&](bool reduced) {
    SimOptions opt;
    opt.exploit_symmetry = reduced;
    SimStats stats;
    const SimulationResult r = simulate_iteration(sc, costs, make_profile(8e-6), opt, &stats);
    const TimeBreakdown& b = r.breakdown;
    return test::format_double(r.iteration_time_s) + " " +
           test::format_double(b.pp_comm_exposed_s) + " " +
           test::format_double(b.dp_comm_exposed_s) + " " + test::format_double(b.bubble_s) +
           " gpus=" + std::to_string(stats.simulated_gpus);
  };
  const std::string reduced = test::run_in_child([&] { return run(true); });
  const std::string full = run(false);
  std::istringstream rs(reduced);
  std::istringstream fs(full);
  for (int i = 0; i < 4; ++i) {
    double a = 0.0;
    double b = 0.0;
    rs >> a;
    fs >> b;
    EXPECT_NEAR(a, b, 1e-12 + 1e-9 * b)
        << "field " << i << "\nreduced: " << reduced << "\nfull:    " << full;
  }
  EXPECT_NE(reduced.substr(reduced.find("gpus=")), full.substr(full.find("gpus=")));
}

INSTANTIATE_TEST_SUITE_P(
    SmallClusters, SymmetryTest,
    testing::Values(
        SymmetryCase{"tp8_pp2_dp2_zero0", 8, 2, 2, 4, Schedule::kOneFOneB, 1, 0, 8, 1.0},
        SymmetryCase{"tp4_pp2_dp4_p4d_zero1", 4, 2, 4, 4, Schedule::kOneFOneB, 1, 1, 4, 1.0},
        SymmetryCase{"tp1_pp1_dp16_zero3", 1, 1, 16, 2, Schedule::kOneFOneB, 1, 3, 8, 1.0},
        SymmetryCase{"tp8_pp2_dp2_oversub3", 8, 2, 2, 4, Schedule::kOneFOneB, 1, 0, 8, 3.0},
        // One DP ring over four nodes in two leaves: only the edges between leaves cross. Both
        // stages' rings leave the leaf; the reduced run's share assumes they do so at once,
        // which holds when every stage buckets alike. With Megatron-Core's buckets (stage 1
        // reduces one bucket while stage 0 still computes) it is conservative: +2.3% here
        // (docs/simulator.md, symmetry caveat).
        SymmetryCase{"tp8_pp2_dp2_oversub3_leaf2", 8, 2, 2, 4, Schedule::kOneFOneB, 1, 0, 8, 3.0, 2,
                     true},
        SymmetryCase{"tp8_pp1_dp4_oversub3_leaf2", 8, 1, 4, 2, Schedule::kOneFOneB, 1, 1, 8, 3.0,
                     2},
        SymmetryCase{"tp2_pp4_dp4_interleaved", 2, 4, 4, 8, Schedule::kInterleaved, 2, 1, 8, 1.0},
        SymmetryCase{"tp2_pp2_dp8_zb_p5", 2, 2, 8, 4, Schedule::kZeroBubble, 1, 0, 32, 1.0},
        // TP across nodes: a DP group's nodes are two apart (its ring skips the TP partner).
        SymmetryCase{"tp16_pp1_dp2_zero0", 16, 1, 2, 4, Schedule::kOneFOneB, 1, 0, 8, 1.0},
        SymmetryCase{"tp16_pp2_dp2_zero3", 16, 2, 2, 4, Schedule::kOneFOneB, 1, 3, 8, 1.0}),
    [](const testing::TestParamInfo<SymmetryCase>& p) { return p.param.name; });

// Oversubscribed fabrics with leaf switches (3:1, DGX-like nodes of 8 x 25 GB/s): iteration
// time of `sc` with `nodes_per_leaf` (0: non-blocking), simulated in a child process.
double oversubscribed_iteration_s(Scenario sc, int nodes_per_leaf, bool reduced = true) {
  if (nodes_per_leaf > 0) {
    sc.cluster.topology = Topology::kOversubscribed;
    sc.cluster.oversubscription = 3.0;
    sc.cluster.nodes_per_leaf = nodes_per_leaf;
  }
  sc.parallelism.zero_stage = 1;
  const IterationCosts costs = make_costs(sc, 4 * kMs, 8 * kMs, 1 * kMs, 50e6, 2e8);
  const std::string out = test::run_in_child([&] {
    SimOptions opt;
    opt.exploit_symmetry = reduced;
    return test::format_double(
        simulate_iteration(sc, costs, make_profile(8e-6), opt).iteration_time_s);
  });
  return std::stod(out);
}

// Every GPU simulated, routed through per-leaf or per-NVLink-domain zones (as above
// SimOptions::one_zone_max_gpus) or through one zone: the same links, so the same iteration.
TEST(EventEngineTest, RoutingThroughGroupsChangesNothing) {
  struct Case {
    int nodes_per_leaf;  // 0: non-blocking
    int nvlink_domain;   // 0: the node
  };
  for (const Case k : {Case{0, 0}, Case{2, 0}, Case{1, 0}, Case{0, 16}, Case{2, 16}}) {
    Scenario sc = make_scenario(4, 2, 4, 4, Schedule::kOneFOneB);  // 32 GPUs on 4 nodes
    sc.parallelism.zero_stage = 1;
    sc.cluster.nvlink_domain = k.nvlink_domain;
    if (k.nodes_per_leaf > 0) {
      sc.cluster.topology = Topology::kOversubscribed;
      sc.cluster.oversubscription = 3.0;
      sc.cluster.nodes_per_leaf = k.nodes_per_leaf;
    }
    const IterationCosts costs = make_costs(sc, 4 * kMs, 8 * kMs, 1 * kMs, 50e6, 2e8);
    const auto run = [&](std::size_t one_zone_max_gpus) {
      return test::run_in_child([&] {
        SimOptions opt;
        opt.exploit_symmetry = false;
        opt.one_zone_max_gpus = one_zone_max_gpus;
        const SimulationResult r = simulate_iteration(sc, costs, make_profile(8e-6), opt);
        const TimeBreakdown& b = r.breakdown;
        return test::format_double(r.iteration_time_s) + " " +
               test::format_double(b.pp_comm_exposed_s) + " " +
               test::format_double(b.dp_comm_exposed_s) + " " + test::format_double(b.bubble_s);
      });
    };
    EXPECT_EQ(run(0), run(SimOptions{}.one_zone_max_gpus))
        << k.nodes_per_leaf << " nodes per leaf, NVLink domain " << k.nvlink_domain;
  }
}

// A leaf that holds every node has no traffic on its uplinks: the fabric is non-blocking.
TEST(OversubscribedFabricTest, LeafHoldingEveryNodeIsNonBlocking) {
  const Scenario sc = make_scenario(8, 2, 2, 4, Schedule::kOneFOneB);
  EXPECT_NEAR(oversubscribed_iteration_s(sc, 4), oversubscribed_iteration_s(sc, 0), 1e-12);
}

// Property: with nested leaves (each leaf of 2L nodes holds two of L), more nodes per leaf
// never make an iteration slower (fewer flows leave a leaf), and one node per leaf (every
// inter-node byte on the uplinks, the worst case) is slower than no oversubscription.
TEST(OversubscribedFabricTest, LargerLeavesAreNeverSlower) {
  const Scenario sc = make_scenario(8, 2, 4, 4, Schedule::kOneFOneB);  // 8 nodes
  double previous = oversubscribed_iteration_s(sc, 1);
  EXPECT_GT(previous, oversubscribed_iteration_s(sc, 0));
  for (const int leaf : {2, 4, 8}) {
    const double t = oversubscribed_iteration_s(sc, leaf);
    EXPECT_LE(t, previous * (1.0 + 1e-12)) << leaf << " nodes per leaf";
    previous = t;
  }
}

// When PP and DP flows leave leaves from different GPUs (TP8 x PP2 x DP4, four nodes per stage,
// two per leaf: every PP send crosses, each ring only from its leaf's last node), the reduced
// run gives each class its own uplink share: exact while the classes take turns, optimistic
// while they overlap. Measured -0.9% to -3.3% on nine such layouts (TP4/8, PP2/4, DP2-8, two
// or four nodes per leaf); -1.7% here, and the test allows 5%.
TEST(OversubscribedFabricTest, ReducedRunIsCloseWhenPpAndDpLeaveFromDifferentGpus) {
  const Scenario sc = make_scenario(8, 2, 4, 8, Schedule::kOneFOneB);
  const double reduced = oversubscribed_iteration_s(sc, 2, true);
  const double full = oversubscribed_iteration_s(sc, 2, false);
  EXPECT_LE(reduced, full * (1.0 + 1e-12));
  EXPECT_GE(reduced, full * 0.95);
}

// With Megatron-Core's buckets stage 1 reduces one bucket when its backward ends while stage 0
// still computes, so the two stages' rings do not leave the leaf at once as the reduced run's
// share assumes: the reduced run is then conservative, by a few percent.
TEST(OversubscribedFabricTest, ReducedRunIsConservativeWhenStagesReduceApart) {
  const Scenario sc = make_scenario(8, 2, 2, 4, Schedule::kOneFOneB);
  const double reduced = oversubscribed_iteration_s(sc, 2, true);
  const double full = oversubscribed_iteration_s(sc, 2, false);
  EXPECT_GE(reduced, full * (1.0 - 1e-12));
  EXPECT_LE(reduced, full * 1.05);
}

// Megatron-Core buckets on a pipeline: stage 1 reduces its gradients as one bucket when its last
// backward ends, one backward step before stage 0's, and that idle slack hides it; stage 0's
// buckets overlap its own last backward. Both engines charge the same exposed DP time (measured
// 12.5 vs 12.0 ms and 52.2 vs 52.0 ms; without the slack the estimator would charge stage 1's
// whole bucket, 20 and 60 ms).
TEST(EventEngineTest, LaterStagesSingleBucketHidesInTheirDrainSlack) {
  const Scenario sc = make_scenario(8, 2, 2, 4, Schedule::kOneFOneB);
  for (const double params : {2e8, 6e8}) {
    IterationCosts costs = make_costs(sc, 4 * kMs, 8 * kMs, 0.0, 1e6, params);
    const HardwareProfile profile = make_profile();
    const double analytic =
        estimate::estimate_iteration(sc, costs, profile).breakdown.dp_comm_exposed_s;
    const std::string event = test::run_in_child([&] {
      return test::format_double(
          simulate_iteration(sc, costs, profile).breakdown.dp_comm_exposed_s);
    });
    EXPECT_NEAR(std::stod(event), analytic, 0.05 * analytic + 0.1 * kMs) << params;
  }
}

// Cross-check: without contention (PP = 1, so DP flows have the NICs to themselves) the event
// engine and the analytic estimator agree. They differ only by bucket granularity: the event
// engine releases gradient buckets evenly during the last backward, the estimator assumes
// the whole backward overlaps, so they may differ by one bucket's share of that backward
// (< 1% here).
TEST(EventEngineTest, AgreesWithAnalyticWithoutContention) {
  Scenario sc = make_scenario(8, 1, 4, 8, Schedule::kOneFOneB);
  sc.model = {"gpt-2.7b", 32, 2560, 32, 32, 10240, FfnActivation::kGelu, 2048, 51200, false};
  sc.parallelism.sequence_parallel = true;
  sc.parallelism.zero_stage = 1;
  const HardwareProfile profile = io::resolve_profile(sc);
  const IterationCosts costs = estimate::compute_iteration_costs(sc, profile);
  const SimulationResult analytic = estimate::estimate_iteration(sc, costs, profile);
  const SimulationResult event = simulate_iteration(sc, costs, profile);
  EXPECT_NEAR(event.iteration_time_s, analytic.iteration_time_s, 0.01 * analytic.iteration_time_s);
  EXPECT_NEAR(event.breakdown.compute_s, analytic.breakdown.compute_s,
              1e-9 * analytic.breakdown.compute_s);
  EXPECT_NEAR(event.mfu, analytic.mfu, 0.01 * analytic.mfu);
}

// GPT 13B with sequence parallelism on the test cluster.
Scenario gpt13b(int tp, int pp, int dp, int micro_batches, Schedule schedule, int chunks = 1) {
  Scenario sc = make_scenario(tp, pp, dp, micro_batches, schedule, chunks);
  sc.model = {"gpt-13b", 40, 5120, 40, 40, 20480, FfnActivation::kGelu, 2048, 51200, false};
  sc.parallelism.sequence_parallel = true;
  return sc;
}

// Analytic over event iteration time, minus one (the event run in a child).
double analytic_gap(const Scenario& sc) {
  const HardwareProfile profile = io::resolve_profile(sc);
  const IterationCosts costs = estimate::compute_iteration_costs(sc, profile);
  const double analytic = estimate::estimate_iteration(sc, costs, profile).iteration_time_s;
  const std::string event = test::run_in_child(
      [&] { return test::format_double(simulate_iteration(sc, costs, profile).iteration_time_s); });
  if (event.rfind("exception: ", 0) == 0) {
    ADD_FAILURE() << "event engine: " << event;
    return std::numeric_limits<double>::quiet_NaN();
  }
  return analytic / std::stod(event) - 1.0;
}

// Cross-check on oversubscribed fabrics (3:1, one or two nodes per leaf): the estimator gives
// each traffic class that leaves a leaf the share of the uplinks the reduced event run gives it
// (estimate/leaf_uplinks.hpp), and in both a stage with slack absorbs slower hops. So the engines
// differ about as much as they do on the same layout without oversubscription (PP/DP contention
// on the NICs, bucket granularity): measured within 0.6 points of that on these four layouts
// (2.8 with 25 MB DP buckets), and the test allows 1. Ignoring the uplinks, the estimator would
// be over 30% fast on the first.
TEST(EventEngineTest, AgreesWithAnalyticOnOversubscribedFabrics) {
  struct Case {
    int tp, pp, dp, chunks, nodes_per_leaf;
  };
  for (const Case c :
       {Case{8, 1, 8, 1, 1}, Case{8, 2, 4, 1, 1}, Case{8, 4, 2, 2, 2}, Case{4, 2, 4, 1, 2}}) {
    Scenario plain = gpt13b(c.tp, c.pp, c.dp, 8,
                            c.chunks > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB, c.chunks);
    plain.parallelism.zero_stage = 1;
    Scenario over = plain;
    over.cluster.topology = Topology::kOversubscribed;
    over.cluster.oversubscription = 3.0;
    over.cluster.nodes_per_leaf = c.nodes_per_leaf;
    EXPECT_NEAR(analytic_gap(over), analytic_gap(plain), 0.01)
        << "TP" << c.tp << " PP" << c.pp << " DP" << c.dp << " v" << c.chunks << " leaf "
        << c.nodes_per_leaf;
  }
}

// Without overlap (Megatron-LM's --overlap-grad-reduce and --overlap-param-gather off) each
// stage reduces its gradients after its last op and waits for its parameter gather after the
// step; the estimator adds the same tails. Within 1%, as with overlap.
TEST(EventEngineTest, AgreesWithAnalyticWithoutOverlap) {
  for (const int zero : {0, 1}) {
    Scenario sc = gpt13b(8, 2, 4, 8, Schedule::kOneFOneB);
    sc.parallelism.zero_stage = zero;
    sc.parallelism.overlap_grad_reduce = false;
    sc.parallelism.overlap_param_gather = false;
    EXPECT_NEAR(analytic_gap(sc), 0.0, 0.01) << "ZeRO-" << zero;
  }
}

// With Transformer Engine's TP overlap the layers' TP time is what the overlap leaves exposed,
// computed once in the shared costs (models/tp_comm_overlap.hpp); both engines replay it alike,
// so they agree within 1% as without it, and the overlap makes both faster.
TEST(EventEngineTest, AgreesWithAnalyticWithTensorParallelOverlap) {
  Scenario sc = gpt13b(8, 2, 4, 8, Schedule::kOneFOneB);
  sc.parallelism.zero_stage = 1;
  const double serial_gap = analytic_gap(sc);
  const double serial_s =
      estimate::estimate_iteration(sc, io::resolve_profile(sc)).iteration_time_s;
  sc.parallelism.tp_comm_overlap = true;
  const double gap = analytic_gap(sc);
  EXPECT_NEAR(gap, 0.0, 0.01);
  EXPECT_NEAR(gap, serial_gap, 0.005);
  EXPECT_LT(estimate::estimate_iteration(sc, io::resolve_profile(sc)).iteration_time_s, serial_s);
}

// A run in a child process (capsim validate, the benchmarks) returns the same numbers and the
// same notes, the approximations it made included, as the run in this process.
TEST(EventEngineTest, ChildRunKeepsTheResultAndItsNotes) {
  Scenario sc = gpt13b(8, 2, 4, 8, Schedule::kOneFOneB);
  sc.cluster.topology = Topology::kOversubscribed;
  sc.cluster.oversubscription = 3.0;
  sc.cluster.nodes_per_leaf = 1;
  const HardwareProfile profile = io::resolve_profile(sc);
  const SimulationResult child = simulate_iteration_in_child(sc, profile);
  const SimulationResult here =
      simulate_iteration(sc, estimate::compute_iteration_costs(sc, profile), profile);
  EXPECT_EQ(child.iteration_time_s, here.iteration_time_s);
  const TimeBreakdown& c = child.breakdown;
  const TimeBreakdown& h = here.breakdown;
  EXPECT_EQ(c.compute_s, h.compute_s);
  EXPECT_EQ(c.dp_comm_exposed_s, h.dp_comm_exposed_s);
  EXPECT_EQ(c.bubble_s, h.bubble_s);
  EXPECT_EQ(c.stage, h.stage);
  EXPECT_EQ(h.stage, 1);  // the last stage also runs the head, in the child as here
  EXPECT_EQ(c.stage_busy_s, h.stage_busy_s);
  EXPECT_EQ(h.stage_busy_s.size(), 2U);
  EXPECT_EQ(child.notes, here.notes);
  EXPECT_GE(here.notes.size(), 2U);  // what was simulated, and the fabric's leaves
}

// DP collectives inside a node share the NVLink routes PP sends use, whose latency is the
// profile's send/recv latency: on the A100 profiles 71 us, far above an intra-node
// reduce-scatter's ~10 us. Each 1 MB bucket still takes the collective model's time (with the
// route latency on top of every bucket the event engine would be 121% slow here).
TEST(EventEngineTest, IntraNodeBucketsTakeTheirModelTimeWhateverTheRouteLatency) {
  Scenario sc = make_scenario(2, 1, 4, 4, Schedule::kOneFOneB);
  sc.model = {"m", 8, 2048, 16, 16, 8192, FfnActivation::kGelu, 2048, 51200, false};
  sc.cluster.num_nodes = 1;
  sc.cluster.has_inter_node = false;
  sc.parallelism.sequence_parallel = true;
  sc.parallelism.zero_stage = 1;
  sc.parallelism.dp_bucket_bytes = 1e6;
  sc.parallelism.dp_buckets_every_chunk = true;
  const HardwareProfile profile = io::resolve_profile(sc);
  const GroupShape pair{2, 2, 1, 0.0};
  const GroupShape dp{4, 4, 1, 0.0};
  ASSERT_GT(
      collective_time_s(profile, CollectiveKind::kSendRecv, kLatencyProbeBytes, pair),
      3.0 * collective_time_s(profile, CollectiveKind::kReduceScatter, kLatencyProbeBytes, dp));
  EXPECT_NEAR(analytic_gap(sc), 0.0, 0.002);
}

// The reduced run says when it is an approximation: GPUs of different stages on one node share
// its NICs (TP2 x DP2 stages, four per node), or stages share an oversubscribed leaf (TP8 x
// DP4 stages of four nodes under leaves of three). Leaves of four hold one stage each: no note.
bool has_note(const SimulationResult& r, const std::string& start) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const std::string& n) { return n.rfind(start, 0) == 0; });
}

TEST(EventEngineTest, ReducedRunNotesWhereStagesShareLinks) {
  const auto notes = [](const Scenario& sc) {
    return test::run_in_child([&] {
      const HardwareProfile profile = io::resolve_profile(sc);
      const SimulationResult r =
          simulate_iteration(sc, estimate::compute_iteration_costs(sc, profile), profile);
      return std::string(has_note(r, "GPUs of different stages") ? "node " : "") +
             (has_note(r, "stages share leaf") ? "leaf" : "");
    });
  };
  EXPECT_EQ(notes(make_scenario(2, 4, 2, 4, Schedule::kOneFOneB)), "node ");
  Scenario leaves = gpt13b(8, 2, 4, 4, Schedule::kOneFOneB);
  leaves.cluster.topology = Topology::kOversubscribed;
  leaves.cluster.oversubscription = 2.0;
  leaves.cluster.nodes_per_leaf = 3;
  EXPECT_EQ(notes(leaves), "leaf");
  leaves.cluster.nodes_per_leaf = 4;
  EXPECT_EQ(notes(leaves), "");
}

// Above --every-gpu's limit the note names the limit instead of offering the exact run
// (TP8 x DP2200 stages under leaves of three nodes: 35,200 GPUs).
TEST(EventEngineTest, ReducedRunNoteNamesTheEveryGpuLimitOnLargerClusters) {
  Scenario leaves = gpt13b(8, 2, 2200, 1, Schedule::kOneFOneB);
  leaves.cluster.topology = Topology::kOversubscribed;
  leaves.cluster.oversubscription = 2.0;
  leaves.cluster.nodes_per_leaf = 3;
  ASSERT_GT(leaves.parallelism.num_gpus(), kMaxEveryGpuRanks);
  const std::string note = test::run_in_child([&] {
    const HardwareProfile profile = io::resolve_profile(leaves);
    const SimulationResult r =
        simulate_iteration(leaves, estimate::compute_iteration_costs(leaves, profile), profile);
    for (const std::string& n : r.notes)
      if (n.rfind("stages share leaf", 0) == 0)
        return n;
    return std::string("no leaf note");
  });
  EXPECT_NE(note.find("--every-gpu, which simulates every GPU, is limited to 32768 GPUs"),
            std::string::npos)
      << note;
}

// Interleaved 1F1B with as few micro-batches as Megatron allows (m = P): the replayed fill and
// drain (2(P*v - 1) hops, each chunk's sends overlapped) match the estimator within 1%
// (measured 0.1-0.2%; hops charged alike for every schedule put them 9-18% apart). The
// planner screens with the estimator, so this bounds its error.
TEST(EventEngineTest, AgreesWithAnalyticForInterleavedWithFewMicroBatches) {
  for (const int v : {2, 5})
    EXPECT_NEAR(analytic_gap(gpt13b(8, 4, 1, 4, Schedule::kInterleaved, v)), 0.0, 0.01) << v;
}

// Uneven stages (a light first stage, a heavy last one) with DP across nodes: a stage's DP
// reduction hides in the backward steps the stages below it still run. The estimator plays the
// schedule: giving stage s s times its own backward step as slack would make it 7.6% fast on
// the ZeRO-0 case (the heavy last stage would get 3 x 14 layers instead of 6 + 10 + 10).
// DualPipeV across nodes with DP: sends both ways over the same links, buckets released by
// whole backwards or by W's; within 1% as the other schedules.
TEST(EventEngineTest, AgreesWithAnalyticForDualPipeV) {
  for (const int zero : {0, 1}) {
    Scenario sc = gpt13b(8, 4, 4, 8, Schedule::kDualPipeV, 2);
    sc.parallelism.zero_stage = zero;
    EXPECT_NEAR(analytic_gap(sc), 0.0, 0.01) << "ZeRO-" << zero;
  }
}

// A mixture of experts on DualPipeV with the exchanges overlapped in its pairs: within 1%.
TEST(EventEngineTest, AgreesWithAnalyticForDualPipeVPairs) {
  EXPECT_NEAR(analytic_gap(test::qwen3_235b_on_dualpipev()), 0.0, 0.01);
}

TEST(EventEngineTest, AgreesWithAnalyticOnUnevenStages) {
  for (const int zero : {0, 1}) {
    Scenario sc = gpt13b(8, 4, 4, 4, Schedule::kOneFOneB);
    sc.parallelism.zero_stage = zero;
    sc.parallelism.stage_layers = {6, 10, 10, 14};
    EXPECT_NEAR(analytic_gap(sc), 0.0, 0.01) << "ZeRO-" << zero;
  }
}

// Both engines break the step down on the busiest stage (here the last, with 14 of 40 layers)
// and split its waits alike (docs/simulator.md, Breakdown): not the GPU that finishes last
// (stage 0, which waits on the heavier stages: compute 0.110 s against 0.164, bubble twice the
// estimator's), and as DP only the wait that outlasts the pipeline (the busiest GPU's whole DP
// wait is 0.142 s against 0.099). Compute and TP match exactly; the waits within 1% of the step.
TEST(EventEngineTest, BothEnginesBreakTheBusiestStageDown) {
  Scenario sc = gpt13b(8, 4, 4, 4, Schedule::kOneFOneB);
  sc.parallelism.zero_stage = 1;
  sc.parallelism.stage_layers = {6, 10, 10, 14};
  const HardwareProfile profile = io::resolve_profile(sc);
  const IterationCosts costs = estimate::compute_iteration_costs(sc, profile);
  const SimulationResult analytic = estimate::estimate_iteration(sc, costs, profile);
  const TimeBreakdown& a = analytic.breakdown;
  const std::string event = test::run_in_child([&] {
    const TimeBreakdown b = simulate_iteration(sc, costs, profile).breakdown;
    std::string figures = std::to_string(b.stage);
    for (const double part : {b.compute_s, b.tp_comm_exposed_s, b.pp_comm_exposed_s,
                              b.dp_comm_exposed_s, b.bubble_s, b.optimizer_s}) {
      figures += " " + test::format_double(part);
    }
    return figures;
  });
  std::istringstream in(event);
  int stage = -1;
  TimeBreakdown e;
  ASSERT_TRUE(in >> stage >> e.compute_s >> e.tp_comm_exposed_s >> e.pp_comm_exposed_s >>
              e.dp_comm_exposed_s >> e.bubble_s >> e.optimizer_s)
      << event;
  EXPECT_EQ(a.stage, 3);
  EXPECT_EQ(stage, 3);
  EXPECT_NEAR(e.compute_s, a.compute_s, 1e-9 * a.compute_s);
  EXPECT_NEAR(e.tp_comm_exposed_s, a.tp_comm_exposed_s, 1e-6 * a.tp_comm_exposed_s);
  const double step_s = analytic.iteration_time_s;
  EXPECT_NEAR(e.pp_comm_exposed_s, a.pp_comm_exposed_s, 0.01 * step_s);
  EXPECT_NEAR(e.dp_comm_exposed_s, a.dp_comm_exposed_s, 0.01 * step_s);
  EXPECT_NEAR(e.bubble_s, a.bubble_s, 0.01 * step_s);
  EXPECT_NEAR(e.optimizer_s, a.optimizer_s, 1e-6 * step_s);
}

// Megatron's split counting the embedding and the loss as layers: 38 + 2 layers over 4 stages
// of 2 chunks, so stage 0's first chunk and the last stage's last chunk hold 4 layers, the others
// 5. The engines play the same chunks and agree as on even stages.
TEST(EventEngineTest, AgreesWithAnalyticOnMegatronEmbeddingLossSplit) {
  Scenario sc = gpt13b(8, 4, 4, 8, Schedule::kInterleaved, 2);
  sc.model.num_layers = 38;
  sc.parallelism.zero_stage = 1;
  EXPECT_NEAR(analytic_gap(sc), 0.0, 0.01);
}

// The same split at one layer per chunk: 6 + 2 over 4 stages of 2 chunks leaves stage 0's first
// chunk the embedding alone and the last stage's last chunk the output layer and loss alone.
// Chunks this unequal (a 13B layer beside an embedding alone) put the estimator's interleaved
// bubble 1.1% fast, hence 2% here.
TEST(EventEngineTest, AgreesWithAnalyticOnChunksHoldingOnlyTheEmbeddingOrTheLoss) {
  Scenario sc = gpt13b(8, 4, 4, 8, Schedule::kInterleaved, 2);
  sc.model.num_layers = 6;
  sc.parallelism.zero_stage = 1;
  EXPECT_NEAR(analytic_gap(sc), 0.0, 0.02);
}

// ZB-H1 with DP across nodes: the weight-gradient steps make the gradients, so only the last W
// (not the whole backward) hides the buckets, and the W's a stage deferred fill its drain. The
// estimator would be 3.4% (ZeRO-0) and 4.1% (ZeRO-1) fast here treating ZB-H1 like 1F1B.
TEST(EventEngineTest, AgreesWithAnalyticForZeroBubbleWithDataParallelism) {
  for (const int zero : {0, 1}) {
    Scenario sc = gpt13b(8, 4, 4, 4, Schedule::kZeroBubble);
    sc.parallelism.zero_stage = zero;
    EXPECT_NEAR(analytic_gap(sc), 0.0, 0.01) << "ZeRO-" << zero;
  }
}

// ZeRO-3 inside one node: the gathers and scatters are flows through each GPU's NVSwitch port,
// so the backward's two streams share it (their latencies overlap), as the analytic engine
// assumes. Within 1% here (intra-node collectives timed as waits that run side by side at full
// speed would put them 3.1% apart).
TEST(EventEngineTest, AgreesWithAnalyticForZero3InsideANode) {
  Scenario sc = make_scenario(1, 1, 8, 4, Schedule::kOneFOneB);
  sc.model = {"gpt-2.7b", 32, 2560, 32, 32, 10240, FfnActivation::kGelu, 2048, 51200, false};
  sc.parallelism.zero_stage = 3;
  const HardwareProfile profile = io::resolve_profile(sc);
  const IterationCosts costs = estimate::compute_iteration_costs(sc, profile);
  ASSERT_EQ(costs.dp_group.nodes, 1);
  const SimulationResult analytic = estimate::estimate_iteration(sc, costs, profile);
  const SimulationResult event = simulate_iteration(sc, costs, profile);
  EXPECT_NEAR(event.iteration_time_s, analytic.iteration_time_s, 0.01 * analytic.iteration_time_s);
}

// ZeRO-3 across nodes, comm-bound: in the backward the gather and reduce-scatter streams share
// the NIC, and whether one stream's latency hides behind the other's bytes depends on how their
// phases fall. The estimator plays both streams layer by layer as the event engine runs them
// (estimate/zero3_streams.hpp); with a closed form (latencies overlapped, bytes added, each
// micro-batch's first gather and last scatter exposed) it would be 0.9-4.5% slow on these
// layouts; playing them, the two without a pipeline agree to 1e-8 and the two with one within
// 0.3-0.7%.
TEST(EventEngineTest, AgreesWithAnalyticForZero3AcrossNodes) {
  struct Case {
    int tp, pp, dp, micro_batches;
    Schedule schedule;
    int chunks;
    Recompute recompute;
  };
  for (const Case& c : {Case{8, 1, 8, 4, Schedule::kOneFOneB, 1, Recompute::kFull},
                        Case{1, 1, 64, 2, Schedule::kOneFOneB, 1, Recompute::kNone},
                        Case{2, 2, 16, 4, Schedule::kOneFOneB, 1, Recompute::kNone},
                        Case{2, 2, 16, 4, Schedule::kInterleaved, 2, Recompute::kFull}}) {
    Scenario sc = gpt13b(c.tp, c.pp, c.dp, c.micro_batches, c.schedule, c.chunks);
    sc.parallelism.zero_stage = 3;
    sc.parallelism.recompute = c.recompute;
    EXPECT_NEAR(analytic_gap(sc), 0.0, 0.01)
        << "TP" << c.tp << " PP" << c.pp << " DP" << c.dp << " " << to_string(c.schedule);
  }
}

// GPipe with ZeRO-3 runs every forward, then every backward: the estimator plays that order
// (forwards prefetch across one another; each backward drains), not forward/backward pairs
// (which put the engines 4.4% apart on TP2 DP8 with 8 micro-batches).
TEST(EventEngineTest, AgreesWithAnalyticForGpipeWithZero3) {
  Scenario sc = make_scenario(2, 1, 8, 8, Schedule::kGpipe);  // 4 layers of h = 4096, 2 nodes
  sc.model.num_layers = 4;
  sc.parallelism.zero_stage = 3;
  EXPECT_NEAR(analytic_gap(sc), 0.0, 0.005);
}

// ZeRO-3 with a per-micro-batch framework overhead: the gathers already run while the overhead
// passes, in both engines (adding the overhead on top of the play would put them 3.3% apart on
// a 4-layer model at 5 ms).
TEST(EventEngineTest, AgreesWithAnalyticForZero3WithMicroBatchOverhead) {
  Scenario sc = gpt13b(8, 1, 8, 4, Schedule::kOneFOneB);
  sc.parallelism.zero_stage = 3;
  HardwareProfile profile = io::resolve_profile(sc);
  profile.per_microbatch_overhead_s = 5e-3;
  const IterationCosts costs = estimate::compute_iteration_costs(sc, profile);
  const double analytic = estimate::estimate_iteration(sc, costs, profile).iteration_time_s;
  const std::string event = test::run_in_child(
      [&] { return test::format_double(simulate_iteration(sc, costs, profile).iteration_time_s); });
  ASSERT_EQ(event.rfind("exception: ", 0), std::string::npos) << event;
  EXPECT_NEAR(analytic / std::stod(event), 1.0, 0.002);
}

// ZB-H1 with ZeRO-3 and a pipeline: the streams are synchronised at the end of every backward
// (FSDP, DeepSpeed), so each W drains before the next F gathers, in both engines (measured
// −0.2%). Were the last stage's F to gather while the previous W's scatters still drain, the
// estimator, playing each op after the previous one, would be 5.5% slow here.
TEST(EventEngineTest, AgreesWithAnalyticForZeroBubbleWithZero3AcrossNodes) {
  Scenario sc = gpt13b(2, 2, 16, 4, Schedule::kZeroBubble);
  sc.parallelism.zero_stage = 3;
  EXPECT_NEAR(analytic_gap(sc), 0.0, 0.01);
}

}  // namespace
}  // namespace capsim::sim
