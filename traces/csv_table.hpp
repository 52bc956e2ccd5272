#pragma once

// A CSV file read whole, with one header row, and typed access to its cells whose errors name
// the file and the line (job traces: traces/job_trace.hpp).

#include <cstddef>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "io/input_error.hpp"

namespace capsim::traces {

struct CsvRow {
  int line = 0;  // 1-based, in the file
  std::vector<std::string> cells;
};

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::map<std::string, std::size_t> column;
  std::vector<CsvRow> rows;

  [[nodiscard]] io::InputError error(int line, const std::string& message) const {
    return {file, "line " + std::to_string(line), message};
  }
  [[nodiscard]] bool has(const std::string& name) const { return column.count(name) > 0; }
  [[nodiscard]] const std::string& cell(const CsvRow& row, const std::string& name) const {
    return row.cells.at(column.at(name));
  }
};

// Reads a CSV with one header row (`what` names the file's kind in the error when it has
// none); lines starting with '#' and blank lines are skipped, double quotes protect commas
// (RFC 4180 subset: no embedded newlines), cells are trimmed. Every data row must have the
// header's number of fields, and column names must be distinct and non-empty.
[[nodiscard]] CsvTable read_csv_table(std::istream& in, const std::string& path,
                                      const std::string& what);

// The message for a cell that is not what its column holds: column "x": expected E, got "v".
[[nodiscard]] std::string bad_cell(const std::string& column, const std::string& expected,
                                   const std::string& got);

// Throws unless every column in `names` is in the header.
void require_columns(const CsvTable& csv, const std::vector<std::string>& names);

// Returns the integer in column `name` of `row`, which must lie in [min, max].
[[nodiscard]] int parse_int(const CsvTable& csv, const CsvRow& row, const std::string& name,
                            int min, int max);

// Returns the finite number in column `name` of `row`, which must be at least `min`.
[[nodiscard]] double parse_number(const CsvTable& csv, const CsvRow& row, const std::string& name,
                                  double min);

}  // namespace capsim::traces
