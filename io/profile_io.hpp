#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

#include "io/json_reader.hpp"

namespace capsim::io {

inline constexpr const char* kProfileSchema = "capsim.profile/v1";

// Reads a `capsim.profile/v1` file (format: docs/calibration.md), checking keys, types, units,
// ranges and the cross-field rules; errors are InputErrors naming the file and JSON pointer.
// The GPU it names is looked up in `catalog`, and a GPU it defines is added to it.
[[nodiscard]] HardwareProfile load_profile(const std::string& path, Catalog& catalog);
// Same, against a catalog of its own: the built-ins and the GPU the file defines.
[[nodiscard]] HardwareProfile load_profile(const std::string& path);
// Reads the profile file that an input on `gpu` names (a scenario's "profile", a plan
// instance's): the file may name `gpu` without defining it, else as load_profile(path).
[[nodiscard]] HardwareProfile load_profile_for(const std::string& path, const GpuSpec& gpu);

// Reads a profile object (with its "schema" key) from a reader, as load_profile does.
[[nodiscard]] HardwareProfile read_profile(JsonReader& reader, Catalog& catalog);
[[nodiscard]] HardwareProfile read_profile(JsonReader& reader);

// Writes a profile as `capsim.profile/v1` JSON. Byte-stable: keys in a fixed (sorted) order and
// every number rounded to 6 significant digits, so refitting the same logs gives identical
// files and write -> read -> write is the identity.
[[nodiscard]] nlohmann::json profile_to_json(const HardwareProfile& profile);

// Returns profile_to_json(profile) as the text written to files (2-space indent, final newline).
[[nodiscard]] std::string profile_to_text(const HardwareProfile& profile);

// A profile shipped in scenarios/profiles/ and compiled into the binary.
struct EmbeddedProfile {
  std::string_view file;  // e.g. "a100-ib.json"
  std::string_view text;
};

// Returns every shipped profile, sorted by file name (generated at build time).
[[nodiscard]] const std::vector<EmbeddedProfile>& embedded_profiles();

// Returns the shipped profile named `file` (e.g. "a100-ib.json") or throws InputError.
[[nodiscard]] HardwareProfile embedded_profile(const std::string& file);

// Returns the file name of the shipped profile for a GPU architecture ("ampere", "hopper") and
// inter-node fabric ("infiniband", "roce", "efa"), or "" when none is shipped.
[[nodiscard]] std::string shipped_profile_file(const std::string& architecture,
                                               const std::string& fabric);

// Returns the profile a scenario runs with, read as estimate::choose_profile() picks it: its own
// profile file (which must suit it, estimate::named_profile_mismatch()); a shipped profile,
// with_datasheet_network() for a fabric its family has no profile for (H100 + RoCE, any +
// ethernet); or datasheet_profile() with the in-situ factor of the shipped families
// (in_situ_prior.hpp). Measured intra-node fits are scaled to the cluster's NVLink bandwidth.
// Rule documented in docs/calibration.md.
[[nodiscard]] HardwareProfile resolve_profile(const Scenario& scenario);

// Same, with the profile file the scenario names already parsed as `profile_doc`.
[[nodiscard]] HardwareProfile resolve_profile(const Scenario& scenario,
                                              const nlohmann::json& profile_doc);

// Canonical names used in profile and measurement JSON.
[[nodiscard]] const char* collective_name(CollectiveKind kind);
[[nodiscard]] const char* algorithm_name(CollectiveAlgorithm algorithm);
// Returns the collective kind for a canonical name, or throws std::invalid_argument.
[[nodiscard]] CollectiveKind collective_from_name(const std::string& name);
[[nodiscard]] const std::vector<std::string>& collective_names();

}  // namespace capsim::io
