#include "io/yaml_writer.hpp"

#include <array>
#include <charconv>
#include <sstream>
#include <string>
#include <system_error>

#include <yaml-cpp/yaml.h>

namespace capsim::io {
namespace {

using json = nlohmann::ordered_json;

// A double's shortest text that reads back as it, with a ".0" when it looks like an integer
// (YAML's core schema would read "2" as an integer).
std::string float_text(double d) {
  std::array<char, 32> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  std::string s = ec == std::errc() ? std::string(buf.data(), end) : std::to_string(d);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

void emit(YAML::Emitter& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.items()) {
        out << YAML::Key << key << YAML::Value;
        emit(out, value);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::Flow << YAML::BeginSeq;
      for (const json& e : v)
        emit(out, e);
      out << YAML::EndSeq;
      break;
    case json::value_t::string:
      out << YAML::DoubleQuoted << v.get<std::string>();
      break;
    case json::value_t::boolean:
      out << YAML::TrueFalseBool << YAML::LowerCase << v.get<bool>();
      break;
    case json::value_t::number_float:
      out << float_text(v.get<double>());
      break;
    case json::value_t::null:
      out << YAML::Null;
      break;
    default:  // integers
      out << v.dump();
      break;
  }
}

}  // namespace

std::string yaml_text(const json& doc, const std::string& comment) {
  std::string text;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);)
    text += "# " + line + "\n";
  YAML::Emitter out;
  emit(out, doc);
  return text + out.c_str() + "\n";
}

}  // namespace capsim::io
