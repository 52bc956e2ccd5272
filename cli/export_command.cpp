// capsim export megatron SCENARIO.json [--set PATH=VALUE]...
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "planner/megatron_args.hpp"

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

int export_megatron_main(int argc, char** argv) {
  cxxopts::Options options("capsim export megatron",
                           "Print a scenario's Megatron-LM arguments, one per line");
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
  for (const std::string& setting : planner::megatron_unexpressed(scenario)) {
    std::fprintf(stderr, "capsim export megatron: note: %s: no Megatron-LM argument carries %s\n",
                 path.c_str(), setting.c_str());
  }
  std::cout << one_per_line(
                   planner::megatron_arguments(scenario, planner::MegatronArgumentSet::kComplete))
            << std::flush;
  return 0;
}

}  // namespace

int run_export(int argc, char** argv) {
  // Errors name the subcommand and its format: "capsim export megatron: error: ...".
  std::string name = std::string("capsim export") + (argc >= 2 ? std::string(" ") + argv[1] : "");
  return guarded(name.c_str(), [&] {
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
      std::printf(
          "usage: capsim export megatron SCENARIO.json [--set PATH=VALUE]...\n"
          "  megatron  a scenario's Megatron-LM arguments (an argument file)\n");
      return argc < 2 ? 2 : 0;
    }
    const std::string format = argv[1];
    argv[1] = name.data();
    if (format == "megatron")
      return export_megatron_main(argc - 1, argv + 1);
    throw io::InputError(format, "", "unknown format; capsim exports \"megatron\"");
  });
}

}  // namespace capsim::cli
