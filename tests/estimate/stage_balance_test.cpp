#include "estimate/stage_balance.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/byte_units.hpp"
#include "models/gpu_catalog.hpp"
#include "models/memory_model.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/layout_rules.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/estimate/stage_balance_oracle.hpp"
#include "tests/models/random_scenario.hpp"

namespace capsim {
namespace {

Scenario shipped(const std::string& name) {
  return io::load_scenario(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/" + name +
                           "/scenario.json");
}

double estimate_with(Scenario scenario, const HardwareProfile& profile,
                     const std::vector<int>& split) {
  scenario.parallelism.stage_layers = split;
  return estimate::estimate_iteration(scenario, profile).iteration_time_s;
}

// Llama 3 70B on PP4 (interleaved, 4 layers per chunk): the last stage also runs the
// 128K-vocabulary head, about a layer's work, so one of its layers moves to another stage;
// the event engine confirms the gain (15.767 s -> 15.606 s, docs/simulator.md).
TEST(StageBalanceTest, MovesALayerOffTheStageWithTheHead) {
  const Scenario sc = shipped("llama3-70b-p5");
  const HardwareProfile profile = io::resolve_profile(sc);
  const auto balance = estimate::balance_stage_layers(sc, profile);
  ASSERT_TRUE(balance.has_value());
  EXPECT_EQ(balance->stage_layers, (std::vector<int>{20, 21, 20, 19}));
  EXPECT_LT(balance->iteration_time_s, balance->current_time_s);
  EXPECT_DOUBLE_EQ(balance->current_time_s,
                   estimate::estimate_iteration(sc, profile).iteration_time_s);
  EXPECT_DOUBLE_EQ(balance->iteration_time_s, estimate_with(sc, profile, balance->stage_layers));
}

// No single move from the suggested split is faster, every stage keeps a layer per virtual
// chunk, the layers add up, and the split still fits.
TEST(StageBalanceTest, TheSuggestionIsALocalOptimumThatFits) {
  Scenario sc = shipped("llama3-70b-p5");
  const HardwareProfile profile = io::resolve_profile(sc);
  const auto balance = estimate::balance_stage_layers(sc, profile);
  ASSERT_TRUE(balance.has_value());
  const std::vector<int>& split = balance->stage_layers;
  EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0), sc.model.num_layers);
  for (size_t from = 0; from < split.size(); ++from) {
    EXPECT_GE(split[from], sc.parallelism.virtual_pipeline_stages);
    for (size_t to = 0; to < split.size(); ++to) {
      if (to == from || split[from] <= sc.parallelism.virtual_pipeline_stages)
        continue;
      std::vector<int> moved = split;
      --moved[from];
      ++moved[to];
      EXPECT_GE(estimate_with(sc, profile, moved), balance->iteration_time_s * (1.0 - 1e-9))
          << from << " -> " << to;
    }
  }
  sc.parallelism.stage_layers = split;
  EXPECT_TRUE(estimate::estimate_iteration(sc, profile).memory.fits);
}

// Under a memory bound (the planner's: capacity minus its headroom) the split stays under it.
// At the current peak (stage 0's) the suggestion stands, as stage 0 keeps its layers; just
// below it no split the search reaches qualifies.
TEST(StageBalanceTest, KeepsUnderAMemoryBound) {
  Scenario sc = shipped("llama3-70b-p5");
  const HardwareProfile profile = io::resolve_profile(sc);
  const double peak = estimate::estimate_iteration(sc, profile).memory.peak_bytes;
  const auto at_peak = estimate::balance_stage_layers(sc, profile, peak);
  ASSERT_TRUE(at_peak.has_value());
  sc.parallelism.stage_layers = at_peak->stage_layers;
  EXPECT_LE(estimate::estimate_iteration(sc, profile).memory.peak_bytes, peak);
  EXPECT_FALSE(
      estimate::balance_stage_layers(shipped("llama3-70b-p5"), profile, 0.999 * peak).has_value());
}

// Llama 3 70B on PP4 with 1F1B and micro-batch 2 does not fit: stage 0 holds four
// micro-batches' activations. Moving a layer off it (and one off the last stage, which holds the
// head) fits, and runs a little faster too.
TEST(StageBalanceTest, FindsASplitThatFitsWhereTheEvenOneDoesNot) {
  Scenario sc = shipped("llama3-70b-p5");
  sc.parallelism.virtual_pipeline_stages = 1;
  sc.parallelism.schedule = Schedule::kOneFOneB;
  sc.parallelism.micro_batch_size = 2;
  const HardwareProfile profile = io::resolve_profile(sc);
  ASSERT_FALSE(estimate::estimate_iteration(sc, profile).memory.fits);
  const auto balance = estimate::balance_stage_layers(sc, profile);
  ASSERT_TRUE(balance.has_value());
  EXPECT_FALSE(balance->current_fits);
  EXPECT_TRUE(balance->fits);
  EXPECT_EQ(balance->stage_layers, (std::vector<int>{19, 21, 21, 19}));
  sc.parallelism.stage_layers = balance->stage_layers;
  const SimulationResult after = estimate::estimate_iteration(sc, profile);
  EXPECT_TRUE(after.memory.fits);
  EXPECT_DOUBLE_EQ(after.memory.peak_bytes, balance->peak_bytes);
}

// The memory-only search the planner's screen runs: a split under the bound, or nothing when
// the scenario's already is or none can be.
TEST(StageBalanceTest, SplitThatFitsUsesTheMemoryModel) {
  Scenario sc = shipped("llama3-70b-p5");
  const GpuSpec& gpu = sc.cluster.gpu;
  EXPECT_FALSE(estimate::split_that_fits(sc.model, sc.parallelism, gpu, gpu.hbm_capacity_bytes));
  sc.parallelism.virtual_pipeline_stages = 1;
  sc.parallelism.schedule = Schedule::kOneFOneB;
  sc.parallelism.micro_batch_size = 2;
  const auto split =
      estimate::split_that_fits(sc.model, sc.parallelism, gpu, gpu.hbm_capacity_bytes);
  ASSERT_TRUE(split.has_value());
  const std::vector<int>& layers = split->stage_layers;
  EXPECT_EQ(std::accumulate(layers.begin(), layers.end(), 0), sc.model.num_layers);
  sc.parallelism.stage_layers = layers;
  // The estimate it returns is the split's own.
  const MemoryEstimate memory = estimate_memory(sc.model, sc.parallelism, gpu, sc.model.attention);
  EXPECT_TRUE(memory.fits);
  EXPECT_EQ(split->memory.peak_bytes, memory.peak_bytes);
  sc.parallelism.stage_layers.clear();
  EXPECT_FALSE(estimate::split_that_fits(sc.model, sc.parallelism, gpu, 20.0 * kGiB));
}

// GPT-3 175B on PP8 has 12 layers per stage: a layer is worth more than the head adds to the
// last stage, so no split is faster; nor is there anything to split without a pipeline.
TEST(StageBalanceTest, NothingWhenNoSplitIsFaster) {
  const Scenario gpt3 = shipped("gpt3-175b-selene-1024");
  EXPECT_FALSE(estimate::balance_stage_layers(gpt3, io::resolve_profile(gpt3)).has_value());
  Scenario flat = shipped("llama3-70b-p5");
  flat.parallelism.data *= flat.parallelism.pipeline;
  flat.parallelism.pipeline = 1;
  flat.parallelism.virtual_pipeline_stages = 1;
  flat.parallelism.schedule = Schedule::kOneFOneB;
  EXPECT_FALSE(estimate::balance_stage_layers(flat, io::resolve_profile(flat)).has_value());
}

// A given split is where the search starts: from a lopsided one it comes back to the even
// work, never slower than what it was given.
TEST(StageBalanceTest, RepairsALopsidedSplit) {
  Scenario sc = shipped("llama3-70b-p5");
  sc.parallelism.stage_layers = {30, 15, 15, 20};
  const HardwareProfile profile = io::resolve_profile(sc);
  const auto balance = estimate::balance_stage_layers(sc, profile);
  ASSERT_TRUE(balance.has_value());
  EXPECT_LT(balance->iteration_time_s, 0.9 * balance->current_time_s);
  EXPECT_EQ(balance->stage_layers, (std::vector<int>{20, 21, 20, 19}));
}

// The analytic estimate a caller already has for the scenario is the search's start: the same
// balance as the search computing it, for an even, a Megatron (embedding and loss as layers) and
// a lopsided split.
TEST(StageBalanceTest, GivenCurrentEstimateGivesTheSameBalance) {
  Scenario megatron = shipped("llama3-70b-p5");
  megatron.model.num_layers = 78;  // (78 + 2) / 4 stages: 19 + 20 + 20 + 19
  Scenario lopsided = shipped("llama3-70b-p5");
  lopsided.parallelism.stage_layers = {30, 15, 15, 20};
  int balanced = 0;
  for (const Scenario& sc : {shipped("llama3-70b-p5"), shipped("llama3-70b-b200"), megatron,
                             lopsided, shipped("gpt3-175b-selene-1024")}) {
    const HardwareProfile profile = io::resolve_profile(sc);
    const SimulationResult current = estimate::estimate_iteration(sc, profile);
    const auto searched = estimate::balance_stage_layers(sc, profile);
    const auto started = estimate::balance_stage_layers(sc, profile, std::nullopt,
                                                        estimate::kMaxBalanceWork, &current);
    ASSERT_EQ(started.has_value(), searched.has_value()) << sc.name;
    if (!started)
      continue;
    ++balanced;
    EXPECT_EQ(started->stage_layers, searched->stage_layers) << sc.name;
    EXPECT_EQ(started->iteration_time_s, searched->iteration_time_s) << sc.name;
    EXPECT_EQ(started->current_time_s, searched->current_time_s) << sc.name;
    EXPECT_EQ(started->peak_bytes, searched->peak_bytes) << sc.name;
    EXPECT_EQ(started->fits, searched->fits) << sc.name;
    EXPECT_EQ(started->current_fits, searched->current_fits) << sc.name;
    EXPECT_EQ(started->search_capped, searched->search_capped) << sc.name;
  }
  EXPECT_GE(balanced, 3);
}

// Over random pipelined layouts: a suggestion is strictly faster by the estimate it reports (or
// fits where the scenario's split does not), passes the scenario rules (a layer per virtual chunk,
// the layers add up), and fits whenever the scenario's own split fits.
TEST(StageBalanceTest, SuggestionsAreValidFasterAndFitOnRandomLayouts) {
  test::Rng rng(20261126);
  int pipelined = 0;
  int suggested = 0;
  double gain_sum = 0.0;  // the suggestions' speed-ups (1 - new / old), for the docs
  double gain_max = 0.0;
  for (int i = 0; i < 600; ++i) {
    Scenario sc = test::random_scenario(rng);
    if (sc.parallelism.pipeline <= 1)
      continue;
    ++pipelined;
    const HardwareProfile profile = io::resolve_profile(sc);
    const SimulationResult current = estimate::estimate_iteration(sc, profile);
    const auto balance = estimate::balance_stage_layers(sc, profile);
    if (!balance)
      continue;
    ++suggested;
    const double gain = 1.0 - balance->iteration_time_s / current.iteration_time_s;
    gain_sum += gain;
    gain_max = std::max(gain_max, gain);
    const std::string layout = io::scenario_to_json(sc).dump();
    // Faster, or fitting where the scenario's split does not.
    EXPECT_TRUE(balance->iteration_time_s < current.iteration_time_s ||
                (balance->fits && !current.memory.fits))
        << layout;
    EXPECT_EQ(balance->current_fits, current.memory.fits) << layout;
    EXPECT_EQ(balance->current_time_s, current.iteration_time_s) << layout;
    sc.parallelism.stage_layers = balance->stage_layers;
    EXPECT_TRUE(estimate::layout_problems(sc.model, sc.cluster, sc.parallelism).empty()) << layout;
    const SimulationResult after = estimate::estimate_iteration(sc, profile);
    EXPECT_DOUBLE_EQ(after.iteration_time_s, balance->iteration_time_s) << layout;
    EXPECT_TRUE(after.memory.fits || !current.memory.fits) << layout;
    EXPECT_EQ(after.memory.fits, balance->fits) << layout;
  }
  EXPECT_GT(pipelined, 150);
  EXPECT_GT(suggested, 10);
  std::printf(
      "%d pipelined layouts, %d with a faster (or fitting) split: %.1f%% faster on average, "
      "%.1f%% at most\n",
      pipelined, suggested, 100.0 * gain_sum / suggested, 100.0 * gain_max);
}

// The search as it runs and the exhaustive one it replaces (every destination of every move
// timed, tests/estimate/stage_balance_oracle.hpp) give the same answer, bit for bit.
void expect_same_as_exhaustive(const Scenario& sc, const HardwareProfile& profile,
                               std::optional<double> max_peak_bytes, const std::string& what) {
  const auto fast = estimate::balance_stage_layers(sc, profile, max_peak_bytes);
  const auto exhaustive = test::exhaustive_balance_stage_layers(sc, profile, max_peak_bytes);
  ASSERT_EQ(fast.has_value(), exhaustive.has_value()) << what;
  if (!fast)
    return;
  EXPECT_EQ(fast->stage_layers, exhaustive->stage_layers) << what;
  EXPECT_EQ(fast->iteration_time_s, exhaustive->iteration_time_s) << what;
  EXPECT_EQ(fast->current_time_s, exhaustive->current_time_s) << what;
  EXPECT_EQ(fast->peak_bytes, exhaustive->peak_bytes) << what;
  EXPECT_EQ(fast->fits, exhaustive->fits) << what;
  EXPECT_EQ(fast->current_fits, exhaustive->current_fits) << what;
}

// A deeper pipeline than random_scenario draws (8 to 32 stages, one GPU each, on nodes of 8):
// runs of alike stages long enough for the search to time only their ends.
std::optional<Scenario> deep_variant(Scenario sc, test::Rng& rng) {
  const int p = rng.pick(std::vector<int>{8, 12, 16, 24, 32});
  sc.parallelism.pipeline = p;
  sc.parallelism.tensor = 1;
  sc.parallelism.context = 1;
  sc.parallelism.sequence_parallel = false;
  sc.parallelism.tp_comm_overlap = false;
  sc.parallelism.data = rng.pick(std::vector<int>{1, 1, 2});
  sc.parallelism.virtual_pipeline_stages =
      sc.parallelism.schedule == Schedule::kInterleaved ? 2 : 1;
  sc.model.num_layers =
      p * sc.parallelism.virtual_pipeline_stages * rng.pick(std::vector<int>{1, 2, 3});
  sc.parallelism.global_batch_size =
      sc.parallelism.micro_batch_size * sc.parallelism.data * p * rng.pick(std::vector<int>{1, 2});
  const int gpus = p * sc.parallelism.data;
  sc.cluster.gpus_per_node = 8;
  sc.cluster.num_nodes = gpus / 8;
  sc.cluster.has_inter_node = sc.cluster.num_nodes > 1;
  if (sc.cluster.has_inter_node && sc.cluster.nics_per_node == 0) {
    sc.cluster.inter_node_fabric = Fabric::kInfiniband;
    sc.cluster.nics_per_node = 8;
    sc.cluster.nic_bandwidth_bytes_per_s = 25e9;
    sc.cluster.topology = Topology::kRailOptimized;
  }
  if (rng.coin()) {  // a lopsided start
    std::vector<int> layers = layers_per_stage(sc.model, sc.parallelism);
    const size_t from = rng.next() % layers.size();
    const int least = sc.parallelism.virtual_pipeline_stages;
    const int shift = std::min(layers[from] - least, 2);
    layers[from] -= shift;
    layers[rng.next() % layers.size()] += shift;
    sc.parallelism.stage_layers = layers;
  }
  if (!test::is_valid_input(sc))
    return std::nullopt;
  return test::read_back(sc);
}

TEST(StageBalanceTest, SameAnswerAsTheExhaustiveSearchOnRandomLayouts) {
  test::Rng rng(20261201);
  int compared = 0;
  int deep = 0;
  int bounded = 0;
  for (int i = 0; i < 400; ++i) {
    Scenario sc = test::random_scenario(rng);
    if (sc.parallelism.pipeline <= 1)
      continue;
    if (rng.coin()) {
      std::optional<Scenario> variant = deep_variant(sc, rng);
      if (!variant)
        continue;
      sc = *variant;
      ++deep;
    }
    const HardwareProfile profile = io::resolve_profile(sc);
    const std::string layout = io::scenario_to_json(sc).dump();
    expect_same_as_exhaustive(sc, profile, std::nullopt, layout);
    // Under a memory bound near the current peak, as the planner asks.
    if (rng.coin()) {
      const double peak = estimate::estimate_iteration(sc, profile).memory.peak_bytes;
      expect_same_as_exhaustive(sc, profile, peak * (rng.coin() ? 1.0 : 1.02), layout);
      ++bounded;
    }
    ++compared;
  }
  EXPECT_GT(compared, 150);
  EXPECT_GT(deep, 50);
  EXPECT_GT(bounded, 50);
}

// Every shipped scenario's suggestion (what `capsim simulate` prints) is the exhaustive search's.
TEST(StageBalanceTest, SameAnswerAsTheExhaustiveSearchOnShippedScenarios) {
  for (const char* name :
       {"gpt-30b-p4d", "gpt3-175b-selene-1024", "llama3-70b-b200", "llama3-70b-p5"}) {
    const Scenario sc = shipped(name);
    expect_same_as_exhaustive(sc, io::resolve_profile(sc), std::nullopt, name);
    const auto balance = estimate::balance_stage_layers(sc, io::resolve_profile(sc));
    EXPECT_FALSE(balance && balance->search_capped) << name;
  }
}

// Under the interleaved schedule every destination is timed; a search that reaches its work
// bound stops there, says so, and still returns its best split so far, faster than the start.
TEST(StageBalanceTest, SearchStopsAtItsWorkBound) {
  const Scenario sc = shipped("llama3-70b-p5");
  const HardwareProfile profile = io::resolve_profile(sc);
  const auto full = estimate::balance_stage_layers(sc, profile);
  ASSERT_TRUE(full.has_value());
  EXPECT_FALSE(full->search_capped);
  // Enough work for the first move's timings only.
  const double one_timing = sc.model.num_layers + static_cast<double>(sc.parallelism.pipeline) *
                                                      sc.parallelism.num_micro_batches() *
                                                      sc.parallelism.virtual_pipeline_stages;
  const auto capped = estimate::balance_stage_layers(sc, profile, std::nullopt, 2.5 * one_timing);
  ASSERT_TRUE(capped.has_value());
  EXPECT_TRUE(capped->search_capped);
  EXPECT_LT(capped->iteration_time_s, capped->current_time_s);
  EXPECT_GE(capped->iteration_time_s, full->iteration_time_s);
  EXPECT_FALSE(estimate::balance_stage_layers(sc, profile, std::nullopt, 0.0).has_value());
}

}  // namespace
}  // namespace capsim
