// What-if replay speed: 10,000 jobs over 30 simulated days on a pool of up to 512 p4d nodes
// (docs/performance.md target: under 10 s on one core). Each run forks one child (SimGrid allows
// one engine per process), so the time includes the fork. Run:
//   build/tests/bench/whatif_bench --benchmark_out_format=json --benchmark_out=whatif.json
#include <cmath>
#include <random>

#include <benchmark/benchmark.h>

#include "models/catalog.hpp"
#include "models/instance_catalog.hpp"

#include "whatif/policy.hpp"
#include "whatif/runner.hpp"
#include <sys/resource.h>

namespace {

using capsim::whatif::WhatIf;

// 10,000 jobs, Poisson arrivals over 30 days, sizes 1-128 GPUs (Philly/Helios-like mix),
// log-normal durations (median 2 h): on average ~590 GPUs (74 nodes) of work, 14 % of the
// 512-node maximum, with bursts well above.
WhatIf workload(double median_duration_s, int num_jobs = 10000, double days = 30.0,
                int max_nodes = 512) {
  WhatIf w;
  w.file = "whatif_bench";
  w.name = "bench-10k-30d-512";
  capsim::whatif::NodePool p;
  p.name = "p4d";
  p.instance = *capsim::builtin_catalog().find_instance("p4d.24xlarge");
  p.price_usd_per_hour = p.instance.on_demand_usd_per_hour;
  p.max_nodes = max_nodes;
  p.boot = {360, 720};
  p.image_pull = {240, 480};
  p.init = {60, 180};
  p.ice_probability = 0.02;
  w.pools.push_back(p);
  std::mt19937_64 rng(301);
  const double horizon = days * 86400.0;
  std::exponential_distribution<double> gap(num_jobs / horizon);
  std::discrete_distribution<int> size({30, 10, 10, 25, 10, 8, 5, 2});
  const int sizes[] = {1, 2, 4, 8, 16, 32, 64, 128};
  std::lognormal_distribution<double> dur(std::log(median_duration_s), 1.0);
  double t = 0;
  for (int i = 0; i < num_jobs; ++i) {
    t += gap(rng);
    capsim::traces::JobRecord j;
    j.id = "j" + std::to_string(i);
    j.submit_s = std::floor(t);
    j.gpus = j.min_gpus = j.max_gpus = sizes[size(rng)];
    if (i % 5 == 0 && j.gpus >= 8) {  // a fifth of the larger jobs are elastic
      j.min_gpus = j.gpus / 2;
      j.max_gpus = 2 * j.gpus;
    }
    j.duration_s = std::max(60.0, std::ceil(dur(rng)));
    w.jobs.push_back(j);
  }
  // Llama-3-like hardware failure rate, Young-Daly checkpoints (docs/design/autoscaling.md
  // §2.5, §2.6).
  w.failures.gpu_mtbf_s = 50000 * 3600.0;
  w.failures.repair = {4 * 3600.0, 8 * 3600.0};
  w.failures.detect_s = 600;
  w.failures.young_daly = true;
  w.failures.checkpoint_cost_s = 60;
  w.failures.restart_cost_s = 300;
  return w;
}

void run(benchmark::State& state, const WhatIf& w) {
  const auto presets = capsim::whatif::preset_names();
  const std::string preset = presets[static_cast<std::size_t>(state.range(0))];
  const auto policy =
      capsim::whatif::make_policy(preset, preset, nlohmann::json::object(), "bench", "/");
  double finished = 0;
  for (auto _ : state) {
    const auto runs = capsim::whatif::run_all(w, {policy}, 1, 1);
    finished = runs.front().runs.front().jobs_finished;
    benchmark::DoNotOptimize(finished);
  }
  state.SetLabel(preset);
  state.counters["jobs_finished"] = finished;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 10000);
}
// Real time: the work happens in the forked child, not in this process.
void BM_WhatIf(benchmark::State& state) {
  static const WhatIf w = workload(7200.0);
  run(state, w);
}

// Same arrivals with 4x longer jobs (median 8 h): ~2,400 GPUs of work on average, 58 % of the
// 512-node maximum, so the pool saturates and the queue grows during bursts.
void BM_WhatIfHeavy(benchmark::State& state) {
  static const WhatIf w = workload(4 * 7200.0);
  run(state, w);
}

// How the replay grows with the trace and the cluster: state.range(0) jobs over 60 days on up
// to state.range(1) nodes, median job 30 min, the static policy (the what-if scale target is
// 10^6 jobs on 2,000 nodes under 60 s and 4 GiB on one core). The run happens in a forked
// child: `child_cpu_s` is its CPU time (user + system), which a loaded machine skews far less
// than wall time, and `child_max_rss_mb` the largest reaped child's peak memory (getrusage
// keeps a maximum over every child, so run one configuration per process to read it).
void BM_WhatIfTraceLength(benchmark::State& state) {
  const WhatIf w =
      workload(1800.0, static_cast<int>(state.range(0)), 60.0, static_cast<int>(state.range(1)));
  // Policy 0: static; 1: Karpenter's (scale-up per tick, consolidation walking idle nodes).
  const char* preset = state.range(2) == 0 ? "static" : "karpenter";
  const auto policy =
      capsim::whatif::make_policy(preset, preset, nlohmann::json::object(), "bench", "/");
  const auto cpu_s = [] {
    rusage children{};
    getrusage(RUSAGE_CHILDREN, &children);
    const auto seconds = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    return seconds(children.ru_utime) + seconds(children.ru_stime);
  };
  double finished = 0;
  const double cpu_before = cpu_s();
  for (auto _ : state) {
    const auto runs = capsim::whatif::run_all(w, {policy}, 1, 1);
    finished = runs.front().runs.front().jobs_finished;
    benchmark::DoNotOptimize(finished);
  }
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  state.counters["child_cpu_s"] = (cpu_s() - cpu_before) / static_cast<double>(state.iterations());
  state.counters["jobs_finished"] = finished;
  state.counters["child_max_rss_mb"] = static_cast<double>(children.ru_maxrss) / 1024.0;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

BENCHMARK(BM_WhatIf)->DenseRange(0, 6)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_WhatIfHeavy)->DenseRange(0, 6)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_WhatIfTraceLength)
    ->ArgNames({"jobs", "nodes", "autoscaled"})
    ->Args({25000, 2000, 0})
    ->Args({100000, 2000, 0})
    ->Args({250000, 2000, 0})
    ->Args({1000000, 2000, 0})
    ->Args({100000, 500, 0})
    ->Args({100000, 1000, 0})
    ->Args({100000, 4000, 0})
    ->Args({100000, 2000, 1})
    ->Args({1000000, 2000, 1})
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
