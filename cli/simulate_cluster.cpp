#include "cli/simulate_cluster.hpp"

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/fabric_result.hpp"
#include "sim/fabric_contention.hpp"
#include "sim/iteration_simulator.hpp"
#include "traces/chrome_trace.hpp"

#include "io/cluster_io.hpp"
#include "io/fabric_result_io.hpp"
#include "io/input_error.hpp"
#include "io/output_files.hpp"
#include "io/profile_io.hpp"

namespace capsim::cli {
namespace {

// The options of a scenario run that have no meaning for a cluster file.
void check_cluster_options(const cxxopts::ParseResult& args) {
  if (engine_option(args) != "event") {
    throw io::InputError("--engine", "",
                         "a cluster file runs on the event engine (its jobs share links)");
  }
  for (const char* scenario_only : {"every-gpu", "kernels", "set", "profile", "sweep"}) {
    if (args.count(scenario_only) > 0) {
      throw io::InputError(std::string("--") + scenario_only, "",
                           "is an option for scenario files; a cluster file names its profile in "
                           "\"profile\" and always simulates every GPU");
    }
  }
}

// The shared run simulates every GPU of every job, as --every-gpu does, and has its limit.
void check_size(const SharedCluster& cluster, const std::string& path) {
  long long gpus = 0;
  for (const FabricJob& job : cluster.jobs)
    gpus += job.scenario.parallelism.num_gpus();
  if (gpus > sim::kMaxEveryGpuRanks) {
    throw io::InputError(path, "/jobs",
                         "the jobs hold " + std::to_string(gpus) +
                             " GPUs; a shared fabric simulates every GPU and is limited to " +
                             std::to_string(sim::kMaxEveryGpuRanks));
  }
}

std::string job_traces_text(const SharedCluster& cluster,
                            const std::vector<traces::ChromeTrace>& job_traces) {
  std::vector<traces::JobTrace> jobs;
  for (std::size_t i = 0; i < cluster.jobs.size(); ++i)
    jobs.push_back({cluster.jobs[i].name, &job_traces[i]});
  std::ostringstream text;
  traces::write_job_traces(text, jobs);
  return text.str();
}

}  // namespace

int simulate_cluster(const cxxopts::ParseResult& args) {
  check_cluster_options(args);
  const std::string path = args["scenario"].as<std::string>();
  Catalog catalog;
  const SharedCluster cluster = io::load_shared_cluster(path, catalog);
  check_size(cluster, path);
  const bool tracing = args.count("trace") > 0;
  if (tracing) {
    io::check_outputs({{"--trace", args["trace"].as<std::string>()}},
                      {{"the cluster file", path}, {"the profile", cluster.profile_path}});
  }
  const HardwareProfile profile = io::resolve_profile(cluster.jobs.front().scenario);
  std::vector<traces::ChromeTrace> job_traces;
  const FabricContention contention =
      sim::measure_fabric_contention(cluster, profile, tracing ? &job_traces : nullptr);
  if (tracing)
    io::write_file_atomically(args["trace"].as<std::string>(),
                              job_traces_text(cluster, job_traces));
  if (args.count("json") > 0)
    std::cout << io::fabric_contention_to_json(contention).dump(2) << "\n";
  else
    std::cout << io::fabric_contention_table(contention);
  return 0;
}

}  // namespace capsim::cli
