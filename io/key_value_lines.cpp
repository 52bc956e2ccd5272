#include "io/key_value_lines.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "io/input_error.hpp"

namespace capsim::io {
namespace {

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// Splits one logical line into pairs.
std::vector<KeyValue> pairs_of(const std::string& line, const std::string& file,
                               const std::string& where) {
  std::vector<KeyValue> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i]))
      ++i;
    if (i == line.size())
      break;
    const std::size_t start = i;
    while (i < line.size() && line[i] != '=' && !is_space(line[i]))
      ++i;
    const std::string key = line.substr(start, i - start);
    if (i == line.size() || line[i] != '=') {
      if (key == "Include" || key == "include")
        throw InputError(file, where, "Include lines are not read; inline the included file");
      throw InputError(file, where, "expected Key=Value, got \"" + key + "\"");
    }
    if (key.empty())
      throw InputError(file, where,
                       "a value without a key (\"=\" at column " + std::to_string(i + 1) + ")");
    ++i;  // '='
    std::string value;
    if (i < line.size() && line[i] == '"') {
      const auto close = line.find('"', i + 1);
      if (close == std::string::npos)
        throw InputError(file, where, key + ": unterminated double quote");
      value = line.substr(i + 1, close - i - 1);
      i = close + 1;
      if (i < line.size() && !is_space(line[i]))
        throw InputError(file, where, key + ": text right after the closing quote");
    } else {
      const std::size_t vs = i;
      while (i < line.size() && !is_space(line[i]))
        ++i;
      value = line.substr(vs, i - vs);
    }
    if (value.empty())
      throw InputError(file, where, key + ": empty value");
    out.push_back({key, value});
  }
  return out;
}

}  // namespace

std::vector<KeyValueLine> read_key_value_lines(const std::string& text, const std::string& file) {
  if (text.find('\0') != std::string::npos)
    throw InputError(file, "", "a NUL byte: not a text file");
  std::vector<KeyValueLine> out;
  std::istringstream in(text);
  std::string logical;
  int first_line = 0;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    const auto hash = line.find('#');
    if (hash != std::string::npos)
      line.erase(hash);
    if (logical.empty())
      first_line = line_no;
    const bool continues = !line.empty() && line.back() == '\\';
    if (continues)
      line.pop_back();
    logical += line;
    if (continues) {
      logical += ' ';
      continue;
    }
    auto pairs = pairs_of(logical, file, "line " + std::to_string(first_line));
    if (!pairs.empty())
      out.push_back({first_line, std::move(pairs)});
    logical.clear();
  }
  if (!logical.empty()) {
    auto pairs = pairs_of(logical, file, "line " + std::to_string(first_line));
    if (!pairs.empty())
      out.push_back({first_line, std::move(pairs)});
  }
  return out;
}

std::string lower_ascii(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace capsim::io
