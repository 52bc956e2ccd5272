#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace capsim::io {

// Returns `doc` as YAML text (yaml-cpp's emitter, block style, keys in `doc`'s order), each line
// of `comment` first as a `#` comment. Strings are double-quoted so that none reads back as a
// number or boolean; numbers keep their shortest exact form; parse_yaml_text reads the text back
// as `doc`.
[[nodiscard]] std::string yaml_text(const nlohmann::ordered_json& doc,
                                    const std::string& comment = "");

}  // namespace capsim::io
