#include "io/text_check.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace capsim::io {
namespace {

// What a lead byte allows: the length of its sequence (0: not a lead byte) and the range of
// the second byte (RFC 3629 §4: no overlong forms, no surrogates, nothing above U+10FFFF).
struct Utf8Lead {
  std::size_t length = 1;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
};

Utf8Lead utf8_lead(unsigned char byte) {
  Utf8Lead lead;
  if (byte < 0x80)
    return lead;
  lead.length = byte >= 0xC2 && byte <= 0xDF   ? 2
                : byte >= 0xE0 && byte <= 0xEF ? 3
                : byte >= 0xF0 && byte <= 0xF4 ? 4
                                               : 0;
  lead.low = byte == 0xE0 ? 0xA0 : byte == 0xF0 ? 0x90 : 0x80;
  lead.high = byte == 0xED ? 0x9F : byte == 0xF4 ? 0x8F : 0xBF;
  return lead;
}

// Whether the sequence the lead byte at `i` announces is complete and well formed.
bool is_utf8_sequence(std::string_view text, std::size_t i, const Utf8Lead& lead) {
  bool valid = lead.length > 0 && i + lead.length <= text.size();
  for (std::size_t k = 1; valid && k < lead.length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    valid = k == 1 ? next >= lead.low && next <= lead.high : (next & 0xC0) == 0x80;
  }
  return valid;
}

}  // namespace

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Lead lead = utf8_lead(static_cast<unsigned char>(text[i]));
    if (!is_utf8_sequence(text, i, lead))
      return i;
    i += lead.length;
  }
  return std::nullopt;
}

std::optional<TextFault> find_text_fault(std::string_view text) {
  const std::size_t nul = std::min(text.find('\0'), text.size());
  const auto invalid = find_invalid_utf8(text.substr(0, nul));
  if (invalid) {
    std::array<char, 8> hex{};
    std::snprintf(hex.data(), hex.size(), "0x%02X", static_cast<unsigned char>(text[*invalid]));
    return TextFault{*invalid, std::string("invalid UTF-8 (byte ") + hex.data() + ")"};
  }
  if (nul < text.size())
    return TextFault{nul, "a NUL byte"};
  return std::nullopt;
}

TextPosition text_position(std::string_view text, std::size_t offset) {
  TextPosition at;
  const std::size_t end = std::min(offset, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

}  // namespace capsim::io
