#pragma once

#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace capsim {

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

// Reads and checks every case of a validation file (each scenario fully validated).
[[nodiscard]] std::vector<ValidationCase> load_validation_cases(const std::string& path);

}  // namespace capsim
