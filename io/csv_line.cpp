#include "io/csv_line.hpp"

namespace capsim::io {

CsvFields split_csv_line(std::string_view line) {
  CsvFields out;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  out.fields.push_back(field);
  out.quote_open = quoted;
  return out;
}

}  // namespace capsim::io
