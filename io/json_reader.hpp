#pragma once

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/input_error.hpp"

namespace capsim::io {

// Deepest nesting any input may have (capsim's documents nest a few levels).
inline constexpr int kMaxJsonDepth = 64;

// Most key problems one InputError lists; the rest are counted in a last line.
inline constexpr std::size_t kMaxReportedProblems = 50;

namespace detail {
struct KeyProblemLog;  // the key problems of one document, shared by its readers
}  // namespace detail

// Strict reader over one JSON object of an input file. Every accessor records the key it read;
// finish() rejects keys nobody read and lists the allowed ones. Key problems (unknown and missing
// keys) are gathered over the whole document and reported together, each with its JSON pointer:
// a missing required key yields a stand-in value within the accessor's range (the value of a
// key that misspells it, when one does) so that reading goes on; the root reader's finish()
// throws them all, and any other error raised meanwhile (which may stem from a stand-in) gives
// way to them. Other errors are InputErrors naming the file and the JSON pointer. Not
// thread-safe; the JSON it views must outlive it.
class JsonReader {
 public:
  // A document's root reader. REQUIRES: value outlives the reader. Throws InputError when value
  // is not an object.
  JsonReader(const nlohmann::json& value, std::string file, std::string pointer = "");
  // A reader of `value` inside the document `parent` reads (an array element at `pointer`),
  // sharing its key problems.
  JsonReader(const nlohmann::json& value, const JsonReader& parent, std::string pointer);
  // A temporary would not outlive the reader.
  JsonReader(nlohmann::json&& value, std::string file, std::string pointer = "") = delete;
  JsonReader(nlohmann::json&& value, const JsonReader& parent, std::string pointer) = delete;

  // Reads the file at `path` (read_input_file) and parses it; syntax errors become InputErrors
  // with line and column, a NUL byte or invalid UTF-8 ones with the JSON pointer reached too.
  [[nodiscard]] static nlohmann::json parse_file(const std::string& path);
  // Parses text attributed to `name` (for embedded defaults and tests).
  [[nodiscard]] static nlohmann::json parse_text(std::string_view text, const std::string& name);

  // Reads `doc` with `read(JsonReader& root)` and returns its result. Throws every key problem
  // of the document at once; an error raised after a key problem gives way to the key problems.
  template <typename Read>
  static auto read_document(const nlohmann::json& doc, const std::string& file, Read&& read,
                            std::string pointer = "");

  // Returns whether `key` is present; the key counts as allowed in finish()'s message.
  [[nodiscard]] bool has(const std::string& key);
  // Returns whether `key` is present and null, marking it read: for keys where null means
  // "none" (an MLA model's q_lora_rank).
  [[nodiscard]] bool take_null(const std::string& key);
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

  // Quantities with units (see units.hpp); a bare number is an error, and so is one beyond the
  // kind's limit (units.hpp).
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
  // Keys naming a feature capsim does not model yet (key -> the feature): finish() says so
  // instead of calling them unknown.
  void note_unsupported(std::initializer_list<std::pair<const char*, const char*>> keys);
  // Records the keys that no accessor read as problems ("did you mean" for near misses); the
  // root reader then throws every key problem of the document.
  void finish();
  // Throws the key problems recorded so far in the document, if any (before checks across
  // sections or files, and before anything that outlives the reading).
  void throw_key_problems() const;

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] std::string pointer_to(const std::string& key) const;
  // An error at `key` ("": this object), after the key problems recorded so far (alone when a
  // stand-in for a missing key may have caused it).
  [[nodiscard]] InputError error(const std::string& key, const std::string& message) const;
  // `error` after the key problems recorded so far (alone when a stand-in may have caused it).
  [[nodiscard]] InputError with_key_problems(const InputError& error) const;
  // Inside a catch block: rethrows the exception being handled after the key problems recorded
  // so far, or the key problems alone when a stand-in may have caused it.
  [[noreturn]] void rethrow_with_key_problems() const;
  [[nodiscard]] const nlohmann::json& json() const { return *value_; }
  // Describes the value at `key` for a message (describe_json); a required key that is missing
  // has a stand-in that later checks may still reject, so it is named as missing instead.
  [[nodiscard]] std::string describe(const std::string& key) const;

 private:
  struct Absent {};  // stands in for a missing object
  JsonReader(Absent, const JsonReader& parent, std::string pointer);

  // The value of `key`, which require() or note_key() has marked read.
  const nlohmann::json& at(const std::string& key) const;
  // Marks `key` read; returns false after recording it as missing.
  bool require(const std::string& key);
  // A key nobody has read yet that misspells `key`, the closest one.
  [[nodiscard]] std::optional<std::string> unread_near_miss(const std::string& key) const;
  // The value of the key that misspells the missing `key`, or nullptr.
  [[nodiscard]] const nlohmann::json* misspelt_value(const std::string& key) const;
  // The stand-in for the missing `key`: what `read` makes of its misspelling's value, else dflt.
  template <typename T, typename Read>
  T stand_in(const std::string& key, T dflt, Read read) const;
  void settle_misspellings();
  template <typename T>
  std::optional<T> optional_unit(const std::string& key, const char* kind, const char* example,
                                 std::optional<T> (*parse)(std::string_view));

  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
  std::shared_ptr<detail::KeyProblemLog> problems_;
  bool is_root_ = true;
  bool is_absent_ = false;  // a missing object: its own key problems are not reported
  // Marks `key` read (`read`) or asked about and returns its value, or nullptr when absent: a
  // present key is marked by its value's address in the object, an absent one by its name, kept
  // for messages only (a reader asks about dozens of keys, most absent, and copies no name into
  // a node of its own).
  const nlohmann::json* note_key(const std::string& key, bool read);
  [[nodiscard]] bool was_read(const nlohmann::json& value) const;
  [[nodiscard]] bool was_asked(const nlohmann::json& value) const;
  // Every key read or asked about, present or not: the allowed keys of finish()'s messages.
  [[nodiscard]] std::set<std::string> allowed_names() const;

  std::vector<const nlohmann::json*> read_;  // present keys read: anything else present is rejected
  std::vector<const nlohmann::json*> asked_;  // present keys asked about: allowed too
  std::string absent_names_;                  // absent keys read or asked about, one after another
  std::vector<std::pair<std::size_t, std::size_t>> absent_spans_;  // (offset, length) of each
  std::set<std::string> missing_;                                  // required keys absent here
  std::map<std::string, std::string> misspelt_;     // key present -> the missing key it misspells
  std::map<std::string, std::string> unsupported_;  // key -> feature not modelled yet
};

// Escapes a key as a JSON pointer token (RFC 6901 §3: "~" as "~0", "/" as "~1").
[[nodiscard]] std::string json_pointer_token(std::string_view key);

// Describes a JSON value briefly for error messages: 200, "400", an object, an array.
[[nodiscard]] std::string describe_json(const nlohmann::json& value);

// Joins names for an error message: "a, b, c".
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);

template <typename Read>
auto JsonReader::read_document(const nlohmann::json& doc, const std::string& file, Read&& read,
                               std::string pointer) {
  JsonReader root(doc, file, std::move(pointer));
  try {
    if constexpr (std::is_void_v<decltype(read(root))>) {
      read(root);
      root.throw_key_problems();
    } else {
      auto result = read(root);
      root.throw_key_problems();
      return result;
    }
  } catch (const std::exception&) {
    root.rethrow_with_key_problems();
  }
}

}  // namespace capsim::io
