// The layer-split search (`capsim simulate`'s suggestion, the planner's balanced splits) on deep
// pipelines: 10^4 layers over 200 to 1,000 one-GPU stages under 1F1B and the interleaved schedule,
// two micro-batches per stage, from the even split (docs/performance.md, "Stage balance").
#include <string>

#include <benchmark/benchmark.h>

#include "estimate/stage_balance.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

// A 10^4-layer model of hidden size 1,024 on `stages` A100s, 8 per node, full recompute.
Scenario deep_pipeline(int stages, const char* schedule) {
  nlohmann::json doc = io::JsonReader::parse_file(std::string(CAPSIM_SOURCE_DIR) +
                                                  "/tests/data/scenarios/valid.json");
  doc["name"] = "deep-" + std::to_string(stages);
  doc["model"]["num_layers"] = 10000;
  doc["model"]["hidden_size"] = 1024;
  doc["model"]["num_attention_heads"] = 16;
  doc["model"]["num_kv_heads"] = 16;
  doc["model"]["ffn_hidden_size"] = 4096;
  doc["model"]["seq_length"] = 1024;
  doc["cluster"]["num_nodes"] = stages / 8;
  doc["parallelism"] = {
      {"tensor", 1},
      {"pipeline", stages},
      {"data", 1},
      {"micro_batch_size", 1},
      {"global_batch_size", 2 * stages},
      {"virtual_pipeline_stages", std::string(schedule) == "interleaved-1f1b" ? 2 : 1},
      {"schedule", schedule},
      {"recompute", "full"},
      {"zero_stage", 0},
      {"precision", "bf16"}};
  io::JsonReader reader(doc, "deep");
  return io::read_scenario(reader, true);
}

// Benchmark names keep their schedule: BM_StageBalance (1F1B, alike destinations timed at
// their ends) and BM_StageBalanceInterleaved (every destination timed, up to the work bound).
void balance_deep_pipeline(benchmark::State& state, const char* schedule) {
  const Scenario scenario = deep_pipeline(static_cast<int>(state.range(0)), schedule);
  const HardwareProfile profile = io::resolve_profile(scenario);
  for (auto _ : state)
    benchmark::DoNotOptimize(estimate::balance_stage_layers(scenario, profile));
  state.SetItemsProcessed(state.iterations());
}

void BM_StageBalance(benchmark::State& state) {
  balance_deep_pipeline(state, "1f1b");
}
void BM_StageBalanceInterleaved(benchmark::State& state) {
  balance_deep_pipeline(state, "interleaved-1f1b");
}

BENCHMARK(BM_StageBalance)->Arg(200)->Arg(400)->Arg(1000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StageBalanceInterleaved)->Arg(40)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace capsim
