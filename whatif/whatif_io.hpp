#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

inline constexpr const char* kWhatIfSchema = "capsim.whatif/v1";

struct WhatIfReadOptions {
  // Keys of a policy's configuration that would change the result but that capsim does not
  // model are one InputError listing them all; true: notes (WhatIf::notes), the policy modelled
  // without them.
  bool allow_unmodelled = false;
};

// Reads and validates a `capsim.whatif/v1` file (format: docs/whatif.md): keys and types, units
// and ranges, cross-field rules, then the job trace and the scenarios it names. Relative paths
// resolve against the file's folder. Throws InputError naming the file and JSON pointer.
[[nodiscard]] WhatIf load_whatif(const std::string& path, const WhatIfReadOptions& options = {});

// Same, from parsed JSON attributed to `file`; relative paths resolve against `base_dir`.
[[nodiscard]] WhatIf read_whatif(const nlohmann::json& json, const std::string& file,
                                 const std::string& base_dir,
                                 const WhatIfReadOptions& options = {});

// Returns the embedded default what-if (scenarios/whatif/default.json and its trace, compiled
// into the binary), so `capsim whatif` runs from any directory.
[[nodiscard]] WhatIf default_whatif();

// Returns the text of the embedded default what-if.
[[nodiscard]] std::string_view default_whatif_text();

// Returns the policies to run: the swept policy replaced by one variant per value
// ("name[knob=value]") in its place, the others as listed.
[[nodiscard]] std::vector<PolicySpec> expand_policies(const WhatIf& whatif);

}  // namespace capsim::whatif
