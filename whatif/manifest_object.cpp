#include "whatif/manifest_object.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "io/go_duration.hpp"
#include "io/json_reader.hpp"

namespace capsim::whatif {

ManifestObject::ManifestObject(const nlohmann::json& value, std::string file, std::string pointer,
                               ConfigReading& out)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)), out_(&out) {
  if (!value.is_object()) {
    throw io::InputError(file_, pointer_, "expected an object, got " + io::describe_json(value));
  }
}

std::string ManifestObject::pointer_to(const std::string& key) const {
  return pointer_ + "/" + io::json_pointer_token(key);
}

io::InputError ManifestObject::error(const std::string& key, const std::string& message) const {
  return {file_, key.empty() ? pointer_ : pointer_to(key), message};
}

bool ManifestObject::has(const std::string& key) {
  known_.insert(key);
  return value_->contains(key);
}

const nlohmann::json& ManifestObject::at(const std::string& key) {
  if (!has(key))
    throw error("", "missing key \"" + key + "\"");
  read_.insert(key);
  return value_->at(key);
}

std::string ManifestObject::string(const std::string& key) {
  const auto& v = at(key);
  if (!v.is_string())
    throw error(key, "expected a string, got " + io::describe_json(v));
  return v.get<std::string>();
}

std::optional<std::string> ManifestObject::optional_string(const std::string& key) {
  if (!has(key))
    return std::nullopt;
  return string(key);
}

std::int64_t ManifestObject::integer(const std::string& key, std::int64_t min, std::int64_t max) {
  const auto& v = at(key);
  std::int64_t n = 0;
  if (v.is_number_integer()) {
    n = v.get<std::int64_t>();
  } else if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      throw error(key, "expected an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got " + io::describe_json(v));
    n = static_cast<std::int64_t>(v.get<std::uint64_t>());
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const auto res = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || res.ec != std::errc() || res.ptr != s.data() + s.size())
      throw error(key, "expected an integer, got " + io::describe_json(v));
  } else {
    throw error(key, "expected an integer, got " + io::describe_json(v));
  }
  if (n < min || n > max) {
    throw error(key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                         "], got " + io::describe_json(v));
  }
  return n;
}

std::optional<std::int64_t> ManifestObject::optional_integer(const std::string& key,
                                                             std::int64_t min, std::int64_t max) {
  if (!has(key))
    return std::nullopt;
  return integer(key, min, max);
}

double ManifestObject::number(const std::string& key, double min, double max) {
  const auto& v = at(key);
  double x = std::numeric_limits<double>::quiet_NaN();
  if (v.is_number()) {
    x = v.get<double>();
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    double parsed = 0.0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), parsed);
    if (!s.empty() && res.ec == std::errc() && res.ptr == s.data() + s.size())
      x = parsed;
  }
  if (!std::isfinite(x) || x < min || x > max) {
    throw error(key, "expected a number in [" + io::describe_json(min) + ", " +
                         io::describe_json(max) + "], got " + io::describe_json(v));
  }
  return x;
}

std::optional<bool> ManifestObject::optional_bool(const std::string& key) {
  if (!has(key))
    return std::nullopt;
  const auto& v = at(key);
  if (!v.is_boolean())
    throw error(key, "expected true or false, got " + io::describe_json(v));
  return v.get<bool>();
}

ManifestObject ManifestObject::object(const std::string& key) {
  return {at(key), file_, pointer_to(key), *out_};
}

std::optional<ManifestObject> ManifestObject::optional_object(const std::string& key) {
  if (!has(key))
    return std::nullopt;
  return object(key);
}

std::vector<nlohmann::json> ManifestObject::array(const std::string& key) {
  const auto& v = at(key);
  if (!v.is_array())
    throw error(key, "expected an array, got " + io::describe_json(v));
  return {v.begin(), v.end()};
}

double ManifestObject::go_duration(const std::string& key) {
  const auto& v = at(key);
  const auto s = v.is_string() ? io::parse_go_duration(v.get<std::string>()) : std::nullopt;
  if (!s)
    throw error(key, "expected a Go duration like \"90s\", \"10m\" or \"1h30m\", got " +
                         io::describe_json(v));
  return *s;
}

void ManifestObject::no_effect(const std::vector<std::string>& keys, const std::string& why) {
  for (const auto& k : keys) {
    if (has(k) && read_.insert(k).second)
      out_->notes.push_back({file_, pointer_to(k), "not modelled: " + why});
  }
}

void ManifestObject::unmodelled(const std::vector<std::string>& keys, const std::string& why) {
  for (const auto& k : keys) {
    if (has(k) && read_.insert(k).second)
      out_->unmodelled.push_back({file_, pointer_to(k), "not modelled: " + why});
  }
}

void ManifestObject::rest_no_effect(const std::string& why) {
  std::string keys;
  for (const auto& [k, v] : value_->items()) {
    if (read_.insert(k).second)
      keys += (keys.empty() ? "" : ", ") + k;
  }
  if (!keys.empty())
    out_->notes.push_back({file_, pointer_, "not modelled (" + keys + "): " + why});
}

void ManifestObject::finish() {
  for (const auto& [k, v] : value_->items()) {
    if (read_.count(k) == 0) {
      throw error(k, "unknown key \"" + k +
                         "\"; known keys: " + io::join_names({known_.begin(), known_.end()}));
    }
  }
}

}  // namespace capsim::whatif
