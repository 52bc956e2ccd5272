#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace capsim::io {

// Where a text stops being text capsim reads: a NUL byte (parsers would stop there and ignore
// the rest) or a malformed UTF-8 sequence (names are echoed into JSON, which must be UTF-8).
struct TextFault {
  std::size_t offset = 0;  // of the offending byte
  std::string problem;     // "a NUL byte", "invalid UTF-8 (byte 0xFF)"
};

// Returns the offset of the first byte of `text` that does not start a well-formed UTF-8
// sequence (RFC 3629 §4: no overlong forms, no surrogates, nothing above U+10FFFF), or nullopt.
[[nodiscard]] std::optional<std::size_t> find_invalid_utf8(std::string_view text);

// Returns the first NUL byte or malformed UTF-8 sequence of `text`, or nullopt.
[[nodiscard]] std::optional<TextFault> find_text_fault(std::string_view text);

// 1-based line and column (in bytes) of `offset` in `text`.
struct TextPosition {
  std::size_t line = 1;
  std::size_t column = 1;
};
[[nodiscard]] TextPosition text_position(std::string_view text, std::size_t offset);

}  // namespace capsim::io
