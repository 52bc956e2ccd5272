#include "io/go_duration.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

namespace capsim::io {
namespace {

// Go's units (time.ParseDuration), longest spelling first so "ms" is not read as "m".
constexpr std::pair<std::string_view, double> kUnits[] = {
    {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"\xCE\xBCs", 1e-6},
    {"ms", 1e-3}, {"s", 1.0},   {"m", 60.0},         {"h", 3600.0},
};

// Go's durations are int64 nanoseconds: time.ParseDuration refuses longer ones ("invalid
// duration"), about 2,562,047 hours.
constexpr double kMaxSeconds = 9223372036.854775807;

// The shortest decimal text of v that parses back to v.
std::string shortest(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return {buf, res.ptr};
}

}  // namespace

std::optional<double> parse_go_duration(std::string_view text) {
  if (text == "0")
    return 0.0;
  if (text.empty() || text.front() == '-')
    return std::nullopt;
  if (text.front() == '+')
    text.remove_prefix(1);
  double total = 0.0;
  bool any = false;
  while (!text.empty()) {
    std::size_t n = 0;
    while (n < text.size() && ((text[n] >= '0' && text[n] <= '9') || text[n] == '.'))
      ++n;
    if (n == 0)
      return std::nullopt;
    double value = 0.0;
    const auto res = std::from_chars(text.data(), text.data() + n, value);
    if (res.ec != std::errc() || res.ptr != text.data() + n)
      return std::nullopt;
    text.remove_prefix(n);
    bool matched = false;
    for (const auto& [unit, scale] : kUnits) {
      if (text.substr(0, unit.size()) == unit) {
        // "m" must not swallow the "m" of "ms"
        if (unit == "m" && text.substr(0, 2) == "ms")
          continue;
        total += value * scale;
        text.remove_prefix(unit.size());
        matched = true;
        break;
      }
    }
    if (!matched)
      return std::nullopt;
    any = true;
  }
  if (!any || !std::isfinite(total) || total > kMaxSeconds)
    return std::nullopt;
  return total;
}

std::string format_go_duration(double seconds) {
  if (seconds == 0.0)
    return "0s";
  const double whole = std::floor(seconds);
  if (whole != seconds || seconds > 9e15)
    return shortest(seconds) + "s";
  auto s = static_cast<std::int64_t>(whole);
  std::string out;
  if (s >= 3600) {
    out += std::to_string(s / 3600) + "h";
    s %= 3600;
  }
  if (s >= 60) {
    out += std::to_string(s / 60) + "m";
    s %= 60;
  }
  if (s > 0)
    out += std::to_string(s) + "s";
  return out;
}

}  // namespace capsim::io
