#pragma once

#include <string>

namespace capsim::io {

// Escaping of free text (names, sources, labels) written into the HTML reports (HTML Living
// Standard §13.1.2.6 and §13.1.2.3). The reports quote every attribute value with '"', so an
// apostrophe needs no escape in either context.

// Returns `text` with & < > and " replaced by their character references: safe in element
// content and in a double-quoted attribute value.
[[nodiscard]] std::string html_escape(const std::string& text);

// Returns `text` with & < and > replaced, quotes kept as they are: for element content only,
// where a '"' is literal (the what-if report's preformatted table quotes the what-if's name,
// and reads as the terminal table does).
[[nodiscard]] std::string html_escape_text(const std::string& text);

}  // namespace capsim::io
