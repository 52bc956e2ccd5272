#include "planner/launch_files.hpp"

#include "planner/bridge_overrides.hpp"
#include "planner/megatron_args.hpp"
#include "planner/sbatch_script.hpp"

namespace capsim::planner {
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

}  // namespace

std::optional<LaunchFormat> launch_format_from_string(std::string_view name) {
  if (name == "megatron")
    return LaunchFormat::kMegatron;
  if (name == "bridge")
    return LaunchFormat::kBridge;
  if (name == "sbatch")
    return LaunchFormat::kSbatch;
  return std::nullopt;
}

const char* launch_file_name(LaunchFormat format) {
  switch (format) {
    case LaunchFormat::kBridge:
      return "bridge.yaml";
    case LaunchFormat::kSbatch:
      return "train.sbatch";
    case LaunchFormat::kMegatron:
      break;
  }
  return "megatron.args";
}

std::string launch_file_text(LaunchFormat format, const Scenario& scenario) {
  switch (format) {
    case LaunchFormat::kBridge:
      return bridge_overrides_yaml(scenario);
    case LaunchFormat::kSbatch:
      return sbatch_script(scenario);
    case LaunchFormat::kMegatron:
      break;
  }
  return one_per_line(megatron_arguments(scenario, MegatronArgumentSet::kComplete));
}

std::vector<std::string> launch_file_unexpressed(LaunchFormat format, const Scenario& scenario) {
  return format == LaunchFormat::kBridge ? bridge_unexpressed(scenario)
                                         : megatron_unexpressed(scenario);
}

}  // namespace capsim::planner
