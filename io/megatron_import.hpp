#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/scenario.hpp"

#include "io/input_error.hpp"
#include "io/launch_script.hpp"

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

// Megatron-LM arguments read from a file that is not a launch script (a Megatron-Bridge recipe):
// each word's `line` is a 1-based index into `locations`, where the file gives it (a JSON
// pointer such as "/model/num_layers"); `absent_location` names where the file would give an
// argument it lacks ("--num-layers" -> "/model/num_layers"). `notes` and `unmodelled` are what
// the file's own reading found, reported with the arguments' (unmodelled ones all at once).
struct MegatronArgumentSource {
  std::vector<ScriptWord> words;
  std::vector<std::string> locations;
  std::function<std::string(const std::string&)> absent_location;
  std::vector<InputProblem> notes;
  std::vector<InputProblem> unmodelled;
};

// import_megatron for arguments from `source`: the same mapping and checks, its problems and
// notes located by `source.locations` in `file`.
[[nodiscard]] MegatronImport import_megatron_arguments(const MegatronArgumentSource& source,
                                                       const std::string& file,
                                                       const MegatronImportOptions& options,
                                                       Catalog& catalog);

// Megatron's --moe-layer-freq list for `num_layers` layers whose first `first_dense` have a dense
// FFN and, after them, the last of every `interval` experts (MoeSpec::layer_interval):
// "([0]*K+[1]*M)", or "([0]*K+([0]*(I-1)+[1])*M+[0]*R)" (a Python expression Megatron
// evaluates; parts of zero layers left out). The import reads both back.
[[nodiscard]] std::string moe_layer_freq_text(int num_layers, int first_dense, int interval);

}  // namespace capsim::io
