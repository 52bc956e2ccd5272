#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace capsim::io {

// Writes JSON as YAML block style with yaml-cpp's emitter: objects as mappings (keys in
// nlohmann::json's order), arrays as sequences; a string that YAML 1.2's core schema would read
// as another type ("8", "true", "null", "") is double-quoted, so parse_yaml_text reads back the
// same JSON. `documents` true: `json` is an array written as a stream of `---` documents.
// `header` lines are written first, each as a `# ` comment.
[[nodiscard]] std::string write_yaml(const nlohmann::json& json, bool documents,
                                     const std::string& header);

}  // namespace capsim::io
