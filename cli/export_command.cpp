// capsim export megatron|bridge|sbatch SCENARIO.json [--set PATH=VALUE]...
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "planner/bridge_overrides.hpp"
#include "planner/megatron_args.hpp"
#include "planner/sbatch_script.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "io/input_error.hpp"
#include "io/scenario_io.hpp"

namespace capsim::cli {
namespace {

// One argument and its values per line: an argument file `capsim import megatron` reads.
std::string one_per_line(const std::string& arguments) {
  std::string out;
  size_t start = 0;
  while (start < arguments.size()) {
    size_t next = arguments.find(" --", start);
    if (next == std::string::npos)
      next = arguments.size();
    out += arguments.substr(start, next - start) + "\n";
    start = next + 1;
  }
  return out;
}

// What each format writes of a scenario.
std::string exported_text(const std::string& format, const Scenario& scenario) {
  if (format == "bridge")
    return planner::bridge_overrides_yaml(scenario);
  if (format == "sbatch")
    return planner::sbatch_script(scenario);
  return one_per_line(
      planner::megatron_arguments(scenario, planner::MegatronArgumentSet::kComplete));
}

int export_main(const std::string& format, int argc, char** argv) {
  const char* description =
      format == "bridge"   ? "Print a scenario as Megatron-Bridge recipe overrides (YAML)"
      : format == "sbatch" ? "Print a Slurm batch script that runs a scenario with Megatron-LM"
                           : "Print a scenario's Megatron-LM arguments, one per line";
  cxxopts::Options options("capsim export " + format, description);
  options.positional_help("SCENARIO.json");
  options.add_options()("scenario", "capsim.scenario/v1 file", cxxopts::value<std::string>())(
      "set",
      "change the scenario first: PATH=VALUE, PATH dot-separated from the scenario's top, VALUE "
      "JSON or else a string (repeatable)",
      cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"scenario"});
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("scenario") == 0)
    throw io::InputError("SCENARIO.json", "", "missing argument");
  const std::string path = args["scenario"].as<std::string>();
  const Scenario scenario = io::load_scenario(path, overrides_option(args));
  const bool bridge = format == "bridge";
  for (const std::string& setting :
       bridge ? planner::bridge_unexpressed(scenario) : planner::megatron_unexpressed(scenario)) {
    std::fprintf(stderr, "capsim export %s: note: %s: no %s carries %s\n", format.c_str(),
                 path.c_str(), bridge ? "Megatron-Bridge key" : "Megatron-LM argument",
                 setting.c_str());
  }
  std::cout << exported_text(format, scenario) << std::flush;
  return 0;
}

}  // namespace

int run_export(int argc, char** argv) {
  // Errors name the subcommand and its format: "capsim export megatron: error: ...".
  std::string name = std::string("capsim export") + (argc >= 2 ? std::string(" ") + argv[1] : "");
  return guarded(name.c_str(), [&] {
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
      std::printf(
          "usage: capsim export megatron|bridge|sbatch SCENARIO.json [--set PATH=VALUE]...\n"
          "  megatron  a scenario's Megatron-LM arguments (an argument file)\n"
          "  bridge    its Megatron-Bridge recipe overrides (YAML)\n"
          "  sbatch    a Slurm batch script running it with Megatron-LM\n");
      return argc < 2 ? 2 : 0;
    }
    const std::string format = argv[1];
    argv[1] = name.data();
    if (format == "megatron" || format == "bridge" || format == "sbatch")
      return export_main(format, argc - 1, argv + 1);
    throw io::InputError(format, "",
                         "unknown format; capsim exports \"megatron\", \"bridge\" and "
                         "\"sbatch\"");
  });
}

}  // namespace capsim::cli
