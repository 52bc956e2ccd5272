#pragma once

#include <string_view>

namespace capsim::io {

// Megatron-LM arguments capsim reads past: returns why one does not change the step time
// ("the learning rate"), or nullptr for an argument not listed.
[[nodiscard]] const char* ignored_megatron_argument(std::string_view name);

// Megatron-LM arguments that change the step time in a way capsim does not model: returns
// what they change, or nullptr for an argument not listed.
[[nodiscard]] const char* unmodelled_megatron_argument(std::string_view name);

}  // namespace capsim::io
