// Several jobs on one fabric (docs/performance.md target: four jobs sharing 4,096 GPUs under
// 5 s). Each iteration runs the shared simulation of every GPU of the four jobs in a forked
// child (SimGrid allows one simulation per process), so its time includes fork, costing the
// jobs and building the platform; the alone runs `capsim simulate CLUSTER.json` adds (one child
// per job, two at once) are not part of it. Counters: simulated GPUs, the shared run's simulated
// makespan, its build and replay wall times, peak RSS of the children (MiB).
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

// Four GPT-3 175B jobs (TP8 x PP8 x DP16, 1,024 A100 each, 16 micro-batches) on 512 nodes under
// 32 leaves of 16 nodes, 2:1 oversubscribed; one job per placement policy.
SharedCluster four_jobs_4096() {
  const nlohmann::json model = {{"name", "GPT-3 175B"}, {"num_layers", 96},
                                {"hidden_size", 12288}, {"num_attention_heads", 96},
                                {"seq_length", 2048},   {"vocab_size", 51200}};
  const nlohmann::json parallelism = {{"tensor", 8},
                                      {"pipeline", 8},
                                      {"data", 16},
                                      {"micro_batch_size", 1},
                                      {"global_batch_size", 256},
                                      {"sequence_parallel", true},
                                      {"zero_stage", 1}};
  nlohmann::json jobs = nlohmann::json::array();
  for (const char* placement : {"packed", "spread", "leaf-aligned", "random-fragmented"}) {
    jobs.push_back({{"name", placement},
                    {"model", model},
                    {"parallelism", parallelism},
                    {"placement", placement}});
  }
  const nlohmann::json doc = {{"schema", "capsim.cluster/v1"},
                              {"fabric",
                               {{"gpu", "A100-SXM4-80GB"},
                                {"gpus_per_node", 8},
                                {"num_nodes", 512},
                                {"inter_node",
                                 {{"fabric", "infiniband"},
                                  {"nics_per_node", 8},
                                  {"nic_bandwidth", "200Gbps"},
                                  {"topology", "oversubscribed"},
                                  {"oversubscription", 2.0},
                                  {"nodes_per_leaf", 16}}}}},
                              {"jobs", jobs}};
  io::JsonReader reader(doc, "four-jobs-4096.json");
  Catalog catalog;
  return io::read_shared_cluster(reader, "", catalog);
}

void BM_FourJobs_4096_A100(benchmark::State& state) {
  const SharedCluster cluster = four_jobs_4096();
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
BENCHMARK(BM_FourJobs_4096_A100)->Unit(benchmark::kMillisecond);

}  // namespace
