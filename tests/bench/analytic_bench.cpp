// Analytical screen rate: evaluations of estimate_iteration per second on one core (target:
// >= 100,000/s, docs/performance.md). Profiles are resolved once outside the loop, as the
// planner does.
#include <benchmark/benchmark.h>

#include "estimate/analytic_estimator.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

void BM_AnalyticEstimate(benchmark::State& state, const char* scenario_dir) {
  const Scenario scenario = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/" +
                                              scenario_dir + "/scenario.json");
  const HardwareProfile profile = io::resolve_profile(scenario);
  for (auto _ : state) {
    benchmark::DoNotOptimize(estimate::estimate_iteration(scenario, profile).iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}

// The planner's inner loop varies the layout of one scenario; memory is part of every result.
void BM_AnalyticScreenSweep(benchmark::State& state) {
  Scenario scenario =
      io::load_scenario(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/gpt-30b-p4d/scenario.json");
  const HardwareProfile profile = io::resolve_profile(scenario);
  const int micro_batches[] = {1, 2, 4};
  size_t i = 0;
  for (auto _ : state) {
    scenario.parallelism.micro_batch_size = micro_batches[i++ % 3];
    benchmark::DoNotOptimize(estimate::estimate_iteration(scenario, profile).iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}

// The same on a 2:1 oversubscribed fabric with 4 nodes per leaf: the leaf crossings of a layout
// are counted over every GPU once per thread and then remembered (estimate/leaf_uplinks.cpp).
void BM_AnalyticEstimateOversubscribed(benchmark::State& state) {
  Scenario scenario = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                        "/scenarios/gpt3-175b-selene-1024/scenario.json");
  scenario.cluster.topology = Topology::kOversubscribed;
  scenario.cluster.oversubscription = 2.0;
  scenario.cluster.nodes_per_leaf = 4;
  const HardwareProfile profile = io::resolve_profile(scenario);
  for (auto _ : state) {
    benchmark::DoNotOptimize(estimate::estimate_iteration(scenario, profile).iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK_CAPTURE(BM_AnalyticEstimate, gpt3_175b_selene, "gpt3-175b-selene-1024");
BENCHMARK(BM_AnalyticEstimateOversubscribed);
BENCHMARK_CAPTURE(BM_AnalyticEstimate, gpt_30b_p4d, "gpt-30b-p4d");
BENCHMARK_CAPTURE(BM_AnalyticEstimate, llama3_70b_p5, "llama3-70b-p5");
BENCHMARK_CAPTURE(BM_AnalyticEstimate, deepseek_v3_h100, "deepseek-v3-h100");
BENCHMARK_CAPTURE(BM_AnalyticEstimate, qwen3_235b_h100, "qwen3-235b-h100");
BENCHMARK(BM_AnalyticScreenSweep);

}  // namespace
}  // namespace capsim
