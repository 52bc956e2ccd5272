#include "whatif/imported_policy.hpp"

#include <charconv>
#include <stdexcept>

#include "io/units.hpp"

namespace capsim::whatif {
namespace {

constexpr std::pair<ConfigFormat, const char*> kFormats[] = {
    {ConfigFormat::kKarpenter, "karpenter"},
    {ConfigFormat::kKubeRay, "kuberay"},
    {ConfigFormat::kRay, "ray"},
    {ConfigFormat::kClusterAutoscaler, "cluster-autoscaler"},
    {ConfigFormat::kSlurm, "slurm"},
};

}  // namespace

const char* to_string(ConfigFormat format) {
  for (const auto& [f, name] : kFormats) {
    if (f == format)
      return name;
  }
  return "karpenter";
}

std::optional<ConfigFormat> config_format_from_string(std::string_view name) {
  for (const auto& [f, n] : kFormats) {
    if (name == n)
      return f;
  }
  return std::nullopt;
}

std::vector<std::string> config_format_names() {
  std::vector<std::string> out;
  for (const auto& [f, n] : kFormats)
    out.emplace_back(n);
  return out;
}

nlohmann::json duration_knob(double seconds) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, seconds);
  return std::string(buf, res.ptr) + "s";
}

double knob_seconds(const nlohmann::json& value) {
  const auto s =
      value.is_string() ? io::units::parse_duration_s(value.get<std::string>()) : std::nullopt;
  if (!s)
    throw std::logic_error("knob_seconds: not a duration: " + value.dump());
  return *s;
}

}  // namespace capsim::whatif
