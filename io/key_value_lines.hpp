#pragma once

#include <string>
#include <vector>

namespace capsim::io {

// One `Key=Value` of a line; a double-quoted value loses its quotes.
struct KeyValue {
  std::string key;
  std::string value;
};

// One logical line of a key=value configuration, with its first physical line number.
struct KeyValueLine {
  int line = 0;
  std::vector<KeyValue> pairs;
};

// Reads a slurm.conf-style text strictly: `#` starts a comment, a line ending in `\` continues
// on the next, and every other line is whitespace-separated `Key=Value` pairs (a value may be
// double-quoted to hold spaces). Blank lines are skipped. Throws InputError naming `file` and
// "line N" for a word without `=`, an empty key or value, an unterminated quote, a NUL byte, or
// an `Include` line (the included file is not read).
[[nodiscard]] std::vector<KeyValueLine> read_key_value_lines(const std::string& text,
                                                             const std::string& file);

// `s` with ASCII letters lower-cased: such files' keys are case-insensitive (SuspendTime,
// suspendtime).
[[nodiscard]] std::string lower_ascii(std::string s);

}  // namespace capsim::io
