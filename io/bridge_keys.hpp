#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace capsim::io {

// Where a Megatron-Bridge ConfigContainer (megatron/bridge/training/config.py) keeps the setting
// of a Megatron-LM argument: its section ("model", "train", "ddp", ...) and key. `inverted`: the
// key is true where the argument is absent (share_embeddings_and_output_weights for
// --untie-embeddings-and-output-weights).
struct BridgeKey {
  std::string section;
  std::string key;
  bool inverted = false;
};

// Returns the Bridge key that carries `argument` ("--micro-batch-size" -> train.micro_batch_size);
// an argument outside the renaming table is a model key spelled like it (--num-layers ->
// model.num_layers).
[[nodiscard]] BridgeKey bridge_key_of_argument(std::string_view argument);

// A Megatron-LM argument a Bridge key sets; `inverted` as in BridgeKey.
struct BridgeArgument {
  std::string argument;
  bool inverted = false;
};

// Returns the Megatron-LM argument that `section`.`key` sets, or
// nullopt for a section whose keys are not Megatron-LM arguments (checkpoint, logger, ...).
// Keys of the model, train, ddp, optimizer, mixed_precision and comm_overlap sections outside the
// renaming table are the argument spelled like them (model.init_method_std -> --init-method-std).
[[nodiscard]] std::optional<BridgeArgument> argument_of_bridge_key(std::string_view section,
                                                                   std::string_view key);

// Returns why the Bridge key `section`.`key`, which no Megatron-LM argument spells, does not
// change the step time (ddp.check_for_nan_in_grad, ...), or nullptr for a key not listed.
[[nodiscard]] const char* ignored_bridge_key(std::string_view section, std::string_view key);

// Returns why the keys of a ConfigContainer section do not change the step time (checkpoint,
// logger, dataset, ...), or nullptr for a section capsim reads.
[[nodiscard]] const char* ignored_bridge_section(std::string_view section);

}  // namespace capsim::io
