#include "io/html_escape.hpp"

namespace capsim::io {
namespace {

std::string escaped(const std::string& text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += quotes ? "&quot;" : "\"";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string html_escape(const std::string& text) {
  return escaped(text, /*quotes=*/true);
}

std::string html_escape_text(const std::string& text) {
  return escaped(text, /*quotes=*/false);
}

}  // namespace capsim::io
