// Screen rate of the planner (docs/performance.md, "Planner"): whole-plan screening of the
// default plan's space (enumeration, pruning, memory model, analytic estimator) on one thread,
// and the cost of one screened candidate. Run:
//   build/tests/bench/planner_bench --benchmark_out_format=json --benchmark_out=planner.json
#include <benchmark/benchmark.h>

#include "models/catalog.hpp"
#include "models/instance_catalog.hpp"
#include "models/memory_model.hpp"
#include "planner/plan_io.hpp"
#include "planner/planner.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "io/profile_io.hpp"

namespace {

using capsim::planner::PlanOptions;
using capsim::planner::PlanSpec;

// The default plan restricted to state.range(0) node counts (from 16 up), one thread, with the
// screen's lower bound on (state.range(1) == 1) or off.
void BM_ScreenDefaultPlan(benchmark::State& state) {
  PlanSpec plan = capsim::planner::read_plan_text(capsim::planner::default_plan_text(), "default");
  std::vector<int> nodes;
  for (int n = 16; static_cast<int>(nodes.size()) < state.range(0); n *= 2)
    nodes.push_back(n);
  plan.node_counts = nodes;
  PlanOptions opts;
  opts.jobs = 1;
  opts.screen_bounds = state.range(1) == 1;
  long long enumerated = 0;
  long long screened = 0;
  long long bounded = 0;
  for (auto _ : state) {
    const auto r = capsim::planner::run_plan(plan, opts);
    enumerated += r.enumerated;
    screened += r.screened;
    bounded += r.bounded;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.SetItemsProcessed(enumerated);
  // Every screened layout reaches the estimator; `bounded` of them end at its lower bound.
  state.counters["estimator_evals_per_s"] =
      benchmark::Counter(static_cast<double>(screened), benchmark::Counter::kIsRate);
  state.counters["full_estimates_per_s"] =
      benchmark::Counter(static_cast<double>(screened - bounded), benchmark::Counter::kIsRate);
  state.counters["bounded_share"] =
      benchmark::Counter(static_cast<double>(bounded) / static_cast<double>(screened));
}
BENCHMARK(BM_ScreenDefaultPlan)
    ->ArgNames({"nodes", "bounds"})
    ->Args({1, 1})
    ->Args({4, 1})
    ->Args({1, 0})
    ->Args({4, 0})
    ->Unit(benchmark::kMillisecond);

// One candidate that survives pruning: memory model + iteration costs + estimate.
void BM_ScreenOneCandidate(benchmark::State& state) {
  capsim::Scenario sc;
  sc.model = capsim::planner::read_plan_text(capsim::planner::default_plan_text(), "d").model;
  sc.cluster = capsim::planner::cluster_for_instance(
      *capsim::builtin_catalog().find_instance("p5.48xlarge"), 32);
  sc.parallelism.tensor = 4;
  sc.parallelism.pipeline = 4;
  sc.parallelism.data = 16;
  sc.parallelism.micro_batch_size = 1;
  sc.parallelism.global_batch_size = 2048;
  sc.parallelism.sequence_parallel = true;
  sc.parallelism.zero_stage = 1;
  const capsim::HardwareProfile profile = capsim::io::resolve_profile(sc);
  const capsim::GpuSpec& gpu = sc.cluster.gpu;
  for (auto _ : state) {
    const auto mem = capsim::estimate_memory(sc.model, sc.parallelism, gpu);
    const auto costs = capsim::estimate::compute_iteration_costs(sc, profile);
    const auto r = capsim::estimate::estimate_iteration(sc, costs, profile);
    benchmark::DoNotOptimize(mem.peak_bytes);
    benchmark::DoNotOptimize(r.iteration_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScreenOneCandidate);

}  // namespace
