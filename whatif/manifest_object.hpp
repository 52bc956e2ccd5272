#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/input_error.hpp"
#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// A strict reader over one object of an autoscaler configuration (a Kubernetes manifest, a Ray
// cluster YAML): typed accessors whose errors name the file and JSON pointer, and keys capsim
// reads but does not model, sorted into notes (cannot change a what-if) and unmodelled keys
// (could). finish() rejects every other key, listing the known ones, so a misspelt key is never
// silently dropped. The JSON it views must outlive it.
class ManifestObject {
 public:
  // Throws InputError when `value` is not an object.
  ManifestObject(const nlohmann::json& value, std::string file, std::string pointer,
                 ConfigReading& out);

  [[nodiscard]] bool has(const std::string& key);
  [[nodiscard]] const nlohmann::json& at(const std::string& key);
  [[nodiscard]] std::string string(const std::string& key);
  [[nodiscard]] std::optional<std::string> optional_string(const std::string& key);
  [[nodiscard]] std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max);
  [[nodiscard]] std::optional<std::int64_t> optional_integer(const std::string& key,
                                                             std::int64_t min, std::int64_t max);
  // A number, or a string holding one (Kubernetes quantities and rayStartParams are strings).
  [[nodiscard]] double number(const std::string& key, double min, double max);
  [[nodiscard]] std::optional<bool> optional_bool(const std::string& key);
  [[nodiscard]] ManifestObject object(const std::string& key);
  [[nodiscard]] std::optional<ManifestObject> optional_object(const std::string& key);
  [[nodiscard]] std::vector<nlohmann::json> array(const std::string& key);
  // A Go duration ("90s", "10m"; io/go_duration.hpp).
  [[nodiscard]] double go_duration(const std::string& key);

  // Keys present here that capsim does not model: a note each (no_effect) or an unmodelled
  // problem each (unmodelled), with `why`.
  void no_effect(const std::vector<std::string>& keys, const std::string& why);
  void unmodelled(const std::vector<std::string>& keys, const std::string& why);
  // Every present key not yet read or sorted, as one note (labels, pod templates, credentials).
  void rest_no_effect(const std::string& why);
  // Throws InputError for the first key not read nor sorted, listing the known keys.
  void finish();

  [[nodiscard]] io::InputError error(const std::string& key, const std::string& message) const;
  [[nodiscard]] std::string pointer_to(const std::string& key) const;
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] const nlohmann::json& json() const { return *value_; }
  [[nodiscard]] ConfigReading& out() { return *out_; }

 private:
  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
  ConfigReading* out_;
  std::set<std::string> known_;
  std::set<std::string> read_;
};

}  // namespace capsim::whatif
