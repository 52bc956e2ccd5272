// `capsim import bridge RECIPE.yaml`: the YAML reader and the Megatron-Bridge key translation on
// any bytes, then the analytic estimate of a scenario they accept, which must also read back
// from its own JSON.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/bridge_import.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "io/yaml_document.hpp"
#include "tests/fuzz/targets/analytic_check.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    io::MegatronImportOptions options;
    options.name = "fuzz";
    options.cluster = {{"gpu", "H100-SXM5-80GB"}, {"gpus_per_node", 8}, {"num_nodes", 4}};
    // Inputs ending in a newline model what they can; the others stop at what they cannot.
    options.allow_unmodelled = size > 0 && data[size - 1] == '\n';
    Catalog catalog;
    const nlohmann::json recipe = io::parse_yaml_text(fuzz::as_text(data, size), "fuzz.yaml");
    const Scenario scenario = io::import_bridge(recipe, "fuzz.yaml", options, catalog).scenario;
    const nlohmann::json written = io::scenario_to_json(scenario);
    const Scenario back = io::JsonReader::read_document(
        written, "written", [](io::JsonReader& r) { return io::read_scenario(r, true); });
    fuzz::require(io::scenario_to_json(back) == written, "the imported scenario reads back");
    fuzz::check_estimate(scenario, io::resolve_profile(scenario));
  });
  return 0;
}
