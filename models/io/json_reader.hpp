#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/io/input_error.hpp"

namespace capsim {

// Deepest nesting any input may have (capsim's documents nest a few levels).
inline constexpr int kMaxJsonDepth = 64;

// Strict reader over one JSON object of an input file. Every accessor records the key it read;
// finish() rejects keys nobody read and lists the allowed ones. Errors are InputErrors naming
// the file and the JSON pointer. Not thread-safe; the JSON it views must outlive it.
class JsonReader {
 public:
  // REQUIRES: value outlives the reader. Throws InputError when value is not an object.
  JsonReader(const nlohmann::json& value, std::string file, std::string pointer = "");
  // A temporary would not outlive the reader.
  JsonReader(nlohmann::json&& value, std::string file, std::string pointer = "") = delete;

  // Parses a file; syntax errors become InputErrors with line and column.
  [[nodiscard]] static nlohmann::json parse_file(const std::string& path);
  // Parses text attributed to `name` (for embedded defaults and tests).
  [[nodiscard]] static nlohmann::json parse_text(std::string_view text, const std::string& name);

  // Returns whether `key` is present; the key counts as allowed in finish()'s message.
  [[nodiscard]] bool has(const std::string& key);
  [[nodiscard]] std::int64_t required_int(const std::string& key, std::int64_t min,
                                          std::int64_t max);
  [[nodiscard]] std::int64_t optional_int(const std::string& key, std::int64_t dflt,
                                          std::int64_t min, std::int64_t max);
  [[nodiscard]] double required_number(const std::string& key, double min, double max);
  [[nodiscard]] double optional_number(const std::string& key, double dflt, double min, double max);
  [[nodiscard]] bool optional_bool(const std::string& key, bool dflt);
  [[nodiscard]] std::string required_string(const std::string& key);
  [[nodiscard]] std::string optional_string(const std::string& key, const std::string& dflt);
  // A string that must be one of `allowed`; the error lists them.
  [[nodiscard]] std::string required_enum(const std::string& key,
                                          const std::vector<std::string>& allowed);
  [[nodiscard]] std::string optional_enum(const std::string& key, const std::string& dflt,
                                          const std::vector<std::string>& allowed);

  // Quantities with units (see units.hpp); a bare number is an error.
  [[nodiscard]] double required_bandwidth(const std::string& key);
  [[nodiscard]] std::optional<double> optional_bandwidth(const std::string& key);
  [[nodiscard]] double required_duration(const std::string& key);
  [[nodiscard]] std::optional<double> optional_duration(const std::string& key);
  [[nodiscard]] double required_size(const std::string& key);
  [[nodiscard]] std::optional<double> optional_size(const std::string& key);
  [[nodiscard]] double required_count(const std::string& key);
  [[nodiscard]] std::optional<double> optional_count(const std::string& key);
  [[nodiscard]] double required_flop_rate(const std::string& key);
  [[nodiscard]] std::optional<double> optional_flop_rate(const std::string& key);
  [[nodiscard]] double required_price(const std::string& key);
  [[nodiscard]] std::optional<double> optional_price(const std::string& key);

  [[nodiscard]] JsonReader object(const std::string& key);
  [[nodiscard]] std::optional<JsonReader> optional_object(const std::string& key);
  // Elements of an array; `min_size` guards empty arrays.
  [[nodiscard]] std::vector<nlohmann::json> array(const std::string& key, size_t min_size = 0);
  [[nodiscard]] std::vector<std::int64_t> int_array(const std::string& key, std::int64_t min,
                                                    std::int64_t max);

  // Checks "schema" equals `schema` exactly.
  void expect_schema(const std::string& schema);
  // Rejects keys that no accessor read.
  void finish() const;

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] std::string pointer_to(const std::string& key) const;
  [[nodiscard]] InputError error(const std::string& key, const std::string& message) const;
  [[nodiscard]] const nlohmann::json& json() const { return *value_; }

 private:
  const nlohmann::json& at(const std::string& key);
  template <typename T>
  std::optional<T> optional_unit(const std::string& key, const char* kind, const char* example,
                                 std::optional<T> (*parse)(std::string_view));

  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
  std::set<std::string> used_;   // keys read: anything else present is rejected
  std::set<std::string> known_;  // keys asked about: listed as allowed too
};

// Describes a JSON value briefly for error messages: 200, "400", an object, an array.
[[nodiscard]] std::string describe_json(const nlohmann::json& value);

// Joins names for an error message: "a, b, c".
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);

}  // namespace capsim
