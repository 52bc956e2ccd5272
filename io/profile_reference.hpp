#pragma once

#include <string>

#include "models/catalog.hpp"

namespace capsim::io {

// A profile file that an input (scenario, validation case, plan instance, command line) names.

// Resolves `profile_path` against the folder of `file` (the input that named it), then the
// working folder; throws InputError at `pointer` in `file` when it is not a regular file.
[[nodiscard]] std::string resolve_profile_path(const std::string& profile_path,
                                               const std::string& file, const std::string& pointer);

// A profile fitted on new hardware carries its GPU's definition: adds that GPU to `catalog` from
// the profile (found as resolve_profile_path finds it), so that the input naming the profile may
// name the GPU before the profile itself is read. A profile whose "gpu" is a name defines
// nothing. Errors name their cause: a missing file is an InputError at `pointer` in
// `input_file`; unparsable JSON or a bad definition, an InputError naming the profile.
void define_gpu_of_profile(const std::string& profile_path, const std::string& input_file,
                           const std::string& pointer, Catalog& catalog);

}  // namespace capsim::io
