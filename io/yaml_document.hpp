#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace capsim::io {

// Most values one YAML file may expand to: aliases are copied out, and a chain of aliases to
// aliases ("billion laughs") would otherwise grow exponentially.
inline constexpr std::size_t kMaxYamlValues = std::size_t{1} << 20;

// Reads the YAML file at `path` (read_input_file, InputKind::kJson's limit) as JSON, so that the
// readers of Kubernetes manifests, autoscaler configurations and training recipes check it with
// JsonReader's pointers and key rules. A stream of several documents (`---`) becomes an array of
// them; one document stays itself. Plain scalars resolve by YAML 1.2's core schema (null, true,
// false, integers, floats); quoted and `!!str` scalars stay strings; .inf and .nan stay strings
// since JSON has no such numbers. Throws InputError naming the file for a syntax error (with its
// line and column), a NUL byte or invalid UTF-8, a duplicate key (with its JSON pointer), a key
// that is not a scalar, nesting deeper than kMaxJsonDepth or more than kMaxYamlValues values.
[[nodiscard]] nlohmann::json parse_yaml_file(const std::string& path);
// Where each scalar of a YAML text starts: the byte offset of its first character (a quoted
// scalar's opening quote), by the JSON pointer of its value.
using ScalarOffsets = std::map<std::string, std::size_t>;

// The same for text attributed to `name`; `offsets`, when given, receives where each scalar
// value starts in `text` (an alias's scalar: its anchor's).
[[nodiscard]] nlohmann::json parse_yaml_text(std::string_view text, const std::string& name,
                                             ScalarOffsets* offsets = nullptr);

// Whether `text`, written as a plain (unquoted) scalar, reads back as that string.
[[nodiscard]] bool plain_scalar_is_string(const std::string& text);

}  // namespace capsim::io
