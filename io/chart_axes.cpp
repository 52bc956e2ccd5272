#include "io/chart_axes.hpp"

#include <cmath>

#include "io/text_format.hpp"

namespace capsim::io {

double tick_step(double span, int ticks) {
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * power)
      return m * power;
  }
  return 10.0 * power;
}

Axis nice_axis(double lo, double hi) {
  if (hi <= lo) {
    const double pad = lo != 0.0 ? std::fabs(lo) * 0.1 : 1.0;
    lo -= pad;
    hi += pad;
  }
  Axis a;
  a.step = tick_step(hi - lo, 5);
  a.lo = std::floor(lo / a.step) * a.step;
  a.hi = std::ceil(hi / a.step) * a.step;
  if (a.lo < 0.0 && lo >= 0.0)
    a.lo = 0.0;
  return a;
}

std::string tick_label(double v, bool dollars) {
  if (!dollars)
    return printf_string("%g", std::round(v * 1000.0) / 1000.0);
  if (std::fabs(v) >= 1e6)
    return printf_string("$%gM", std::round(v / 1e4) / 100.0);
  if (std::fabs(v) >= 1e3)
    return printf_string("$%gk", std::round(v / 10.0) / 100.0);
  return printf_string("$%g", v);
}

}  // namespace capsim::io
