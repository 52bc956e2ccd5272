// Event-level simulator speed (docs/performance.md targets: GPT-3 175B on 1,024 A100 < 0.5 s,
// Llama-3 405B on 16,384 H100 < 5 s, memory < 2 GiB). SimGrid allows one simulation per process, so
// every iteration runs in a forked child (simulate_iteration_in_child); the time per iteration
// therefore includes fork, costing the scenario and the platform build: the wall time a user or
// the planner sees. Counters: simulated GPUs, peak RSS of the children (MiB).
#include <benchmark/benchmark.h>

#include "models/catalog.hpp"
#include "models/scenario.hpp"
#include "sim/isolated_simulation.hpp"

#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include <sys/resource.h>

namespace {

using namespace capsim;

Scenario gpt3_175b(int tp, int pp, int dp, int gbs) {
  Scenario s;
  s.name = "gpt3-175b";
  s.model = {"GPT-3 175B", 96, 12288, 96, 96, 49152, FfnActivation::kGelu, 2048, 51200, false};
  s.cluster.gpu = *builtin_catalog().find_gpu("A100-SXM4-80GB");
  s.cluster.gpus_per_node = 8;
  s.cluster.num_nodes = tp * pp * dp / 8;
  s.cluster.intra_node_bandwidth_bytes_per_s = 300e9;
  s.cluster.has_inter_node = s.cluster.num_nodes > 1;
  s.cluster.inter_node_fabric = Fabric::kInfiniband;
  s.cluster.nics_per_node = 8;
  s.cluster.nic_bandwidth_bytes_per_s = 25e9;  // 200 Gb/s HDR
  s.parallelism.tensor = tp;
  s.parallelism.pipeline = pp;
  s.parallelism.data = dp;
  s.parallelism.global_batch_size = gbs;
  s.parallelism.sequence_parallel = true;
  s.parallelism.zero_stage = 1;
  return s;
}

// Llama-3 405B as trained by Meta (Dubey et al. 2024, §3.3): TP8, PP16 with the first and last
// stages one layer lighter (7 + 14 x 8 + 7 = 126 layers), 8k sequences.
Scenario llama3_405b(int dp, int gbs) {
  Scenario s;
  s.name = "llama3-405b";
  s.model = {"Llama-3 405B",         126,  16384,  128,  8, 53248,
             FfnActivation::kSwiglu, 8192, 128256, false};
  s.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  s.cluster.gpus_per_node = 8;
  s.cluster.num_nodes = 8 * 16 * dp / 8;
  s.cluster.intra_node_bandwidth_bytes_per_s = 450e9;
  s.cluster.has_inter_node = true;
  s.cluster.inter_node_fabric = Fabric::kInfiniband;
  s.cluster.nics_per_node = 8;
  s.cluster.nic_bandwidth_bytes_per_s = 50e9;  // 400 Gb/s NDR
  s.parallelism.tensor = 8;
  s.parallelism.pipeline = 16;
  s.parallelism.data = dp;
  s.parallelism.global_batch_size = gbs;
  s.parallelism.sequence_parallel = true;
  s.parallelism.zero_stage = 1;
  s.parallelism.stage_layers = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
  return s;
}

void run(benchmark::State& state, const Scenario& scenario, bool symmetry = true) {
  const HardwareProfile profile = io::resolve_profile(scenario);
  sim::SimOptions options;
  options.exploit_symmetry = symmetry;
  double simulated = 0.0;
  for (auto _ : state) {
    const SimulationResult r = sim::simulate_iteration_in_child(scenario, profile, options);
    simulated = r.iteration_time_s;
    // No DoNotOptimize: the fork is a side effect, and benchmark 1.7's "+m,r" asm constraint
    // corrupts doubles under GCC 12.
  }
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  state.counters["gpus"] = scenario.parallelism.num_gpus();
  state.counters["micro_batches"] = scenario.parallelism.num_micro_batches();
  state.counters["simulated_iteration_s"] = simulated;
  state.counters["child_peak_rss_mib"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
  state.SetItemsProcessed(state.iterations());
}

// The shipped DeepSeek-V3 scenario (MLA, 256 experts top-8, MTP) grown to 2,048 H100: TP2,
// PP16 (61 layers as 3 + 14 x 4 + 2), DP64, EP64.
Scenario deepseek_v3_2048() {
  Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                 "/scenarios/deepseek-v3-h100/scenario.json");
  s.cluster.num_nodes = 256;
  s.parallelism.pipeline = 16;
  s.parallelism.virtual_pipeline_stages = 1;
  s.parallelism.schedule = Schedule::kOneFOneB;
  s.parallelism.data = 64;
  s.parallelism.expert = 64;
  s.parallelism.stage_layers = {3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2};
  return s;
}

void BM_Gpt3_175B_1024_A100(benchmark::State& state) {
  run(state, gpt3_175b(8, 8, 16, 1536));
}
BENCHMARK(BM_Gpt3_175B_1024_A100)->Unit(benchmark::kMillisecond);

void BM_Llama3_405B_16384_H100(benchmark::State& state) {
  run(state, llama3_405b(128, 2048));
}
BENCHMARK(BM_Llama3_405B_16384_H100)->Unit(benchmark::kMillisecond);

void BM_DeepSeekV3_2048_H100(benchmark::State& state) {
  run(state, deepseek_v3_2048());
}
BENCHMARK(BM_DeepSeekV3_2048_H100)->Unit(benchmark::kMillisecond);

// Scaling with GPUs: Llama-3 405B layout, DP from 1 to 128 (128 to 16,384 GPUs), 16
// micro-batches per pipeline; plus GPT-3 on 8 GPUs (TP8 only, 64 micro-batches).
void BM_Scale_Llama3_405B_Dp(benchmark::State& state) {
  const int dp = static_cast<int>(state.range(0));
  run(state, llama3_405b(dp, 16 * dp));
}
BENCHMARK(BM_Scale_Llama3_405B_Dp)
    ->RangeMultiplier(4)
    ->Range(1, 128)
    ->Arg(128)
    ->Unit(benchmark::kMillisecond);

// Scaling with micro-batches: GPT-3 175B on 1,024 A100, M = GBS / 16.
void BM_Scale_Gpt3_MicroBatches(benchmark::State& state) {
  run(state, gpt3_175b(8, 8, 16, 16 * static_cast<int>(state.range(0))));
}
BENCHMARK(BM_Scale_Gpt3_MicroBatches)
    ->RangeMultiplier(4)
    ->Range(8, 512)
    ->Unit(benchmark::kMillisecond);

// Scaling with pipeline depth (layers per stage fixed at 12): GPT-3 175B layers over PP.
void BM_Scale_Gpt3_Pipeline(benchmark::State& state) {
  const int pp = static_cast<int>(state.range(0));
  run(state, gpt3_175b(8, pp, 16, 1536));
}
BENCHMARK(BM_Scale_Gpt3_Pipeline)->RangeMultiplier(2)->Range(1, 32)->Unit(benchmark::kMillisecond);

// Scaling with layers (24 to 384): GPT-3 175B's layout (TP8 PP8 DP16, ZeRO-1, 96 micro-batches),
// where layers only lengthen each op, and a ZeRO-3 layout (TP8 DP128, 12 micro-batches), whose
// per-layer gathers and scatters make the replay grow with the layers.
Scenario gpt3_layers(int layers, bool zero3) {
  Scenario s = zero3 ? gpt3_175b(8, 1, 128, 1536) : gpt3_175b(8, 8, 16, 1536);
  s.model.num_layers = layers;
  if (zero3)
    s.parallelism.zero_stage = 3;
  return s;
}
void BM_Scale_Gpt3_Layers(benchmark::State& state) {
  run(state, gpt3_layers(static_cast<int>(state.range(0)), false));
}
BENCHMARK(BM_Scale_Gpt3_Layers)->RangeMultiplier(2)->Range(24, 384)->Unit(benchmark::kMillisecond);
void BM_Scale_Gpt3_Layers_Zero3(benchmark::State& state) {
  run(state, gpt3_layers(static_cast<int>(state.range(0)), true));
}
BENCHMARK(BM_Scale_Gpt3_Layers_Zero3)
    ->RangeMultiplier(2)
    ->Range(24, 384)
    ->Unit(benchmark::kMillisecond);

void BM_Gpt3_8_Gpus(benchmark::State& state) {
  run(state, gpt3_175b(8, 1, 1, 64));
}
BENCHMARK(BM_Gpt3_8_Gpus)->Unit(benchmark::kMillisecond);

// Every GPU simulated (no symmetry), for comparison on small clusters.
void BM_Full_Gpt3_Dp(benchmark::State& state) {
  run(state, gpt3_175b(8, 8, static_cast<int>(state.range(0)), 1536), false);
}
BENCHMARK(BM_Full_Gpt3_Dp)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);

}  // namespace
