// capsim export megatron|bridge|sbatch SCENARIO.json [--set PATH=VALUE]...
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "planner/launch_files.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "io/input_error.hpp"
#include "io/scenario_io.hpp"

namespace capsim::cli {
namespace {

int export_main(const std::string& format, planner::LaunchFormat launch, int argc, char** argv) {
  const char* description = launch == planner::LaunchFormat::kBridge
                                ? "Print a scenario as Megatron-Bridge recipe overrides (YAML)"
                            : launch == planner::LaunchFormat::kSbatch
                                ? "Print a Slurm batch script that runs a scenario with Megatron-LM"
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
  const bool bridge = launch == planner::LaunchFormat::kBridge;
  for (const std::string& setting : planner::launch_file_unexpressed(launch, scenario)) {
    std::fprintf(stderr, "capsim export %s: note: %s: no %s carries %s\n", format.c_str(),
                 path.c_str(), bridge ? "Megatron-Bridge key" : "Megatron-LM argument",
                 setting.c_str());
  }
  std::cout << planner::launch_file_text(launch, scenario) << std::flush;
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
    if (const auto launch = planner::launch_format_from_string(format))
      return export_main(format, *launch, argc - 1, argv + 1);
    throw io::InputError(format, "",
                         "unknown format; capsim exports \"megatron\", \"bridge\" and "
                         "\"sbatch\"");
  });
}

}  // namespace capsim::cli
