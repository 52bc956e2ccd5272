#include "io/yaml_document.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "io/input_error.hpp"
#include "io/input_file.hpp"
#include "io/json_reader.hpp"
#include "io/text_check.hpp"
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace capsim::io {

namespace {

std::string at_mark(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// yaml-cpp 0.7 (Debian 12's) loops forever, allocating, on a document that starts with a token
// no node begins with ("," or "--- ,"; yaml-cpp issue #1040, fixed upstream by its pull request
// #1319): the parser reports a null document without consuming the token, again and again. A
// first pass over the parser's events stops at the first document that starts where the one
// before it did, which no terminating stream has (each document consumes some text).
class DocumentProgressCheck : public YAML::EventHandler {
 public:
  DocumentProgressCheck(std::string_view text, const std::string& name)
      : text_(text), name_(name) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (previous_start_ && *previous_start_ == mark.pos) {
      const std::size_t at = static_cast<std::size_t>(std::max(0, mark.pos));
      const std::string token = at < text_.size() ? std::string(1, text_[at]) : "end of input";
      throw InputError(
          name_, "", "invalid YAML at " + at_mark(mark) + ": no node starts with '" + token + "'");
    }
    previous_start_ = mark.pos;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  std::string_view text_;
  const std::string& name_;
  std::optional<int> previous_start_;
};

// Runs the parser over every document once, events only; throws InputError at a document that
// would make yaml-cpp loop (DocumentProgressCheck) or at the parser's own first error.
void check_documents_progress(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentProgressCheck check(text, name);
  while (parser.HandleNextDocument(check)) {
  }
}

bool all_of_class(std::string_view text, bool (*in_class)(char)) {
  return !text.empty() && std::all_of(text.begin(), text.end(), in_class);
}
bool is_decimal_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_octal_digit(char c) {
  return c >= '0' && c <= '7';
}
bool is_hex_digit(char c) {
  return is_decimal_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, the core schema's float.
bool is_core_float(std::string_view text) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && is_decimal_digit(text[i]))
      ++i;
    return i - start;
  };
  if (i < text.size() && (text[i] == '-' || text[i] == '+'))
    ++i;
  const std::size_t whole = digits();
  std::size_t fraction = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    fraction = digits();
  }
  if (whole == 0 && fraction == 0)
    return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+'))
      ++i;
    if (digits() == 0)
      return false;
  }
  return i == text.size();
}

// A plain scalar by YAML 1.2's core schema (yaml.org/spec/1.2.2, §10.3.2).
nlohmann::json resolve_plain(const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
    return nullptr;
  if (text == "true" || text == "True" || text == "TRUE")
    return true;
  if (text == "false" || text == "False" || text == "FALSE")
    return false;
  const std::string_view view(text);
  const bool octal = view.starts_with("0o") && all_of_class(view.substr(2), is_octal_digit);
  const bool hex = view.starts_with("0x") && all_of_class(view.substr(2), is_hex_digit);
  const bool sign = view.starts_with('-') || view.starts_with('+');
  const bool decimal = all_of_class(view.substr(sign ? 1 : 0), is_decimal_digit);
  if (octal || hex || decimal) {
    const char* first = text.data() + (octal || hex ? 2 : (text[0] == '+' ? 1 : 0));
    std::int64_t value = 0;
    const auto [end, error] =
        std::from_chars(first, text.data() + text.size(), value, octal ? 8 : (hex ? 16 : 10));
    if (error == std::errc() && end == text.data() + text.size())
      return value;
    if (octal || hex)
      return text;  // beyond 64 bits
    // A decimal beyond 64 bits becomes a float, which a reader of integers rejects by range.
  }
  if (decimal || is_core_float(view)) {
    const double value = std::strtod(text.c_str(), nullptr);
    if (std::isfinite(value))
      return value;
  }
  return text;
}

// Converts one node; counts values against kMaxYamlValues.
class Converter {
 public:
  Converter(std::string file, ScalarOffsets* offsets) : file_(std::move(file)), offsets_(offsets) {}

  nlohmann::json convert(const YAML::Node& node, const std::string& pointer, int depth) {
    if (++values_ > kMaxYamlValues) {
      throw InputError(
          file_, pointer,
          "more than " + std::to_string(kMaxYamlValues) + " values once aliases are expanded");
    }
    if (depth > kMaxJsonDepth) {
      throw InputError(file_, pointer,
                       "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        if (offsets_ != nullptr && !node.Mark().is_null())
          offsets_->emplace(pointer, static_cast<std::size_t>(node.Mark().pos));
        // "?" marks a plain scalar; "!" a quoted one; other tags are explicit (!!str, !!int).
        if (node.Tag() == "?")
          return resolve_plain(node.Scalar());
        if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str")
          return node.Scalar();
        return resolve_plain(node.Scalar());
      case YAML::NodeType::Sequence: {
        nlohmann::json out = nlohmann::json::array();
        std::size_t index = 0;
        for (const YAML::Node& item : node) {
          out.push_back(convert(item, pointer + "/" + std::to_string(index), depth + 1));
          ++index;
        }
        return out;
      }
      case YAML::NodeType::Map: {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& entry : node) {
          if (!entry.first.IsScalar()) {
            throw InputError(file_, pointer,
                             "a key at " + at_mark(entry.first.Mark()) + " is not a scalar");
          }
          const std::string& key = entry.first.Scalar();
          const std::string at = pointer + "/" + json_pointer_token(key);
          if (out.contains(key))
            throw InputError(file_, at, "duplicate key (each key may appear once)");
          out[key] = convert(entry.second, at, depth + 1);
        }
        return out;
      }
    }
    return nullptr;
  }

 private:
  std::string file_;
  ScalarOffsets* offsets_;
  std::size_t values_ = 0;
};

}  // namespace

bool plain_scalar_is_string(const std::string& text) {
  return resolve_plain(text).is_string();
}

nlohmann::json parse_yaml_file(const std::string& path) {
  return parse_yaml_text(read_input_file(path, InputKind::kJson), path);
}

nlohmann::json parse_yaml_text(std::string_view text, const std::string& name,
                               ScalarOffsets* offsets) {
  if (const auto fault = find_text_fault(text)) {
    const TextPosition at = text_position(text, fault->offset);
    throw InputError(name, "",
                     fault->problem + " at line " + std::to_string(at.line) + ", column " +
                         std::to_string(at.column) + "; inputs are UTF-8 text without NUL bytes");
  }
  std::vector<YAML::Node> documents;
  try {
    const std::string whole(text);
    check_documents_progress(whole, name);
    documents = YAML::LoadAll(whole);
  } catch (const YAML::Exception& e) {
    throw InputError(name, "", "invalid YAML at " + at_mark(e.mark) + ": " + e.msg);
  }
  Converter converter(name, offsets);
  if (documents.size() == 1)
    return converter.convert(documents.front(), "", 0);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < documents.size(); ++i)
    out.push_back(converter.convert(documents[i], "/" + std::to_string(i), 1));
  return out;
}

}  // namespace capsim::io
