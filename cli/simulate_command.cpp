// capsim simulate SCENARIO.json|CLUSTER.json [--engine event|analytic] [--profile P.json] [--trace
// OUT.json]
// [--every-gpu] [--kernels] [--json] [--set PATH=VALUE]... [--sweep PATH=V1,V2,... [--svg OUT.svg]]
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "models/memory_model.hpp"
#include "sim/iteration_simulator.hpp"
#include "traces/chrome_trace.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/simulate_cluster.hpp"
#include "cli/simulate_sweep.hpp"
#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "estimate/stage_balance.hpp"
#include "io/cluster_io.hpp"
#include "io/input_error.hpp"
#include "io/kernel_table_io.hpp"
#include "io/result_io.hpp"
#include "io/simulate_output.hpp"
#include "io/simulation_input.hpp"
#include "io/text_format.hpp"

namespace capsim::cli {
namespace {

// The exact run stops at sim::kMaxEveryGpuRanks instead of exhausting the machine.
void check_every_gpu_size(const Scenario& scenario) {
  const int gpus = scenario.parallelism.num_gpus();  // validated: the cluster's GPU count
  if (gpus > sim::kMaxEveryGpuRanks) {
    throw io::InputError("--every-gpu", "",
                         "simulates each of the " + std::to_string(gpus) +
                             " GPUs and is limited to " + std::to_string(sim::kMaxEveryGpuRanks) +
                             " (its memory grows faster than the GPU count); leave it out: the "
                             "default run simulates identical ranks once and is exact on "
                             "symmetric layouts");
  }
}

// Whether `path` is a capsim.cluster/v1 file; a file that does not parse is left to the
// scenario reader, whose messages name what is wrong with it.
bool names_cluster_file(const std::string& path) {
  try {
    return io::is_cluster_document(io::JsonReader::parse_file(path));
  } catch (const io::InputError&) {
    return false;
  }
}

cxxopts::Options simulate_options() {
  cxxopts::Options options("capsim simulate",
                           "Simulate one training iteration of a scenario, or of every job of a "
                           "cluster file on its shared fabric");
  options.positional_help("SCENARIO.json | CLUSTER.json");
  options.add_options()("scenario", "capsim.scenario/v1 or capsim.cluster/v1 file",
                        cxxopts::value<std::string>())(
      "engine", "event (SimGrid replay) or analytic (closed form)",
      cxxopts::value<std::string>()->default_value("event"))(
      "profile", "capsim.profile/v1 file (overrides the scenario's)",
      cxxopts::value<std::string>())("trace", "write a Chrome/Perfetto trace (event engine)",
                                     cxxopts::value<std::string>())(
      "json", "print one JSON object instead of the table")(
      "every-gpu",
      "event engine: simulate every GPU instead of one per stage (exact on asymmetric "
      "layouts and leaf-level oversubscription; slower)")(
      "kernels",
      "also list every kernel of one micro-batch with its modelled time and achieved rate "
      "(JSON: \"kernels\")")(
      "set",
      "change the scenario before it is read: PATH=VALUE, PATH dot-separated from the "
      "scenario's top (cluster.inter_node.nic_bandwidth=800Gbps), VALUE JSON or else a string "
      "(repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "sweep",
      "run the scenario once per value of one key: PATH=V1,V2,... (PATH as --set takes it; a "
      "value may be a JSON list) and print a table (or --json) of the runs",
      cxxopts::value<std::string>())("svg", "with --sweep: plot throughput against the value",
                                     cxxopts::value<std::string>());
  options.parse_positional({"scenario"});
  return options;
}

// Checks the options only the event engine has, before any simulation, so that a
// long run does not end in an error about its options or its output (which may not replace the
// scenario or its profile).
void check_engine_options(const cxxopts::ParseResult& args, const Scenario& scenario,
                          const std::string& engine) {
  for (const char* event_only : {"trace", "every-gpu"}) {
    if (args.count(event_only) > 0 && engine != "event")
      throw io::InputError(std::string("--") + event_only, "", "needs --engine event");
  }
  if (args.count("every-gpu") > 0)
    check_every_gpu_size(scenario);
  if (args.count("trace") > 0) {
    io::check_outputs({{"--trace", args["trace"].as<std::string>()}},
                      {{"the scenario", args["scenario"].as<std::string>()},
                       {"the profile", scenario.profile_path}});
  }
}

// The SimGrid replay of the lowered `costs`, writing the --trace file when asked.
SimulationResult simulate_event(const cxxopts::ParseResult& args, const Scenario& scenario,
                                const IterationCosts& costs, const HardwareProfile& profile) {
  traces::ChromeTrace trace;
  sim::SimOptions sim_options;
  sim_options.exploit_symmetry = args.count("every-gpu") == 0;
  if (args.count("trace") > 0)
    sim_options.trace = &trace;
  SimulationResult result = sim::simulate_iteration(scenario, costs, profile, sim_options);
  if (args.count("trace") > 0) {
    // Atomically: a failed write never leaves half a trace behind.
    std::ostringstream text;
    traces::write_chrome_trace(text, trace);
    io::write_file_atomically(args["trace"].as<std::string>(), text.str());
  }
  return result;
}

// Notes on what the profile rests on, when it is not a measured one, and on the --set changes: a
// what-if on the command line says so in its own output.
void add_input_notes(const cxxopts::ParseResult& args, const HardwareProfile& profile,
                     SimulationResult& result) {
  if (const std::optional<std::string> note = io::profile_note(profile))
    result.notes.push_back(*note);
  if (args.count("set") > 0) {
    std::string changed;
    for (const auto& argument : args["set"].as<std::vector<std::string>>())
      changed += (changed.empty() ? "" : ", ") + argument;
    result.notes.push_back("scenario changed by --set: " + changed);
  }
}

// The split as `--set` takes it, quoted for the shell (brackets are a glob pattern):
// 'parallelism.stage_layers=[20,21,20,19]'.
std::string stage_layers_setting(const std::vector<int>& stage_layers) {
  std::string list;
  for (const int layers : stage_layers)
    list += (list.empty() ? "" : ",") + std::to_string(layers);
  return "'parallelism.stage_layers=[" + list + "]'";
}

std::string stage_balance_text(const estimate::StageBalance& balance, const Parallelism& p) {
  std::string text;
  if (balance.fits && !balance.current_fits) {
    // Found for memory, so it may be slower: both times come from the same (analytic) engine.
    text = io::printf_string(
        "  layers split to fit in memory (peak %.1f GiB per GPU) would take %.4g s "
        "(analytic: %.4g s as split now)",
        balance.peak_bytes / kGiB, balance.iteration_time_s, balance.current_time_s);
  } else {
    text = io::printf_string(
        "  layers split to even the stages' work would run %.1f%% faster (analytic: %.4g s "
        "instead of %.4g s)",
        100.0 * (1.0 - balance.iteration_time_s / balance.current_time_s), balance.iteration_time_s,
        balance.current_time_s);
  }
  if (!balance.fits)
    text +=
        io::printf_string(", still not fitting (peak %.1f GiB per GPU)", balance.peak_bytes / kGiB);
  if (balance.search_capped)
    text += " (the search stopped at its work bound; a faster split may exist)";
  // stage_layers and partition_method exclude each other: the split replaces DeepSpeed's.
  const std::string drop_method =
      p.partition_method ? " --set parallelism.partition_method=null" : "";
  return text + ": --set " + stage_layers_setting(balance.stage_layers) + drop_method + "\n";
}

void print_result(const cxxopts::ParseResult& args, const SimulationResult& result,
                  const Scenario& scenario, const IterationCosts& costs,
                  const HardwareProfile& profile) {
  const bool kernels = args.count("kernels") > 0;
  if (args.count("json") > 0) {
    std::cout << io::simulate_output_json(result, scenario, costs, profile, kernels).dump(2)
              << "\n";
    return;
  }
  std::cout << io::result_table(result);
  if (const auto balance = io::suggested_stage_balance(scenario, costs, profile, result))
    std::cout << stage_balance_text(*balance, scenario.parallelism);
  if (kernels)
    std::cout << io::kernel_table_text(kernel_table(scenario, profile));
}

int simulate_main(int argc, char** argv) {
  cxxopts::Options options = simulate_options();
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("scenario") == 0)
    throw io::InputError("SCENARIO.json", "", "missing argument; see --help");
  if (args.count("svg") > 0 && args.count("sweep") == 0)
    throw io::InputError("--svg", "", "plots a sweep; give --sweep PATH=V1,V2,...");
  if (names_cluster_file(args["scenario"].as<std::string>()))
    return simulate_cluster(args);
  if (args.count("sweep") > 0)
    return simulate_sweep(args);
  const std::vector<io::ScenarioOverride> overrides = overrides_option(args);
  const std::optional<std::string> profile_path =
      args.count("profile") > 0 ? std::optional(args["profile"].as<std::string>()) : std::nullopt;
  const io::SimulationInput input =
      io::load_simulation_input(args["scenario"].as<std::string>(), overrides, profile_path);
  const Scenario& scenario = input.scenario;
  const HardwareProfile& profile = input.profile;
  const std::string engine = engine_option(args);
  check_engine_options(args, scenario, engine);
  // Lowered once: the engine runs on these costs, and the stage balance starts from them.
  const IterationCosts costs = estimate::compute_iteration_costs(scenario, profile);
  SimulationResult result = engine == "event"
                                ? simulate_event(args, scenario, costs, profile)
                                : estimate::estimate_iteration(scenario, costs, profile);
  add_input_notes(args, profile, result);
  print_result(args, result, scenario, costs, profile);
  return 0;
}

}  // namespace

int run_simulate(int argc, char** argv) {
  return guarded("capsim simulate", [&] { return simulate_main(argc, argv); });
}

}  // namespace capsim::cli
