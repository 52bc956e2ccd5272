// Several jobs on one fabric (docs/performance.md target: four jobs sharing 4,096 GPUs under
// 5 s; BM_SharedFabric: how the time grows with jobs and with GPUs per job). Each iteration runs
// the shared simulation of every GPU of the jobs in a forked child (SimGrid allows one
// simulation per process), so its time includes fork, costing the jobs and building the
// platform; the alone runs `capsim simulate CLUSTER.json` adds (one child per job, two at once)
// are not part of it. Counters: simulated GPUs, the shared run's simulated makespan, its build
// and replay wall times, peak RSS of the children (MiB, the largest child so far).
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "models/shared_cluster.hpp"
#include "sim/fabric_simulator.hpp"
#include "sim/forked_work.hpp"
#include "sim/report_bytes.hpp"

#include "estimate/iteration_model.hpp"
#include "io/cluster_io.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include <sys/resource.h>

namespace {

using namespace capsim;

// `jobs` GPT-3 175B jobs (TP8 x PP8 x DP`dp`, 16 micro-batches each) filling a fabric of
// A100 nodes under leaves of 16 nodes, 2:1 oversubscribed; the jobs take the placement policies
// in turn (packed, spread, leaf-aligned, random-fragmented).
SharedCluster gpt3_jobs(int jobs, int dp) {
  const nlohmann::json model = {{"name", "GPT-3 175B"}, {"num_layers", 96},
                                {"hidden_size", 12288}, {"num_attention_heads", 96},
                                {"seq_length", 2048},   {"vocab_size", 51200}};
  const nlohmann::json parallelism = {{"tensor", 8},
                                      {"pipeline", 8},
                                      {"data", dp},
                                      {"micro_batch_size", 1},
                                      {"global_batch_size", 16 * dp},
                                      {"sequence_parallel", true},
                                      {"zero_stage", 1}};
  const std::vector<std::string> placements{"packed", "spread", "leaf-aligned",
                                            "random-fragmented"};
  nlohmann::json list = nlohmann::json::array();
  for (int j = 0; j < jobs; ++j) {
    const std::string& placement = placements[static_cast<std::size_t>(j) % placements.size()];
    list.push_back({{"name", placement + "-" + std::to_string(j)},
                    {"model", model},
                    {"parallelism", parallelism},
                    {"placement", placement}});
  }
  const nlohmann::json doc = {{"schema", "capsim.cluster/v1"},
                              {"fabric",
                               {{"gpu", "A100-SXM4-80GB"},
                                {"gpus_per_node", 8},
                                {"num_nodes", jobs * dp * 8},
                                {"inter_node",
                                 {{"fabric", "infiniband"},
                                  {"nics_per_node", 8},
                                  {"nic_bandwidth", "200Gbps"},
                                  {"topology", "oversubscribed"},
                                  {"oversubscription", 2.0},
                                  {"nodes_per_leaf", 16}}}}},
                              {"jobs", list}};
  io::JsonReader reader(doc, "gpt3-jobs.json");
  Catalog catalog;
  return io::read_shared_cluster(reader, "", catalog);
}

// Times the shared run of `cluster` in a forked child per iteration (see the file comment).
void time_shared_run(benchmark::State& state, const SharedCluster& cluster) {
  const HardwareProfile profile = io::resolve_profile(cluster.jobs.front().scenario);
  double makespan_s = 0.0;
  int gpus = 0;
  double build_s = 0.0;
  double run_s = 0.0;
  for (auto _ : state) {
    sim::run_forked(
        1, 1,
        [&](std::size_t) {
          std::vector<IterationCosts> costs;
          for (const FabricJob& job : cluster.jobs)
            costs.push_back(estimate::compute_iteration_costs(job.scenario, profile));
          std::vector<sim::FabricJobInput> inputs;
          for (std::size_t i = 0; i < cluster.jobs.size(); ++i)
            inputs.push_back({&cluster.jobs[i], &costs[i], nullptr});
          sim::SimStats stats;
          const sim::FabricRun run = sim::simulate_fabric(cluster.fabric, inputs, profile,
                                                          FabricSchedule::aligned(), &stats);
          sim::ReportWriter out;
          out.put_double(run.makespan_s);
          out.put_int(stats.simulated_gpus);
          out.put_double(stats.build_wall_s);
          out.put_double(stats.run_wall_s);
          return sim::ChildReport{0, out.bytes()};
        },
        [&](std::size_t, sim::ChildOutcome outcome) {
          if (outcome.exit_code != 0) {
            state.SkipWithError(("child: " + sim::describe_exit(outcome.exit_code)).c_str());
            return;
          }
          sim::ReportReader in(outcome.bytes);
          makespan_s = in.get_double();
          gpus = static_cast<int>(in.get_int());
          build_s = in.get_double();
          run_s = in.get_double();
        });
  }
  rusage ru{};
  getrusage(RUSAGE_CHILDREN, &ru);
  state.counters["gpus"] = gpus;
  state.counters["simulated_makespan_s"] = makespan_s;
  state.counters["build_wall_s"] = build_s;  // the last iteration's platform and actors
  state.counters["run_wall_s"] = run_s;      // and its replay
  state.counters["child_peak_rss_mib"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
  state.SetItemsProcessed(state.iterations());
}

// The target: four jobs of 1,024 GPUs on 512 nodes under 32 leaves.
void BM_FourJobs_4096_A100(benchmark::State& state) {
  time_shared_run(state, gpt3_jobs(4, 16));
}
BENCHMARK(BM_FourJobs_4096_A100)->Unit(benchmark::kMillisecond);

// How the shared run grows with jobs and with GPUs per job (DP 4, 8, 16: 256 to 1,024 GPUs).
void BM_SharedFabric(benchmark::State& state) {
  time_shared_run(state,
                  gpt3_jobs(static_cast<int>(state.range(0)), static_cast<int>(state.range(1))));
}
BENCHMARK(BM_SharedFabric)
    ->ArgNames({"jobs", "dp"})
    ->ArgsProduct({{1, 2, 4}, {4, 8, 16}})
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
