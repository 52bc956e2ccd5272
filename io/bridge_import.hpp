#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

#include "io/megatron_import.hpp"

namespace capsim::io {

// Reads a Megatron-Bridge (NeMo 2) recipe's overrides — the ConfigContainer sections model,
// train, ddp, optimizer, mixed_precision (a recipe name such as "bf16_mixed" or its fields),
// comm_overlap, ... as YAML read into `recipe` (parse_yaml_file) from `file` — into a
// `capsim.scenario/v1` scenario on `options.cluster`. Each key becomes the Megatron-LM argument
// it sets (io/bridge_keys.hpp) and the arguments are read by import_megatron's mapping, so the
// two importers agree; absent keys take Megatron-LM's defaults. Throws InputError naming the
// file and the key's JSON pointer for a bad value or conflict, and one InputError listing every
// key that changes the step but is not modelled (unless options.allow_unmodelled). docs/import.md
// lists the keys.
[[nodiscard]] MegatronImport import_bridge(const nlohmann::json& recipe, const std::string& file,
                                           const MegatronImportOptions& options, Catalog& catalog);

}  // namespace capsim::io
