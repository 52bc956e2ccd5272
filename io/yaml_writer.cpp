#include "io/yaml_writer.hpp"

#include <charconv>
#include <regex>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace capsim::io {
namespace {

// Plain scalars the core schema resolves to null, a boolean or a number (YAML 1.2 §10.3.2).
bool resolves_to_non_string(const std::string& s) {
  static const std::regex kCore(
      R"(^(|~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$)");
  return std::regex_match(s, kCore);
}

// The shortest decimal text of v that reads back to v, with a ".0" when it has no point, so the
// core schema reads a float.
std::string float_text(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

void emit(YAML::Emitter& out, const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, v] : j.items()) {
        out << YAML::Key;
        if (resolves_to_non_string(k))
          out << YAML::DoubleQuoted;
        out << k << YAML::Value;
        emit(out, v);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& v : j)
        emit(out, v);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (resolves_to_non_string(s))
        out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case nlohmann::json::value_t::boolean:
      out << (j.get<bool>() ? "true" : "false");
      break;
    case nlohmann::json::value_t::number_integer:
      out << j.get<std::int64_t>();
      break;
    case nlohmann::json::value_t::number_unsigned:
      out << j.get<std::uint64_t>();
      break;
    case nlohmann::json::value_t::number_float:
      out << float_text(j.get<double>());
      break;
    default:
      out << YAML::Null;
      break;
  }
}

}  // namespace

std::string write_yaml(const nlohmann::json& json, bool documents, const std::string& header) {
  std::ostringstream os;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);)
    os << "# " << line << "\n";
  if (!documents) {
    YAML::Emitter out;
    emit(out, json);
    os << out.c_str() << "\n";
    return os.str();
  }
  for (const auto& doc : json) {
    YAML::Emitter out;
    emit(out, doc);
    os << "---\n" << out.c_str() << "\n";
  }
  return os.str();
}

}  // namespace capsim::io
