#include "traces/csv_table.hpp"

#include <cmath>
#include <exception>
#include <utility>

#include "io/csv_line.hpp"
#include "io/json_reader.hpp"
#include "io/text_check.hpp"
#include "io/units.hpp"

namespace capsim::traces {
namespace {

// The record's fields, trimmed (an unterminated quote keeps the rest of the line in the last).
std::vector<std::string> trimmed_fields(const std::string& line) {
  std::vector<std::string> cells;
  for (const std::string& field : io::split_csv_line(line).fields)
    cells.emplace_back(io::units::trim(field));
  return cells;
}

}  // namespace

std::string bad_cell(const std::string& column, const std::string& expected,
                     const std::string& got) {
  return "column \"" + column + "\": expected " + expected + ", got \"" + got + "\"";
}

CsvTable read_csv_table(std::istream& in, const std::string& path, const std::string& what) {
  CsvTable csv;
  csv.file = path;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    // Ids and names are echoed into JSON output, which must be UTF-8; a NUL is not text.
    if (const auto fault = io::find_text_fault(line)) {
      throw csv.error(number, fault->problem + " at column " + std::to_string(fault->offset + 1) +
                                  "; " + what + " is UTF-8 text without NUL bytes");
    }
    const std::string t(io::units::trim(line));
    if (t.empty() || t[0] == '#')
      continue;
    auto cells = trimmed_fields(t);
    if (csv.header.empty()) {
      csv.header = cells;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i].empty())
          throw csv.error(number, "empty column name in the header");
        if (!csv.column.emplace(cells[i], i).second) {
          throw csv.error(number, "column \"" + cells[i] + "\" appears twice in the header");
        }
      }
      continue;
    }
    if (cells.size() != csv.header.size()) {
      throw csv.error(number, "expected " + std::to_string(csv.header.size()) +
                                  " fields like the header, got " + std::to_string(cells.size()));
    }
    csv.rows.push_back({number, std::move(cells)});
  }
  if (csv.header.empty())
    throw io::InputError(path, "", what + " has no header row");
  return csv;
}

void require_columns(const CsvTable& csv, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (!csv.has(n)) {
      throw io::InputError(
          csv.file, "",
          "missing column \"" + n + "\" (header: " + io::join_names(csv.header) + ")");
    }
  }
}

int parse_int(const CsvTable& csv, const CsvRow& row, const std::string& name, int min, int max) {
  const std::string& s = csv.cell(row, name);
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || v < min || v > max) {
    throw csv.error(
        row.line,
        bad_cell(name, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
                 s));
  }
  return static_cast<int>(v);
}

double parse_number(const CsvTable& csv, const CsvRow& row, const std::string& name, double min) {
  const std::string& s = csv.cell(row, name);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v) || v < min) {
    throw csv.error(
        row.line, bad_cell(name, "a number >= " + std::to_string(static_cast<long long>(min)), s));
  }
  return v;
}

}  // namespace capsim::traces
