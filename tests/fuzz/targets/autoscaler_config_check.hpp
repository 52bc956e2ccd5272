// Shared body of the autoscaler-configuration fuzz targets: a reader on any bytes, and what it
// accepts written back and read again unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "whatif/imported_policy.hpp"

namespace capsim::fuzz {

// Reads `data` as `format` from a file called `name` (its extension picks YAML or lines); an
// accepted policy must survive write_config then read_config_text.
void check_autoscaler_config(whatif::ConfigFormat format, const std::string& name,
                             const std::uint8_t* data, std::size_t size);

}  // namespace capsim::fuzz
