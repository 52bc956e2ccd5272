#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace capsim::io {

// Writes JSON as YAML block style with yaml-cpp's emitter: objects as mappings (keys in the
// document's order: sorted for nlohmann::json, as built for ordered_json), arrays as sequences;
// a string that YAML 1.2's core schema would read as another type ("8", "true", "null", "",
// ".inf") is double-quoted, so parse_yaml_text reads back the same JSON. `documents` true:
// `json` is an array written as a stream of `---` documents. `header` lines are written first,
// each as a `# ` comment.
[[nodiscard]] std::string write_yaml(const nlohmann::ordered_json& json, bool documents,
                                     const std::string& header);
[[nodiscard]] std::string write_yaml(const nlohmann::json& json, bool documents,
                                     const std::string& header);

}  // namespace capsim::io
