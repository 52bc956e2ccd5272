#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/scenario.hpp"

#include "io/input_error.hpp"

namespace capsim::io {

// What a Megatron-LM argument list does not say: the scenario's name and cluster.
struct MegatronImportOptions {
  std::string name = "scenario";
  nlohmann::json cluster;  // a scenario's "cluster" object (docs/scenario.md)
  // Arguments that change the step but that capsim does not model are reported as problems;
  // true: as notes, the scenario modelling the run without them.
  bool allow_unmodelled = false;
};

// A scenario read from Megatron-LM arguments, and what the reading left out or assumed: one
// note per ignored argument, argument capsim does not model (with allow_unmodelled) and
// Megatron-LM default taken, each naming the file and line.
struct MegatronImport {
  Scenario scenario;
  std::vector<InputProblem> notes;
};

// Reads the Megatron-LM (Megatron-Core) arguments of a launch script or argument file
// (`text`, read from `file`; launch_arguments) into a `capsim.scenario/v1` scenario on
// `options.cluster`, checked by read_scenario against `catalog`. docs/import.md lists each
// argument's mapping. Throws InputError naming the file and line for a bad value, an unset
// shell variable in a value capsim reads, conflicting arguments, or a layout that does not fit
// the cluster; and one InputError listing every argument that changes the step but is not
// modelled (unless allow_unmodelled).
[[nodiscard]] MegatronImport import_megatron(const std::string& text, const std::string& file,
                                             const MegatronImportOptions& options,
                                             Catalog& catalog);

}  // namespace capsim::io
