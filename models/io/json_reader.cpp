#include "models/io/json_reader.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "models/io/units.hpp"

namespace capsim {
namespace {

std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Follows the parser through a document to name a repeated key by its JSON pointer (nlohmann
// keeps the last of two equal keys silently; a strict input has each key once).
class KeyTracker {
 public:
  std::optional<std::string> duplicate;  // the first repeated key's pointer

  void on(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        count_element();
        frames_.push_back({event == Event::array_start, -1, {}, {}});
        break;
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        break;
      case Event::key: {
        Frame& top = frames_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second && !duplicate)
          duplicate = pointer();
        break;
      }
      case Event::value:
        count_element();
        break;
    }
  }

 private:
  struct Frame {
    bool array = false;
    int index = -1;              // arrays: the element being read
    std::set<std::string> keys;  // objects: the keys seen
    std::string key;             // objects: the key being read
  };

  void count_element() {
    if (!frames_.empty() && frames_.back().array)
      ++frames_.back().index;
  }

  [[nodiscard]] std::string pointer() const {
    std::string out;
    for (const Frame& f : frames_)
      out += "/" + (f.array ? std::to_string(f.index) : escape_pointer_token(f.key));
    return out;
  }

  std::vector<Frame> frames_;
};

}  // namespace

std::string describe_json(const nlohmann::json& value) {
  if (value.is_object())
    return "an object";
  if (value.is_array())
    return "an array";
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {
  if (!value.is_object()) {
    throw InputError(file_, pointer_.empty() ? "/" : pointer_,
                     "expected an object, got " + describe_json(value));
  }
}

nlohmann::json JsonReader::parse_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path, "", "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, "", "cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_text(buffer.str(), path);
}

nlohmann::json JsonReader::parse_text(std::string_view text, const std::string& name) {
  KeyTracker keys;
  // capsim's inputs nest a few levels; a deeper document is garbage, and copying or destroying
  // it recursively could overflow the stack (nlohmann's parser itself is not recursive).
  const nlohmann::json::parser_callback_t track =
      [&keys, &name](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (depth > kMaxJsonDepth) {
          throw InputError(
              name, "",
              "invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        }
        keys.on(event, parsed);
        return true;
      };
  try {
    nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), track);
    if (keys.duplicate)
      throw InputError(name, *keys.duplicate, "duplicate key (each key may appear once)");
    return parsed;
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double (1e400): nlohmann reports it as out_of_range.406.
    throw InputError(name, "", std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::parse_error& e) {
    // Translate the byte offset into line and column for the message.
    size_t line = 1;
    size_t column = 1;
    const size_t limit = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (size_t i = 0; i < limit; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw InputError(
        name, "",
        "invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column));
  }
}

std::string JsonReader::pointer_to(const std::string& key) const {
  return pointer_ + "/" + escape_pointer_token(key);
}

InputError JsonReader::error(const std::string& key, const std::string& message) const {
  return {file_, key.empty() ? (pointer_.empty() ? "/" : pointer_) : pointer_to(key), message};
}

bool JsonReader::has(const std::string& key) {
  known_.insert(key);
  return value_->contains(key);
}

const nlohmann::json& JsonReader::at(const std::string& key) {
  used_.insert(key);
  if (!value_->contains(key))
    throw error(key, "missing required key");
  return value_->at(key);
}

std::int64_t JsonReader::required_int(const std::string& key, std::int64_t min, std::int64_t max) {
  const auto& v = at(key);
  if (!v.is_number_integer())
    throw error(key, "expected an integer, got " + describe_json(v));
  const auto value = v.get<std::int64_t>();
  if (value < min || value > max) {
    throw error(key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                         "], got " + std::to_string(value));
  }
  return value;
}

std::int64_t JsonReader::optional_int(const std::string& key, std::int64_t dflt, std::int64_t min,
                                      std::int64_t max) {
  used_.insert(key);
  return has(key) ? required_int(key, min, max) : dflt;
}

double JsonReader::required_number(const std::string& key, double min, double max) {
  const auto& v = at(key);
  if (!v.is_number())
    throw error(key, "expected a number, got " + describe_json(v));
  const auto value = v.get<double>();
  if (!std::isfinite(value) || value < min || value > max) {
    throw error(key, "expected a number in [" + format_number(min) + ", " + format_number(max) +
                         "], got " + describe_json(v));
  }
  return value;
}

double JsonReader::optional_number(const std::string& key, double dflt, double min, double max) {
  used_.insert(key);
  return has(key) ? required_number(key, min, max) : dflt;
}

bool JsonReader::optional_bool(const std::string& key, bool dflt) {
  used_.insert(key);
  if (!has(key))
    return dflt;
  const auto& v = at(key);
  if (!v.is_boolean())
    throw error(key, "expected true or false, got " + describe_json(v));
  return v.get<bool>();
}

std::string JsonReader::required_string(const std::string& key) {
  const auto& v = at(key);
  if (!v.is_string())
    throw error(key, "expected a string, got " + describe_json(v));
  return v.get<std::string>();
}

std::string JsonReader::optional_string(const std::string& key, const std::string& dflt) {
  used_.insert(key);
  return has(key) ? required_string(key) : dflt;
}

std::string JsonReader::required_enum(const std::string& key,
                                      const std::vector<std::string>& allowed) {
  const auto& v = at(key);
  if (v.is_string()) {
    auto s = v.get<std::string>();
    for (const auto& a : allowed) {
      if (a == s)
        return s;
    }
  }
  throw error(key, "expected one of " + join_names(allowed) + ", got " + describe_json(v));
}

std::string JsonReader::optional_enum(const std::string& key, const std::string& dflt,
                                      const std::vector<std::string>& allowed) {
  used_.insert(key);
  return has(key) ? required_enum(key, allowed) : dflt;
}

template <typename T>
std::optional<T> JsonReader::optional_unit(const std::string& key, const char* kind,
                                           const char* example,
                                           std::optional<T> (*parse)(std::string_view)) {
  used_.insert(key);
  if (!has(key))
    return std::nullopt;
  const auto& v = at(key);
  std::optional<T> parsed;
  if (v.is_string())
    parsed = parse(v.get<std::string>());
  if (!parsed) {
    throw error(key, std::string("expected ") + kind + " like \"" + example + "\", got " +
                         describe_json(v));
  }
  return parsed;
}

double JsonReader::required_bandwidth(const std::string& key) {
  (void)at(key);
  return *optional_bandwidth(key);
}
std::optional<double> JsonReader::optional_bandwidth(const std::string& key) {
  const auto value =
      optional_unit<double>(key, "a bandwidth", "200Gbps", units::parse_bandwidth_bytes_per_s);
  // 1 Mb/s .. 100 TB/s: anything outside is a unit slip, and it would break the flow solver.
  if (value && (*value < 125e3 || *value > 1e14)) {
    throw error(key, "expected a bandwidth between 1Mbps and 100TBps, got " +
                         describe_json(value_->at(key)));
  }
  return value;
}
double JsonReader::required_duration(const std::string& key) {
  (void)at(key);
  return *optional_duration(key);
}
std::optional<double> JsonReader::optional_duration(const std::string& key) {
  return optional_unit<double>(key, "a duration", "30d", units::parse_duration_s);
}
double JsonReader::required_size(const std::string& key) {
  (void)at(key);
  return *optional_size(key);
}
std::optional<double> JsonReader::optional_size(const std::string& key) {
  return optional_unit<double>(key, "a size", "25MiB", units::parse_size_bytes);
}
double JsonReader::required_count(const std::string& key) {
  (void)at(key);
  return *optional_count(key);
}
std::optional<double> JsonReader::optional_count(const std::string& key) {
  return optional_unit<double>(key, "a count", "1T", units::parse_count);
}
double JsonReader::required_flop_rate(const std::string& key) {
  (void)at(key);
  return *optional_flop_rate(key);
}
std::optional<double> JsonReader::optional_flop_rate(const std::string& key) {
  const auto value =
      optional_unit<double>(key, "a compute rate", "989TFLOPS", units::parse_flop_per_s);
  // 1 GFLOP/s .. 1 EFLOP/s per GPU: anything outside is a unit slip.
  if (value && (*value < 1e9 || *value > 1e18)) {
    throw error(key, "expected a compute rate between 1GFLOPS and 1000PFLOPS, got " +
                         describe_json(value_->at(key)));
  }
  return value;
}
double JsonReader::required_price(const std::string& key) {
  (void)at(key);
  return *optional_price(key);
}
std::optional<double> JsonReader::optional_price(const std::string& key) {
  const auto value =
      optional_unit<double>(key, "a price", "$32.77/h", units::parse_price_usd_per_hour);
  // A node-hour costs dollars to hundreds of dollars; above $1M/h is a slip, and costs multiply it
  // by node-hours (overflow at $1e308/h).
  if (value && (*value <= 0.0 || *value > 1e6)) {
    throw error(key, "expected a positive price of at most $1000000/h, got " +
                         describe_json(value_->at(key)));
  }
  return value;
}

JsonReader JsonReader::object(const std::string& key) {
  return {at(key), file_, pointer_to(key)};
}

std::optional<JsonReader> JsonReader::optional_object(const std::string& key) {
  used_.insert(key);
  if (!has(key))
    return std::nullopt;
  return object(key);
}

std::vector<nlohmann::json> JsonReader::array(const std::string& key, size_t min_size) {
  const auto& v = at(key);
  if (!v.is_array())
    throw error(key, "expected an array, got " + describe_json(v));
  if (v.size() < min_size) {
    throw error(key, "expected at least " + std::to_string(min_size) + " element(s)");
  }
  return {v.begin(), v.end()};
}

std::vector<std::int64_t> JsonReader::int_array(const std::string& key, std::int64_t min,
                                                std::int64_t max) {
  auto items = array(key, 1);
  std::vector<std::int64_t> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& v = items[i];
    const std::string where = pointer_to(key) + "/" + std::to_string(i);
    if (!v.is_number_integer()) {
      throw InputError(file_, where, "expected an integer, got " + describe_json(v));
    }
    const auto value = v.get<std::int64_t>();
    if (value < min || value > max) {
      throw InputError(file_, where,
                       "expected an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got " + std::to_string(value));
    }
    out.push_back(value);
  }
  return out;
}

void JsonReader::expect_schema(const std::string& schema) {
  const auto& v = at("schema");
  if (!v.is_string() || v.get<std::string>() != schema) {
    throw error("schema", "expected \"" + schema + "\", got " + describe_json(v));
  }
}

void JsonReader::finish() const {
  for (const auto& [key, value] : value_->items()) {
    if (used_.count(key) == 0) {
      std::set<std::string> names = used_;
      names.insert(known_.begin(), known_.end());
      std::vector<std::string> allowed(names.begin(), names.end());
      throw error(key, "unknown key \"" + key + "\"; allowed keys: " + join_names(allowed));
    }
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i > 0 ? ", " : "") + names[i];
  return out;
}

}  // namespace capsim
