#include "io/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "models/byte_units.hpp"

#include "io/input_file.hpp"
#include "io/text_check.hpp"
#include "io/units.hpp"

namespace capsim::io {

namespace detail {

// The key problems of one document, in the order they were found; a missing key found to be a
// misspelt one is replaced in place by the misspelling.
struct KeyProblemLog {
  std::vector<InputProblem> problems;
  std::size_t dropped = 0;    // beyond kMaxReportedProblems
  std::size_t stand_ins = 0;  // values returned for missing required keys

  void add(InputProblem problem) {
    if (problems.size() < kMaxReportedProblems) {
      problems.push_back(std::move(problem));
    } else {
      ++dropped;
    }
  }

  [[nodiscard]] bool empty() const { return problems.empty(); }

  // Whether `error` is (or starts with) these key problems.
  [[nodiscard]] bool reported_in(const InputError& error) const {
    const auto& theirs = error.problems();
    return theirs.size() >= problems.size() &&
           std::equal(problems.begin(), problems.end(), theirs.begin(),
                      [](const InputProblem& a, const InputProblem& b) {
                        return a.file == b.file && a.pointer == b.pointer && a.message == b.message;
                      });
  }

  // The key problems, then `next` unless a stand-in may have caused it (with none, every value
  // read is the file's own); `next` itself when it already holds them.
  [[nodiscard]] InputError error(const InputError* next = nullptr) const {
    if (next != nullptr && reported_in(*next))
      return *next;
    std::vector<InputProblem> all = problems;
    if (dropped > 0) {
      all.push_back(
          {problems.front().file, "", "and " + std::to_string(dropped) + " more key problem(s)"});
    }
    if (next != nullptr && stand_ins == 0)
      all.insert(all.end(), next->problems().begin(), next->problems().end());
    return InputError(std::move(all));
  }
};

}  // namespace detail

namespace {

constexpr const char* kMissing = "missing required key";

// What a reader of a missing object views.
const nlohmann::json& empty_object() {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return kEmpty;
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Edit distance with adjacent transpositions counted once (optimal string alignment; Damerau
// 1964): "num_atention_heads" is 1 from "num_attention_heads", "hieght" 1 from "height".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

// The name among `names` that `key` most likely misspells: at most one edit away for names of
// three to five letters, two for longer ones, none for shorter (so "min" never suggests "max",
// nor "y" "x"); ties go to the first name.
std::optional<std::string> near_miss(const std::string& key, const std::set<std::string>& names) {
  if (key.size() > 64)
    return std::nullopt;
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& name : names) {
    const std::size_t shorter = std::min(key.size(), name.size());
    const std::size_t limit = shorter < 3 ? 0 : shorter <= 5 ? 1 : 2;
    const std::size_t length_gap =
        key.size() > name.size() ? key.size() - name.size() : name.size() - key.size();
    if (length_gap > limit)
      continue;  // at least that many edits apart
    const std::size_t distance = edit_distance(key, name);
    if (distance > 0 && distance <= limit && distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& key, const std::string& name) {
  return "unknown key \"" + key + "\"; did you mean \"" + name + "\"?";
}

// Follows the parser through a document to name a repeated key by its JSON pointer (nlohmann
// keeps the last of two equal keys silently; a strict input has each key once), and to name
// where a document that stops early stopped.
class KeyTracker {
 public:
  std::optional<std::string> duplicate;  // the first repeated key's pointer

  void on(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    after_key_ = false;
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
          duplicate = pointer(frames_.size());
        after_key_ = true;
        break;
      }
      case Event::value:
        count_element();
        break;
    }
  }

  // The pointer of the value the parser was reading when the text ended: the key just read,
  // the next element of an array, else the object it is in ("" outside the document).
  [[nodiscard]] std::string position() const {
    if (frames_.empty())
      return "";
    const Frame& top = frames_.back();
    std::string out = pointer(frames_.size() - 1);
    if (top.array)
      return out + "/" + std::to_string(top.index + 1);
    return after_key_ ? out + "/" + json_pointer_token(top.key) : (out.empty() ? "/" : out);
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

  // The pointer through the first `depth` frames.
  [[nodiscard]] std::string pointer(std::size_t depth) const {
    std::string out;
    for (std::size_t i = 0; i < depth; ++i) {
      const Frame& f = frames_[i];
      out += "/" + (f.array ? std::to_string(f.index) : json_pointer_token(f.key));
    }
    return out;
  }

  std::vector<Frame> frames_;
  bool after_key_ = false;
};

nlohmann::json::parser_callback_t tracking(KeyTracker& keys, const std::string& name) {
  // capsim's inputs nest a few levels; a deeper document is garbage, and copying or destroying
  // it recursively could overflow the stack (nlohmann's parser itself is not recursive).
  return [&keys, &name](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth > kMaxJsonDepth) {
      throw InputError(
          name, "",
          "invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    keys.on(event, parsed);
    return true;
  };
}

// Rejects a NUL byte (the parser would end the document there and ignore the rest) and invalid
// UTF-8 (names are echoed into JSON output); the pointer is where the parser got to.
void check_text(std::string_view text, const std::string& name) {
  const auto fault = find_text_fault(text);
  if (!fault)
    return;
  KeyTracker keys;
  try {
    const nlohmann::json prefix = nlohmann::json::parse(
        text.begin(), text.begin() + static_cast<std::ptrdiff_t>(fault->offset),
        tracking(keys, name));
  } catch (const std::exception&) {
    // The text stops at the fault; only where the parser got to matters.
  }
  const TextPosition at = text_position(text, fault->offset);
  throw InputError(name, keys.position(),
                   fault->problem + " at line " + std::to_string(at.line) + ", column " +
                       std::to_string(at.column) + "; inputs are UTF-8 text without NUL bytes");
}

}  // namespace

std::string describe_json(const nlohmann::json& value) {
  if (value.is_object())
    return "an object";
  if (value.is_array())
    return "an array";
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return text;
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(&value),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      problems_(std::make_shared<detail::KeyProblemLog>()) {
  if (!value.is_object()) {
    throw InputError(file_, pointer_.empty() ? "/" : pointer_,
                     "expected an object, got " + describe_json(value));
  }
}

JsonReader::JsonReader(const nlohmann::json& value, const JsonReader& parent, std::string pointer)
    : value_(&value),
      file_(parent.file_),
      pointer_(std::move(pointer)),
      problems_(parent.problems_),
      is_root_(false),
      is_absent_(parent.is_absent_) {
  if (!value.is_object())
    throw parent.with_key_problems(
        InputError(file_, pointer_, "expected an object, got " + describe_json(value)));
}

JsonReader::JsonReader(Absent /*absent*/, const JsonReader& parent, std::string pointer)
    : JsonReader(empty_object(), parent, std::move(pointer)) {
  is_absent_ = true;
}

std::string json_pointer_token(std::string_view key) {
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

nlohmann::json JsonReader::parse_file(const std::string& path) {
  return parse_text(read_input_file(path, InputKind::kJson), path);
}

nlohmann::json JsonReader::parse_text(std::string_view text, const std::string& name) {
  check_text(text, name);
  KeyTracker keys;
  try {
    nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), tracking(keys, name));
    if (keys.duplicate)
      throw InputError(name, *keys.duplicate, "duplicate key (each key may appear once)");
    return parsed;
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double (1e400): nlohmann reports it as out_of_range.406.
    throw InputError(name, "", std::string("invalid JSON: ") + e.what());
  } catch (const nlohmann::json::parse_error& e) {
    const TextPosition at = text_position(text, e.byte > 0 ? e.byte - 1 : 0);
    throw InputError(name, "",
                     "invalid JSON at line " + std::to_string(at.line) + ", column " +
                         std::to_string(at.column));
  }
}

std::string JsonReader::pointer_to(const std::string& key) const {
  return pointer_ + "/" + json_pointer_token(key);
}

InputError JsonReader::error(const std::string& key, const std::string& message) const {
  return with_key_problems(InputError(
      file_, key.empty() ? (pointer_.empty() ? "/" : pointer_) : pointer_to(key), message));
}

InputError JsonReader::with_key_problems(const InputError& error) const {
  return problems_->empty() ? error : problems_->error(&error);
}

void JsonReader::throw_key_problems() const {
  if (!problems_->empty())
    throw problems_->error();
}

void JsonReader::rethrow_with_key_problems() const {
  if (problems_->empty())
    throw;
  try {
    throw;
  } catch (const InputError& e) {
    throw problems_->error(&e);
  } catch (const std::exception&) {
    if (problems_->stand_ins == 0)
      throw;
    throw problems_->error();
  }
}

const nlohmann::json* JsonReader::note_key(const std::string& key, bool read) {
  const auto it = value_->find(key);
  if (it == value_->end()) {
    absent_spans_.emplace_back(absent_names_.size(), key.size());
    absent_names_ += key;
    return nullptr;
  }
  const nlohmann::json* value = &*it;
  std::vector<const nlohmann::json*>& marks = read ? read_ : asked_;
  if (std::find(marks.begin(), marks.end(), value) == marks.end())
    marks.push_back(value);
  return value;
}

bool JsonReader::was_read(const nlohmann::json& value) const {
  return std::find(read_.begin(), read_.end(), &value) != read_.end();
}

bool JsonReader::was_asked(const nlohmann::json& value) const {
  return std::find(asked_.begin(), asked_.end(), &value) != asked_.end();
}

std::set<std::string> JsonReader::allowed_names() const {
  std::set<std::string> names;
  for (const auto& [key, value] : value_->items()) {
    if (was_read(value) || was_asked(value))
      names.insert(key);
  }
  for (const auto& [offset, length] : absent_spans_)
    names.insert(absent_names_.substr(offset, length));
  return names;
}

bool JsonReader::has(const std::string& key) {
  return note_key(key, false) != nullptr;
}

bool JsonReader::take_null(const std::string& key) {
  const nlohmann::json* value = note_key(key, false);
  if (value == nullptr || !value->is_null())
    return false;
  note_key(key, true);
  return true;
}

bool JsonReader::require(const std::string& key) {
  if (note_key(key, true) != nullptr)
    return true;
  ++problems_->stand_ins;
  missing_.insert(key);
  if (is_absent_)
    return false;
  // A key nobody has read that misspells this one is reported as the misspelling, and its
  // value stands in for the missing one (so the checks that follow judge the file's value).
  if (const auto typo = unread_near_miss(key)) {
    misspelt_[*typo] = key;
    problems_->add({file_, pointer_to(*typo), did_you_mean(*typo, key)});
  } else {
    problems_->add({file_, pointer_to(key), kMissing});
  }
  return false;
}

std::optional<std::string> JsonReader::unread_near_miss(const std::string& key) const {
  std::set<std::string> unread;
  for (const auto& [name, value] : value_->items()) {
    if (!was_read(value) && !was_asked(value) && misspelt_.count(name) == 0 &&
        unsupported_.count(name) == 0) {
      unread.insert(name);
    }
  }
  // `key` may misspell several of them; the closest is the one meant.
  std::optional<std::string> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& name : unread) {
    if (near_miss(name, {key}) && edit_distance(name, key) < best_distance) {
      best = name;
      best_distance = edit_distance(name, key);
    }
  }
  return best;
}

const nlohmann::json* JsonReader::misspelt_value(const std::string& key) const {
  for (const auto& [typo, intended] : misspelt_) {
    if (intended == key)
      return &value_->at(typo);
  }
  return nullptr;
}

template <typename T, typename Read>
T JsonReader::stand_in(const std::string& key, T dflt, Read read) const {
  const nlohmann::json* value = misspelt_value(key);
  if (value == nullptr)
    return dflt;
  nlohmann::json holder = nlohmann::json::object();
  holder[key] = *value;
  JsonReader probe(holder, file_, pointer_);
  try {
    return read(probe);
  } catch (const InputError&) {
    return dflt;  // the misspelt key's value is no good either: the default stand-in
  }
}

const nlohmann::json& JsonReader::at(const std::string& key) const {
  return value_->at(key);
}

std::int64_t JsonReader::required_int(const std::string& key, std::int64_t min, std::int64_t max) {
  if (!require(key))
    return stand_in(key, min, [&](JsonReader& r) { return r.required_int(key, min, max); });
  const auto& v = at(key);
  if (!v.is_number_integer())
    throw error(key, "expected an integer, got " + describe_json(v));
  // An unsigned value beyond int64 would wrap to a negative one.
  const bool beyond_int64 =
      v.is_number_unsigned() &&
      v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const auto value =
      beyond_int64 ? std::numeric_limits<std::int64_t>::max() : v.get<std::int64_t>();
  if (beyond_int64 || value < min || value > max) {
    throw error(key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                         "], got " + describe_json(v));
  }
  return value;
}

std::int64_t JsonReader::optional_int(const std::string& key, std::int64_t dflt, std::int64_t min,
                                      std::int64_t max) {
  return note_key(key, true) != nullptr ? required_int(key, min, max) : dflt;
}

double JsonReader::required_number(const std::string& key, double min, double max) {
  if (!require(key))
    return stand_in(key, min, [&](JsonReader& r) { return r.required_number(key, min, max); });
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
  return note_key(key, true) != nullptr ? required_number(key, min, max) : dflt;
}

bool JsonReader::optional_bool(const std::string& key, bool dflt) {
  const nlohmann::json* found = note_key(key, true);
  if (found == nullptr)
    return dflt;
  const auto& v = *found;
  if (!v.is_boolean())
    throw error(key, "expected true or false, got " + describe_json(v));
  return v.get<bool>();
}

std::string JsonReader::required_string(const std::string& key) {
  if (!require(key))
    return stand_in(key, std::string(), [&](JsonReader& r) { return r.required_string(key); });
  const auto& v = at(key);
  if (!v.is_string())
    throw error(key, "expected a string, got " + describe_json(v));
  return v.get<std::string>();
}

std::string JsonReader::optional_string(const std::string& key, const std::string& dflt) {
  return note_key(key, true) != nullptr ? required_string(key) : dflt;
}

std::string JsonReader::required_enum(const std::string& key,
                                      const std::vector<std::string>& allowed) {
  if (!require(key)) {
    return stand_in(key, allowed.empty() ? std::string() : allowed.front(),
                    [&](JsonReader& r) { return r.required_enum(key, allowed); });
  }
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
  return note_key(key, true) != nullptr ? required_enum(key, allowed) : dflt;
}

template <typename T>
std::optional<T> JsonReader::optional_unit(const std::string& key, const char* kind,
                                           const char* example,
                                           std::optional<T> (*parse)(std::string_view)) {
  const nlohmann::json* found = note_key(key, true);
  if (found == nullptr)
    return std::nullopt;
  const auto& v = *found;
  std::optional<T> parsed;
  if (v.is_string())
    parsed = parse(v.get<std::string>());
  if (!parsed) {
    throw error(key, std::string("expected ") + kind + " like \"" + example + "\", got " +
                         describe_json(v));
  }
  return parsed;
}

// Stand-ins for missing required quantities: inside every range the readers check.
double JsonReader::required_bandwidth(const std::string& key) {
  if (!require(key))
    return stand_in(key, 100e9, [&](JsonReader& r) { return r.required_bandwidth(key); });
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
  if (!require(key))
    return stand_in(key, 3600.0, [&](JsonReader& r) { return r.required_duration(key); });
  return *optional_duration(key);
}
std::optional<double> JsonReader::optional_duration(const std::string& key) {
  const auto value = optional_unit<double>(key, "a duration", "30d", units::parse_duration_s);
  if (value && *value > units::kMaxDurationS) {
    throw error(key, "expected a duration of at most \"1e12s\" (about 31,700 years), got " +
                         describe_json(value_->at(key)));
  }
  return value;
}
double JsonReader::required_size(const std::string& key) {
  if (!require(key)) {
    return stand_in(key, kGiB, [&](JsonReader& r) { return r.required_size(key); });
  }
  return *optional_size(key);
}
std::optional<double> JsonReader::optional_size(const std::string& key) {
  const auto value = optional_unit<double>(key, "a size", "25MiB", units::parse_size_bytes);
  if (value && *value > units::kMaxSizeBytes) {
    throw error(key, "expected a size of at most \"1e18B\", got " + describe_json(value_->at(key)));
  }
  return value;
}
double JsonReader::required_count(const std::string& key) {
  if (!require(key))
    return stand_in(key, 1.0, [&](JsonReader& r) { return r.required_count(key); });
  return *optional_count(key);
}
std::optional<double> JsonReader::optional_count(const std::string& key) {
  const auto value = optional_unit<double>(key, "a count", "1T", units::parse_count);
  if (value && *value > units::kMaxCount) {
    throw error(key, "expected a count of at most \"1e18\", got " + describe_json(value_->at(key)));
  }
  return value;
}
double JsonReader::required_flop_rate(const std::string& key) {
  if (!require(key))
    return stand_in(key, 1e12, [&](JsonReader& r) { return r.required_flop_rate(key); });
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
  if (!require(key))
    return stand_in(key, 1.0, [&](JsonReader& r) { return r.required_price(key); });
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
  if (!require(key)) {
    // A misspelt object is read where it stands, so its own problems are found too.
    for (const auto& [typo, intended] : misspelt_) {
      if (intended == key && value_->at(typo).is_object())
        return {value_->at(typo), *this, pointer_to(typo)};
    }
    return {Absent{}, *this, pointer_to(key)};
  }
  return {at(key), *this, pointer_to(key)};
}

std::optional<JsonReader> JsonReader::optional_object(const std::string& key) {
  if (note_key(key, true) == nullptr)
    return std::nullopt;
  return object(key);
}

std::vector<nlohmann::json> JsonReader::array(const std::string& key, size_t min_size) {
  // A missing array stands in as nulls: readers stop at its first element's type error.
  if (!require(key))
    return std::vector<nlohmann::json>(min_size);
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
  if (!require(key))
    return stand_in(key, std::vector<std::int64_t>{min},
                    [&](JsonReader& r) { return r.int_array(key, min, max); });
  const auto items = array(key, 1);
  std::vector<std::int64_t> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& v = items[i];
    const std::string where = pointer_to(key) + "/" + std::to_string(i);
    const bool beyond_int64 =
        v.is_number_unsigned() &&
        v.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!v.is_number_integer())
      throw with_key_problems(
          InputError(file_, where, "expected an integer, got " + describe_json(v)));
    const auto value = beyond_int64 ? max : v.get<std::int64_t>();
    if (beyond_int64 || value < min || value > max) {
      throw with_key_problems(InputError(file_, where,
                                         "expected an integer in [" + std::to_string(min) + ", " +
                                             std::to_string(max) + "], got " + describe_json(v)));
    }
    out.push_back(value);
  }
  return out;
}

void JsonReader::expect_schema(const std::string& schema) {
  if (!require("schema"))
    return;
  const auto& v = at("schema");
  if (!v.is_string() || v.get<std::string>() != schema) {
    throw error("schema", "expected \"" + schema + "\", got " + describe_json(v));
  }
}

void JsonReader::note_unsupported(std::initializer_list<std::pair<const char*, const char*>> keys) {
  for (const auto& [key, feature] : keys)
    unsupported_[key] = feature;
}

// Settles the misspellings once the object is read through: a key taken for a misspelling that
// was read after all is a key of its own, and the required key it seemed to misspell is missing;
// a key only asked about (has) that nobody read may misspell a missing key too.
void JsonReader::settle_misspellings() {
  auto& log = problems_->problems;
  const auto replace = [&](const std::string& pointer, const std::string& message,
                           InputProblem with) {
    const auto entry = std::find_if(log.begin(), log.end(), [&](const InputProblem& p) {
      return p.pointer == pointer && p.message == message;
    });
    if (entry != log.end())
      *entry = std::move(with);
  };
  for (auto it = misspelt_.begin(); it != misspelt_.end();) {
    if (!was_read(value_->at(it->first))) {
      ++it;
      continue;
    }
    replace(pointer_to(it->first), did_you_mean(it->first, it->second),
            {file_, pointer_to(it->second), kMissing});
    it = misspelt_.erase(it);
  }
  std::set<std::string> unexplained;
  for (const std::string& key : missing_) {
    if (std::none_of(misspelt_.begin(), misspelt_.end(),
                     [&](const auto& m) { return m.second == key; })) {
      unexplained.insert(key);
    }
  }
  for (const auto& [key, value] : value_->items()) {
    if (was_read(value) || misspelt_.count(key) > 0 || unsupported_.count(key) > 0)
      continue;
    if (const auto name = near_miss(key, unexplained)) {
      replace(pointer_to(*name), kMissing, {file_, pointer_to(key), did_you_mean(key, *name)});
      misspelt_[key] = *name;
      unexplained.erase(*name);
    }
  }
}

void JsonReader::finish() {
  if (!is_absent_) {
    settle_misspellings();
    std::set<std::string> names;  // the allowed keys, gathered at the first key outside them
    for (const auto& [key, value] : value_->items()) {
      if (was_read(value) || misspelt_.count(key) > 0)
        continue;
      if (names.empty())
        names = allowed_names();
      const auto feature = unsupported_.find(key);
      if (feature != unsupported_.end()) {
        problems_->add({file_, pointer_to(key),
                        "capsim does not model " + feature->second + " yet (\"" + key +
                            "\" is reserved for it)"});
      } else if (const auto name = near_miss(key, names)) {
        problems_->add({file_, pointer_to(key), did_you_mean(key, *name)});
      } else {
        const std::vector<std::string> allowed(names.begin(), names.end());
        problems_->add({file_, pointer_to(key),
                        "unknown key \"" + key + "\"; allowed keys: " + join_names(allowed)});
      }
    }
  }
  if (is_root_)
    throw_key_problems();
}

std::string JsonReader::describe(const std::string& key) const {
  return value_->contains(key) ? describe_json(value_->at(key)) : "no \"" + key + "\"";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i > 0 ? ", " : "") + names[i];
  return out;
}

}  // namespace capsim::io
