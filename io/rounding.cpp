#include "io/rounding.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace capsim::io {

double round_significant(double value, int digits) {
  if (value == 0.0 || !std::isfinite(value))
    return value;
  const double magnitude = std::floor(std::log10(std::fabs(value))) + 1.0;
  const double scale = std::pow(10.0, digits - magnitude);
  // Below about 1e-302 the scale overflows (inf / inf is NaN): such values are kept as they are.
  if (!std::isfinite(scale))
    return value;
  const double rounded = std::round(value * scale) / scale;
  // When 10^k is inexact (k < 0 or k > 22) the quotient misses the nearest double by an ulp or
  // two (64783399999.999992 for 6.47834e10); its own digits, read back, give the nearest one.
  // to_chars with a precision prints as printf's %.*g does, and both conversions round
  // correctly (C++17 [charconv.to.chars]), without printf's and strtod's locale machinery.
  std::array<char, 64> text{};
  const auto printed = std::to_chars(text.data(), text.data() + text.size(), rounded,
                                     std::chars_format::general, digits);
  double read_back = rounded;
  (void)std::from_chars(text.data(), printed.ptr, read_back);
  return read_back;
}

double round_decimals(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace capsim::io
