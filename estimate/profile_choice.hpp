#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"

namespace capsim::estimate {

// Where the profile a scenario runs with comes from (docs/calibration.md, "Which profile a
// scenario gets").
enum class ProfileSource {
  kNamedFile,                // the profile file the scenario names
  kShipped,                  // the shipped profile of the GPU's family on the cluster's fabric
  kShippedDatasheetNetwork,  // the family's InfiniBand profile with its network from datasheets
  kDatasheet,  // the GPU's datasheet figures with the shipped families' in-situ factor
};

// Which profile to read, and for the shipped sources which shipped file.
struct ProfileChoice {
  ProfileSource source = ProfileSource::kDatasheet;
  std::string shipped_file;  // kShipped, kShippedDatasheetNetwork: e.g. "a100-ib.json"
};

// Why a profile file a scenario names cannot serve it: a JSON pointer into the profile file and
// the message.
struct ProfileMismatch {
  std::string pointer;
  std::string message;
};

// Returns the shipped profile file for a GPU architecture ("ampere", "hopper") and inter-node
// fabric ("infiniband", "roce", "efa") when `shipped_files` holds it, else "". Files are named
// <gpu family>-<fabric>.json (docs/calibration.md).
[[nodiscard]] std::string shipped_profile_file(const std::string& architecture,
                                               const std::string& fabric,
                                               const std::vector<std::string>& shipped_files);

// Returns where `scenario`'s profile comes from: its own profile file when it names one; for a
// GPU the catalog does not build in (`gpu_is_builtin` false), its datasheet; else the shipped
// profile (among `shipped_files`) of the GPU's architecture and the cluster's inter-node fabric
// (a single-node cluster without an inter-node section takes the InfiniBand one); for a fabric
// the family has no profile for, the family's InfiniBand profile with the datasheet network;
// else the datasheet. Pure.
[[nodiscard]] ProfileChoice choose_profile(const Scenario& scenario, bool gpu_is_builtin,
                                           const std::vector<std::string>& shipped_files);

// Returns why `profile`, the file `scenario` names, cannot serve it, or nullopt: it is for
// another GPU architecture than the cluster's (its SM count and efficiencies would describe
// different hardware), or it has no inter-node fit for a
// scenario on several nodes. Pure.
[[nodiscard]] std::optional<ProfileMismatch> named_profile_mismatch(const HardwareProfile& profile,
                                                                    const Scenario& scenario);

}  // namespace capsim::estimate
