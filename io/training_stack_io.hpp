#pragma once

#include <string>

#include "models/training_stack.hpp"

#include "io/json_reader.hpp"

namespace capsim::io {

// Reads `key` of `reader`, a training stack (docs/scenario.md, "Training stacks"): its name
// ("nemo") or an object {name, version}, the version a string or a whole number. Throws InputError
// at the key, or at its name or version, naming the stacks or the stack's versions capsim knows.
[[nodiscard]] const TrainingStack& read_training_stack(JsonReader& reader, const std::string& key);

// Reads the optional "name" and "version" keys of `reader`, an object that may hold other keys
// too (a plan's stack section): the stack they name, or nullptr without "name" (a "version"
// alone is an error). Errors as read_training_stack.
[[nodiscard]] const TrainingStack* read_stack_name_and_version(JsonReader& reader);

}  // namespace capsim::io
