#include "io/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "models/byte_units.hpp"

#include "io/text_format.hpp"

namespace capsim::io::units {
namespace {

struct Split {
  double number;
  std::string_view unit;
};

// Splits "1.5 GiB" into 1.5 and "GiB"; rejects negatives, NaN and text without a number.
std::optional<Split> split_number(std::string_view text) {
  text = trim(text);
  if (text.empty())
    return std::nullopt;
  double value = 0.0;
  const auto* begin = text.data();
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin)
    return std::nullopt;
  if (!std::isfinite(value) || value < 0.0)
    return std::nullopt;
  return Split{value, trim(std::string_view(ptr, static_cast<size_t>(end - ptr)))};
}

// Consumes a decimal or binary multiplier prefix; returns 1 when there is none.
double take_prefix(std::string_view& unit) {
  static constexpr std::array<std::pair<std::string_view, double>, 9> kPrefixes{{
      {"Ki", kKiB},
      {"Mi", kMiB},
      {"Gi", kGiB},
      {"Ti", kTiB},
      {"k", 1e3},
      {"K", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
  }};
  for (const auto& [prefix, factor] : kPrefixes) {
    if (unit.size() > prefix.size() && unit.substr(0, prefix.size()) == prefix) {
      unit.remove_prefix(prefix.size());
      return factor;
    }
  }
  return 1.0;
}

}  // namespace

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0)
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0)
    text.remove_suffix(1);
  return text;
}

std::optional<double> parse_bandwidth_bytes_per_s(std::string_view text) {
  auto split = split_number(text);
  if (!split)
    return std::nullopt;
  std::string_view unit = split->unit;
  const double prefix = take_prefix(unit);
  double bits_per_unit = 0.0;
  if (unit == "bps" || unit == "b/s" || unit == "bit/s") {
    bits_per_unit = 1.0;
  } else if (unit == "Bps" || unit == "B/s") {
    bits_per_unit = 8.0;
  } else {
    return std::nullopt;
  }
  if (split->number <= 0.0)
    return std::nullopt;
  const double bytes_per_s = split->number * prefix * bits_per_unit / 8.0;
  if (!std::isfinite(bytes_per_s))
    return std::nullopt;
  return bytes_per_s;
}

std::optional<double> parse_duration_s(std::string_view text) {
  auto split = split_number(text);
  if (!split)
    return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, double>, 13> kUnits{{
      {"ns", 1e-9},
      {"us", 1e-6},
      {"ms", 1e-3},
      {"s", 1.0},
      {"sec", 1.0},
      {"min", 60.0},
      {"m", 60.0},
      {"h", 3600.0},
      {"hr", 3600.0},
      {"d", 86400.0},
      {"day", 86400.0},
      {"days", 86400.0},
      {"w", 7.0 * 86400.0},
  }};
  for (const auto& [unit, factor] : kUnits) {
    if (split->unit == unit)
      return std::isfinite(split->number * factor) ? std::optional<double>(split->number * factor)
                                                   : std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> parse_size_bytes(std::string_view text) {
  auto split = split_number(text);
  if (!split)
    return std::nullopt;
  std::string_view unit = split->unit;
  const double prefix = take_prefix(unit);
  if (unit != "B")
    return std::nullopt;
  return split->number * prefix;
}

std::optional<double> parse_count(std::string_view text) {
  auto split = split_number(text);
  if (!split)
    return std::nullopt;
  const std::string_view unit = split->unit;
  double factor = 0.0;
  if (unit.empty()) {
    factor = 1.0;
  } else if (unit == "k" || unit == "K") {
    factor = 1e3;
  } else if (unit == "M") {
    factor = 1e6;
  } else if (unit == "B" || unit == "G") {
    factor = 1e9;
  } else if (unit == "T") {
    factor = 1e12;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(split->number * factor))
    return std::nullopt;
  return split->number * factor;
}

std::optional<double> parse_flop_per_s(std::string_view text) {
  auto split = split_number(text);
  if (!split || split->number <= 0.0)
    return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, double>, 5> kPrefixes{{
      {"", 1.0},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"k", 1e3},
  }};
  std::string_view unit = split->unit;
  for (const auto& [prefix, factor] : kPrefixes) {
    if (unit.substr(0, prefix.size()) != prefix)
      continue;
    const std::string_view rest = unit.substr(prefix.size());
    if (rest == "FLOPS" || rest == "FLOP/s") {
      const double flop_per_s = split->number * factor;
      return std::isfinite(flop_per_s) ? std::optional<double>(flop_per_s) : std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<double> parse_price_usd_per_hour(std::string_view text) {
  text = trim(text);
  bool dollar = false;
  if (!text.empty() && text.front() == '$') {
    dollar = true;
    text.remove_prefix(1);
  }
  auto split = split_number(text);
  if (!split)
    return std::nullopt;
  std::string_view unit = split->unit;
  if (!dollar) {
    if (unit.substr(0, 3) != "USD")
      return std::nullopt;
    unit = trim(unit.substr(3));
  }
  if (unit == "/h" || unit == "/hr" || unit == "/hour")
    return split->number;
  return std::nullopt;
}

std::string format_duration(double seconds) {
  if (seconds < 1e-3)
    return printf_string("%.1f us", seconds * 1e6);
  if (seconds < 1.0)
    return printf_string("%.1f ms", seconds * 1e3);
  if (seconds < 3600.0)
    return printf_string("%.3f s", seconds);
  if (seconds < 86400.0)
    return printf_string("%.2f h", seconds / 3600.0);
  return printf_string("%.2f d", seconds / 86400.0);
}

}  // namespace capsim::io::units
