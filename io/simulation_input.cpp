#include "io/simulation_input.hpp"

#include <utility>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

#include "io/gpu_spec_io.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/profile_reference.hpp"

namespace capsim::io {
namespace {

// Defines the GPU a parsed profile describes by an object; a GPU given by name defines nothing.
void define_gpu_of(const nlohmann::json& profile_doc, const std::string& path, Catalog& catalog) {
  if (!profile_doc.is_object() || !profile_doc.contains("gpu") ||
      !profile_doc.at("gpu").is_object())
    return;
  JsonReader root(profile_doc, path);
  (void)read_gpu_name_or_definition(root, "gpu", catalog);
}

}  // namespace

SimulationInput load_simulation_input(const std::string& scenario_path,
                                      const std::vector<ScenarioOverride>& overrides,
                                      const std::optional<std::string>& profile_path) {
  Catalog catalog;  // the built-ins, and the GPU the command line's profile defines
  std::optional<nlohmann::json> profile_doc;
  if (profile_path && !profile_path->empty()) {
    // The command line names it: found beside no input file, in the working folder.
    const std::string path = resolve_profile_path(*profile_path, "", "");
    profile_doc = JsonReader::parse_file(path);
    define_gpu_of(*profile_doc, path, catalog);
  }
  Scenario scenario = load_scenario(scenario_path, catalog, overrides);
  if (profile_path)
    scenario.profile_path = *profile_path;
  HardwareProfile profile =
      profile_doc ? resolve_profile(scenario, *profile_doc) : resolve_profile(scenario);
  return {std::move(scenario), std::move(profile)};
}

SimulationInput read_simulation_input(const nlohmann::json& scenario_doc, const std::string& file) {
  Catalog catalog;  // the built-ins, and the GPU the scenario or its profile defines
  Scenario scenario = JsonReader::read_document(scenario_doc, file, [&catalog](JsonReader& reader) {
    return read_scenario(reader, true, catalog);
  });
  scenario.profile_path = resolve_profile_path(scenario.profile_path, file, "/profile");
  HardwareProfile profile = resolve_profile(scenario);
  return {std::move(scenario), std::move(profile)};
}

}  // namespace capsim::io
