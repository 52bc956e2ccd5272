#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/scenario.hpp"

#include "io/json_reader.hpp"

namespace capsim::io {

inline constexpr const char* kScenarioSchema = "capsim.scenario/v1";

// A change made to a scenario before it is read (`--set` of capsim simulate and validate): the
// JSON `value_json` at `pointer`, a JSON pointer into the scenario
// ("/parallelism/tp_comm_overlap"); missing objects on the way are created, so the scenario's own
// rules judge the result.
struct ScenarioOverride {
  std::string pointer;
  std::string value_json;  // JSON text: "true", "2", "\"bf16\""
};

// Applies `overrides` to the scenario object `scenario` in order. Throws InputError at
// `file`:`pointer` + the override's pointer when a value on its path is not an object.
void apply_overrides(nlohmann::json& scenario, const std::vector<ScenarioOverride>& overrides,
                     const std::string& file, const std::string& pointer);

// Reads a `capsim.scenario/v1` file, checking every rule of docs/scenario.md (keys, types, units,
// ranges, cross-field), after applying `overrides`. The GPU and instance it names are looked up
// in `catalog`, and a GPU it (or its profile) defines is added to it. The profile path is
// resolved against the scenario's folder.
[[nodiscard]] Scenario load_scenario(const std::string& path, Catalog& catalog,
                                     const std::vector<ScenarioOverride>& overrides = {});
// Same, against a catalog of its own: the built-ins and what the file and its profile define.
[[nodiscard]] Scenario load_scenario(const std::string& path,
                                     const std::vector<ScenarioOverride>& overrides = {});

// Reads a scenario object; `require_schema` is false for scenarios embedded in validation cases
// and plans, which carry no schema key of their own.
[[nodiscard]] Scenario read_scenario(JsonReader& reader, bool require_schema, Catalog& catalog);
// Same, against a catalog of its own.
[[nodiscard]] Scenario read_scenario(JsonReader& reader, bool require_schema);

// Returns the parallelism `base` would have with `parallelism_doc` as its "parallelism" object
// (attributed to `file` at /parallelism), the layout rules checked as read_scenario checks
// them: for sweeps of layouts over one model and cluster read once. The first rule the layout
// breaks is returned, not thrown (a sweep meets many, and a throw costs more than an estimate);
// a problem with the document's keys or values throws.
[[nodiscard]] std::variant<Parallelism, InputError> read_parallelism_document(
    const Scenario& base, const nlohmann::json& parallelism_doc, const std::string& file);

// Reads only the model section (shared with plans).
[[nodiscard]] ModelSpec read_model(JsonReader& reader);

// Reads a scenario's "cluster" object (docs/scenario.md), its GPU and instance looked up in
// `catalog` (shared with the fabric of cluster files).
[[nodiscard]] ClusterSpec read_cluster(JsonReader& reader, Catalog& catalog);

// Reads a scenario's "parallelism" object with the rules of each key and of the keys together;
// `has_moe`: the model has experts (shared with the jobs of cluster files). The stack keys it
// leaves unsaid take `stack`'s settings when given (apply_stack_settings), else the defaults.
[[nodiscard]] Parallelism read_parallelism(JsonReader& reader, bool has_moe,
                                           const StackSettings* stack = nullptr);

// Reads the parallelism keys that describe the training stack rather than the layout
// (grad_reduce_precision, dp_bucket_layout, dp_bucket_size, overlap_grad_reduce,
// overlap_param_gather, optimizer_state_precision, master_weights, fp8_params, tp_comm_overlap,
// tp_backward_overlap, activation_input_fp8; docs/scenario.md) into `parallelism`, with the rules
// of each key alone. Scenarios and plans share them; the rules that tie them to one precision, ZeRO
// stage or sequence parallelism are checked by the caller.
void read_stack_keys(JsonReader& reader, Parallelism& parallelism);

// Reads "recompute_modules" (present): Megatron-Core's --recompute-modules, a non-empty list of
// distinct module names (models/recompute_modules.hpp). Returns their RecomputeModule bits.
[[nodiscard]] unsigned read_recompute_module_list(JsonReader& reader);

// Reads the expert-parallel exchange keys into `parallelism`: token_dispatcher (default
// "alltoall"), moe_a2a_overlap (default false) and memory_efficient_permutation (default true),
// each rejected without model.moe
// (`has_moe` false). A scenario's parallelism and a plan's stack share them.
void read_expert_exchange(JsonReader& reader, bool has_moe, Parallelism& parallelism);

// Returns why an NVLink domain of `domain` GPUs cannot join nodes of `gpus_per_node` for a job
// of `num_gpus` (not whole nodes, beyond NVL72's 72 GPUs, or splitting the job into unequal
// domains), or nullopt. A scenario's cluster and a plan's instances share it.
[[nodiscard]] std::optional<std::string> nvlink_domain_problem(int domain, int gpus_per_node,
                                                               int num_gpus);

// Returns why `master_weights` cannot update weights trained in `precision` (fp8 tensors when
// `fp8_params`), or nullopt.
[[nodiscard]] std::optional<std::string> master_weights_conflict(MasterWeights master_weights,
                                                                 Precision precision,
                                                                 bool fp8_params);

// Writes a scenario back as `capsim.scenario/v1` JSON (round-trips through read_scenario).
[[nodiscard]] nlohmann::json scenario_to_json(const Scenario& scenario);

}  // namespace capsim::io
