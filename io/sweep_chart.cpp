#include "io/sweep_chart.hpp"

#include <algorithm>
#include <cmath>

#include "io/chart_axes.hpp"
#include "io/html_escape.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

// Tokens per second as an axis shows them: 250k, 1.2M.
std::string rate_label(double v) {
  if (std::fabs(v) >= 1e6)
    return printf_string("%gM", std::round(v / 1e4) / 100.0);
  if (std::fabs(v) >= 1e3)
    return printf_string("%gk", std::round(v / 10.0) / 100.0);
  return printf_string("%g", v);
}

}  // namespace

std::string sweep_chart_svg(const std::string& path, const std::vector<SweepChartPoint>& points) {
  const bool numeric =
      std::all_of(points.begin(), points.end(), [](const SweepChartPoint& p) { return p.x; });
  Frame f;
  f.top = 44.0;
  double x_lo = 1e300, x_hi = -1e300, y_hi = 0.0;
  for (size_t i = 0; i < points.size(); ++i) {
    const double x = numeric ? *points[i].x : static_cast<double>(i);
    x_lo = std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
    y_hi = std::max(y_hi, points[i].tokens_per_s);
  }
  const Axis y = nice_axis(0.0, y_hi);
  Axis x =
      numeric ? nice_axis(x_lo, x_hi) : Axis{-0.5, static_cast<double>(points.size()) - 0.5, 1};
  auto px = [&](double v) { return f.left + (v - x.lo) / (x.hi - x.lo) * f.plot_width(); };
  auto py = [&](double v) { return f.top + (1.0 - (v - y.lo) / (y.hi - y.lo)) * f.plot_height(); };
  const std::string key = html_escape(path);
  std::string s = printf_string(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
      "aria-label=\"Throughput against %s\" font-family=\"sans-serif\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n"
      "<text x=\"%.1f\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">Throughput against "
      "%s</text>\n",
      f.width, f.height, key.c_str(), f.left + f.plot_width() / 2.0, key.c_str());
  for (double v = y.lo; v <= y.hi + 1e-9 * y.step; v += y.step) {
    s += printf_string(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%s</text>\n",
        f.left, py(v), f.left + f.plot_width(), py(v), f.left - 8.0, py(v) + 4.0,
        rate_label(v).c_str());
  }
  if (numeric) {
    for (double v = x.lo; v <= x.hi + 1e-9 * x.step; v += x.step) {
      s += printf_string(
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
          px(v), f.top, px(v), f.top + f.plot_height(), px(v), f.top + f.plot_height() + 18.0,
          tick_label(v, false).c_str());
    }
  } else {
    for (size_t i = 0; i < points.size(); ++i) {
      s += printf_string(
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
          px(static_cast<double>(i)), f.top + f.plot_height() + 18.0,
          html_escape(points[i].label).c_str());
    }
  }
  s += printf_string(
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#666\"/>\n"
      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"14\" text-anchor=\"middle\">%s</text>\n"
      "<text transform=\"translate(18 %.1f) rotate(-90)\" font-size=\"14\" "
      "text-anchor=\"middle\">tokens per second</text>\n",
      f.left, f.top, f.plot_width(), f.plot_height(), f.left + f.plot_width() / 2.0,
      f.height - 10.0, key.c_str(), f.top + f.plot_height() / 2.0);
  std::string line;
  for (size_t i = 0; i < points.size(); ++i) {
    const double x_value = numeric ? *points[i].x : static_cast<double>(i);
    line += printf_string("%.1f,%.1f ", px(x_value), py(points[i].tokens_per_s));
  }
  line.pop_back();
  s += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"2\"/>\n";
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepChartPoint& p = points[i];
    const double cx = px(numeric ? *p.x : static_cast<double>(i));
    const double cy = py(p.tokens_per_s);
    s += printf_string(
        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" %s><title>%s: %.4g tokens/s, %.4g s per "
        "iteration%s</title></circle>\n"
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%.3g s</text>\n",
        cx, cy, p.fits ? "fill=\"#1f5fa8\"" : "fill=\"#fff\" stroke=\"#c00\" stroke-width=\"2\"",
        html_escape(p.label).c_str(), p.tokens_per_s, p.iteration_time_s,
        p.fits ? "" : ", does not fit in memory", cx, cy - 10.0, p.iteration_time_s);
  }
  if (std::any_of(points.begin(), points.end(), [](const SweepChartPoint& p) { return !p.fits; })) {
    s += printf_string(
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\" fill=\"#c00\">hollow: "
        "does not fit in memory</text>\n",
        f.left + f.plot_width() - 6.0, f.top + f.plot_height() - 8.0);
  }
  s += "</svg>\n";
  return s;
}

}  // namespace capsim::io
