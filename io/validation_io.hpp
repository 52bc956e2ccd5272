#pragma once

#include <string>
#include <vector>

#include "models/scenario.hpp"

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"

namespace capsim::io {

inline constexpr const char* kValidationSchema = "capsim.validation/v1";

// One published, measured training run (capsim.validation/v1).
struct ValidationCase {
  std::string id;
  std::string group;
  Scenario scenario;
  double measured_iteration_time_s = 0.0;
  double measured_tokens_per_s_per_gpu = 0.0;
  std::string source;
  std::string confidence;  // "high", "medium", "low"
  std::string pointer;     // JSON pointer of the case in its file ("/cases/3"); "" if not read
};

// A case of a validation file that failed its checks (the rest of the file stays usable).
struct RejectedCase {
  std::string id;       // "" when the id itself is missing or bad
  std::string pointer;  // "/cases/3"
  InputError error;
};

// The cases of a validation file that passed every check, and the ones that did not.
struct ValidationFile {
  std::vector<ValidationCase> cases;
  std::vector<RejectedCase> rejected;
};

// Returns whether `id` starts with one of `prefixes` (capsim's --cases filters).
[[nodiscard]] bool id_has_prefix(const std::string& id, const std::vector<std::string>& prefixes);

// Reads a validation file case by case: the file's own structure (JSON, schema, the cases
// array) must be right, else InputError; a case whose scenario or measurement fails a check is
// reported in `rejected`, so one bad case does not hide the others' results.
// With `overrides`, each case's scenario is changed by them first; a case whose scenario they
// cannot change (a pointer through a value that is not an object) is rejected too.
[[nodiscard]] ValidationFile load_validation_file(
    const std::string& path, const std::vector<ScenarioOverride>& overrides = {});
// Same, from a validation document already parsed, attributed to `path` in errors.
[[nodiscard]] ValidationFile read_validation_file(
    const nlohmann::json& doc, const std::string& path,
    const std::vector<ScenarioOverride>& overrides = {});

// Reads and checks every case of a validation file (each scenario fully validated); throws the
// first case's InputError.
[[nodiscard]] std::vector<ValidationCase> load_validation_cases(const std::string& path);

}  // namespace capsim::io
