#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace capsim::io {

// One CSV record split into its fields.
struct CsvFields {
  std::vector<std::string> fields;
  bool quote_open = false;  // a quoted field the line left unterminated
};

// Splits one CSV record at the commas outside double quotes (RFC 4180 quoting: "" is a quote
// inside a quoted field; no embedded newlines). Carriage returns outside quotes are dropped
// (CRLF files). Fields are returned as written, spaces included.
[[nodiscard]] CsvFields split_csv_line(std::string_view line);

}  // namespace capsim::io
