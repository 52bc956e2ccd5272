#include "io/yaml_writer.hpp"

#include <charconv>
#include <cstdint>
#include <sstream>

#include "io/yaml_document.hpp"
#include <yaml-cpp/yaml.h>

namespace capsim::io {
namespace {

// Plain scalars the core schema resolves to null, a boolean or a number (YAML 1.2 §10.3.2),
// and the infinities and NaNs, which other readers take as floats.
bool resolves_to_non_string(const std::string& s) {
  return !plain_scalar_is_string(s) || s.find("inf") != std::string::npos ||
         s.find("Inf") != std::string::npos || s.find("INF") != std::string::npos ||
         s.find("nan") != std::string::npos || s.find("NaN") != std::string::npos ||
         s.find("NAN") != std::string::npos;
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

template <typename Json>
void emit(YAML::Emitter& out, const Json& j) {
  switch (j.type()) {
    case nlohmann::detail::value_t::object:
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
    case nlohmann::detail::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& v : j)
        emit(out, v);
      out << YAML::EndSeq;
      break;
    case nlohmann::detail::value_t::string: {
      const auto& s = j.template get_ref<const std::string&>();
      if (resolves_to_non_string(s))
        out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case nlohmann::detail::value_t::boolean:
      out << (j.template get<bool>() ? "true" : "false");
      break;
    case nlohmann::detail::value_t::number_integer:
      out << j.template get<std::int64_t>();
      break;
    case nlohmann::detail::value_t::number_unsigned:
      out << j.template get<std::uint64_t>();
      break;
    case nlohmann::detail::value_t::number_float:
      out << float_text(j.template get<double>());
      break;
    default:
      out << YAML::Null;
      break;
  }
}

template <typename Json>
std::string write_documents(const Json& json, bool documents, const std::string& header) {
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

}  // namespace

std::string write_yaml(const nlohmann::ordered_json& json, bool documents,
                       const std::string& header) {
  return write_documents(json, documents, header);
}

std::string write_yaml(const nlohmann::json& json, bool documents, const std::string& header) {
  return write_documents(json, documents, header);
}

}  // namespace capsim::io
