// Laws of the analytic engine checked over many random valid layouts, not one base scenario:
// each law holds for every layout the rules accept, on the shipped profiles (fitted curves,
// not datasheet ones), so a regression in any schedule, ZeRO stage or overlap path shows.

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "estimate/analytic_estimator.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/models/random_scenario.hpp"

namespace capsim {
namespace {

using test::random_scenario;
using test::Rng;

std::string describe(const Scenario& s) {
  return io::scenario_to_json(s).dump();
}

double time_of(const Scenario& s, const HardwareProfile& p) {
  return estimate::estimate_iteration(s, p).iteration_time_s;
}

double memory_of(const Scenario& s, const HardwareProfile& p) {
  return estimate::estimate_iteration(s, p).memory.peak_bytes;
}

bool valid(const Scenario& s) {
  return test::is_valid_input(s);
}

constexpr int kScenarios = 3000;
constexpr double kSlack = 1e-9;  // relative: rounding, not modelling
// ZeRO-3's gather and reduce-scatter streams share the link, and whether one's latency hides
// behind the other's bytes depends on how their phases fall (zero3_streams.hpp): a step they
// pace may move a few percent against a change in compute, either way, as list schedules can
// (Graham's anomalies); both engines agree on it. With this seed 2.9% at most; over 40 seeds
// (120,000 layouts) 5.8%: a tiny model (hidden 1,024, TP8) on DP8 across an
// oversubscribed fabric, whose per-layer gathers are latency-bound, ran 5.8% faster with
// twice the sequence length (more compute staggers the two streams).
constexpr double kZero3Slack = 0.08;

double slack_for(const Scenario& s) {
  return s.parallelism.zero_stage == 3 ? kZero3Slack : kSlack;
}

class PropertySweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // CAPSIM_SWEEP_SEED=N draws another 3,000 (a longer search for law breakers).
    const char* seed = std::getenv("CAPSIM_SWEEP_SEED");
    Rng rng(seed != nullptr ? std::stoul(seed) : 20261126);
    for (int i = 0; i < kScenarios; ++i)
      scenarios_.push_back(random_scenario(rng));
  }
  std::vector<Scenario> scenarios_;
};

TEST_F(PropertySweepTest, BreakdownIsNonNegativeAndSumsToTheIteration) {
  for (const Scenario& s : scenarios_) {
    const SimulationResult r = estimate::estimate_iteration(s, io::resolve_profile(s));
    const TimeBreakdown& b = r.breakdown;
    const std::vector<double> parts{
        b.compute_s,         b.tp_comm_exposed_s, b.cp_comm_exposed_s, b.pp_comm_exposed_s,
        b.dp_comm_exposed_s, b.bubble_s,          b.optimizer_s,       b.other_s};
    double sum = 0.0;
    for (const double part : parts) {
      EXPECT_GE(part, 0.0) << describe(s);
      sum += part;
    }
    EXPECT_NEAR(sum, r.iteration_time_s, 1e-9 * r.iteration_time_s) << describe(s);
    EXPECT_TRUE(std::isfinite(r.iteration_time_s)) << describe(s);
    EXPECT_GT(r.mfu, 0.0) << describe(s);
    EXPECT_LT(r.mfu, 1.0) << describe(s);
    EXPECT_GE(r.hfu, r.mfu * (1 - kSlack)) << describe(s);
  }
}

TEST_F(PropertySweepTest, MoreNicBandwidthIsNeverSlower) {
  for (Scenario s : scenarios_) {
    if (!s.cluster.has_inter_node)
      continue;
    const HardwareProfile p = io::resolve_profile(s);
    const double before = time_of(s, p);
    s.cluster.nic_bandwidth_bytes_per_s *= 2;
    EXPECT_LE(time_of(s, p), before * (1 + kSlack)) << describe(s);
  }
}

TEST_F(PropertySweepTest, FasterKernelsAreNeverSlower) {
  for (const Scenario& s : scenarios_) {
    HardwareProfile p = io::resolve_profile(s);
    const double before = time_of(s, p);
    p.software_efficiency *= 1.1;
    EXPECT_LE(time_of(s, p), before * (1 + slack_for(s))) << describe(s);
  }
}

TEST_F(PropertySweepTest, MoreRecomputeCostsTimeAndSavesMemory) {
  for (Scenario s : scenarios_) {
    const HardwareProfile p = io::resolve_profile(s);
    std::vector<double> times;
    std::vector<double> memories;
    for (const Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      s.parallelism.recompute = r;
      times.push_back(time_of(s, p));
      memories.push_back(memory_of(s, p));
    }
    EXPECT_LE(times[0], times[1] * (1 + slack_for(s))) << describe(s);
    EXPECT_LE(times[1], times[2] * (1 + slack_for(s))) << describe(s);
    EXPECT_GE(memories[0], memories[1] * (1 - kSlack)) << describe(s);
    EXPECT_GE(memories[1], memories[2] * (1 - kSlack)) << describe(s);
  }
}

TEST_F(PropertySweepTest, HigherZeroStageNeverNeedsMoreMemory) {
  for (Scenario s : scenarios_) {
    const HardwareProfile p = io::resolve_profile(s);
    double previous = 1e300;
    for (int stage = 0; stage <= 3; ++stage) {
      s.parallelism.zero_stage = stage;
      if (!valid(s))
        continue;
      const double memory = memory_of(s, p);
      EXPECT_LE(memory, previous * (1 + kSlack)) << "ZeRO-" << stage << " " << describe(s);
      previous = memory;
    }
  }
}

TEST_F(PropertySweepTest, MoreLayersAreNeverFasterNorSmaller) {
  int checked = 0;
  for (Scenario s : scenarios_) {
    const HardwareProfile p = io::resolve_profile(s);
    const double time = time_of(s, p);
    const double memory = memory_of(s, p);
    s.model.num_layers += s.parallelism.pipeline * s.parallelism.virtual_pipeline_stages;
    if (!valid(s))
      continue;
    ++checked;
    EXPECT_GE(time_of(s, p), time * (1 - kSlack)) << describe(s);
    EXPECT_GE(memory_of(s, p), memory * (1 - kSlack)) << describe(s);
  }
  EXPECT_GT(checked, kScenarios / 10);
}

TEST_F(PropertySweepTest, MoreMicroBatchesNeverLowerThroughput) {
  for (Scenario s : scenarios_) {
    const HardwareProfile p = io::resolve_profile(s);
    const double time = time_of(s, p);
    s.parallelism.global_batch_size *= 2;
    const double doubled = time_of(s, p);
    EXPECT_GE(doubled, time * (1 - kSlack)) << describe(s);
    EXPECT_LE(doubled, 2 * time * (1 + kSlack)) << describe(s);
  }
}

// A longer sequence or a bigger micro-batch is more work per micro-batch and more activations.
TEST_F(PropertySweepTest, MoreTokensPerMicroBatchCostTimeAndMemory) {
  for (const Scenario& base : scenarios_) {
    const HardwareProfile p = io::resolve_profile(base);
    const double time = time_of(base, p);
    const double memory = memory_of(base, p);
    Scenario longer = base;
    longer.model.seq_length *= 2;
    if (valid(longer)) {
      EXPECT_GE(time_of(longer, p), time * (1 - slack_for(base))) << describe(longer);
      EXPECT_GE(memory_of(longer, p), memory * (1 - kSlack)) << describe(longer);
    }
    Scenario bigger = base;
    bigger.parallelism.micro_batch_size *= 2;
    bigger.parallelism.global_batch_size *= 2;
    if (valid(bigger)) {
      EXPECT_GE(time_of(bigger, p), time * (1 - slack_for(base))) << describe(bigger);
      EXPECT_GE(memory_of(bigger, p), memory * (1 - kSlack)) << describe(bigger);
    }
  }
}

// A wider model (hidden and FFN doubled, as many heads of twice the size) does more work and
// holds more.
TEST_F(PropertySweepTest, WiderModelIsNeverFasterNorSmaller) {
  int checked = 0;
  for (const Scenario& base : scenarios_) {
    const HardwareProfile p = io::resolve_profile(base);
    Scenario wider = base;
    wider.model.hidden_size *= 2;
    wider.model.ffn_hidden_size *= 2;
    if (!valid(wider))
      continue;
    ++checked;
    EXPECT_GE(time_of(wider, p), time_of(base, p) * (1 - slack_for(base))) << describe(wider);
    EXPECT_GE(memory_of(wider, p), memory_of(base, p) * (1 - kSlack)) << describe(wider);
  }
  EXPECT_GT(checked, kScenarios / 10);
}

// Overlapping the DP gradient reduction and the parameter gather with compute costs at most
// the SMs they take while they run, never more than running them after it.
TEST_F(PropertySweepTest, OverlappingDataParallelTrafficIsNeverSlower) {
  for (const Scenario& base : scenarios_) {
    if (base.parallelism.zero_stage == 3)
      continue;  // FSDP always overlaps; the flags apply to ZeRO 0-2
    const HardwareProfile p = io::resolve_profile(base);
    Scenario serial = base;
    serial.parallelism.overlap_grad_reduce = false;
    serial.parallelism.overlap_param_gather = false;
    Scenario overlapped = base;
    overlapped.parallelism.overlap_grad_reduce = true;
    overlapped.parallelism.overlap_param_gather = true;
    EXPECT_LE(time_of(overlapped, p), time_of(serial, p) * (1 + kSlack)) << describe(base);
  }
}

// Twice the tensor parallelism on twice the GPUs (the same data parallelism, so the same ZeRO
// shards) splits every weight and most activations further: a GPU never needs more memory.
// (At a fixed GPU count halving the data parallelism doubles a distributed optimizer's shard,
// so that is not a law.)
TEST_F(PropertySweepTest, MoreTensorParallelNeverNeedsMoreMemoryPerGpu) {
  int checked = 0;
  for (const Scenario& base : scenarios_) {
    Scenario wider = base;
    wider.parallelism.tensor *= 2;
    wider.cluster.num_nodes *= 2;
    wider.cluster.has_inter_node = true;
    if (!base.cluster.has_inter_node)
      continue;  // keep the fabric the base has
    if (!valid(wider))
      continue;
    ++checked;
    const HardwareProfile p = io::resolve_profile(base);
    EXPECT_LE(memory_of(wider, p), memory_of(base, p) * (1 + kSlack)) << describe(wider);
  }
  EXPECT_GT(checked, kScenarios / 10);
}

}  // namespace
}  // namespace capsim
