#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "calibrate/profile_fit.hpp"
#include "models/collective_cost.hpp"
#include "models/gemm_cost.hpp"
#include "models/gpu_catalog.hpp"

#include "io/html_escape.hpp"
#include "io/profile_io.hpp"
#include "io/text_format.hpp"

namespace capsim::calibrate {
namespace {

// The first `max_bytes` of `text`, never splitting a UTF-8 character (sources are free text).
std::string truncated(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes)
    return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U)
    --end;  // text[end] is a continuation byte: back up to the character's first byte
  return text.substr(0, end);
}

// One decimal: SVG coordinates and the table's rates and errors.
std::string num(double v) {
  return io::printf_string("%.1f", v);
}

struct Axes {
  double x0, x1, y0, y1;
  static constexpr double kW = 520, kH = 300, kL = 60, kB = 40, kT = 10, kR = 10;
  [[nodiscard]] double px(double x) const { return kL + (x - x0) / (x1 - x0) * (kW - kL - kR); }
  [[nodiscard]] double py(double y) const {
    return kH - kB - (y - y0) / (y1 - y0) * (kH - kB - kT);
  }
};

// Log-log plot: measured points as circles, fitted curve as a line (log10 of both axes).
std::string svg_plot(const std::vector<double>& x, const std::vector<double>& measured,
                     const std::vector<double>& model, const std::string& x_label,
                     const std::string& y_label) {
  std::vector<double> lx;
  std::vector<double> ly;
  lx.reserve(x.size());
  ly.reserve(measured.size() + model.size());
  for (double v : x)
    lx.push_back(std::log10(v));
  for (double v : measured)
    ly.push_back(std::log10(v));
  for (double v : model)
    ly.push_back(std::log10(v));
  Axes a{*std::min_element(lx.begin(), lx.end()), *std::max_element(lx.begin(), lx.end()),
         std::floor(*std::min_element(ly.begin(), ly.end())),
         std::ceil(*std::max_element(ly.begin(), ly.end()))};
  if (a.x1 - a.x0 < 1e-9) {
    a.x0 -= 0.5;
    a.x1 += 0.5;
  }
  if (a.y1 - a.y0 < 1e-9)
    a.y1 = a.y0 + 1;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Axes::kW << "\" height=\""
    << Axes::kH << "\" font-size=\"11\">";
  s << "<rect x=\"" << Axes::kL << "\" y=\"" << Axes::kT << "\" width=\""
    << Axes::kW - Axes::kL - Axes::kR << "\" height=\"" << Axes::kH - Axes::kB - Axes::kT
    << "\" fill=\"none\" stroke=\"#999\"/>";
  // a.y0 and ceil(a.x0) are whole numbers: integer steps give the same doubles as adding 1.0.
  for (int k = 0; a.y0 + k <= a.y1 + 1e-9; ++k) {
    const double y = a.y0 + k;
    s << "<text x=\"4\" y=\"" << num(a.py(y) + 4) << "\">1e" << io::printf_string("%.0f", y)
      << "</text>";
  }
  for (int k = 0; std::ceil(a.x0) + k <= a.x1 + 1e-9; ++k) {
    const double xv = std::ceil(a.x0) + k;
    s << "<text x=\"" << num(a.px(xv) - 10) << "\" y=\"" << Axes::kH - 24 << "\">1e"
      << io::printf_string("%.0f", xv) << "</text>";
  }
  s << "<text x=\"" << Axes::kW / 2 << "\" y=\"" << Axes::kH - 6 << "\">"
    << io::html_escape(x_label) << "</text><text x=\"" << Axes::kL + 6 << "\" y=\"" << Axes::kT + 14
    << "\" font-weight=\"bold\">" << io::html_escape(y_label) << "</text>";
  s << "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"";
  for (size_t i = 0; i < x.size(); ++i) {
    s << num(a.px(lx[i])) << "," << num(a.py(std::log10(model[i]))) << " ";
  }
  s << "\"/>";
  for (size_t i = 0; i < x.size(); ++i) {
    s << "<circle cx=\"" << num(a.px(lx[i])) << "\" cy=\"" << num(a.py(std::log10(measured[i])))
      << "\" r=\"3\" fill=\"#1f77b4\"/>";
  }
  s << "</svg>";
  return s.str();
}

std::string gemm_row_cells(const GemmMeasurement& row, double model_flop_per_s,
                           const std::string& role) {
  const double err_pct = 100.0 * (model_flop_per_s / row.flop_per_s - 1.0);
  std::ostringstream s;
  s << "<tr><td>" << io::html_escape(truncated(row.source, 60)) << "</td><td>"
    << io::html_escape(role) << "</td><td>" << row.line << "</td><td>" << io::html_escape(row.dtype)
    << "</td><td>" << io::printf_string("%.0f", row.m) << " &times; "
    << io::printf_string("%.0f", row.n) << " &times; " << io::printf_string("%.0f", row.k)
    << (row.batch > 1.0 ? " &times; " + io::printf_string("%.0f", row.batch) : "") << "</td><td>"
    << num(row.flop_per_s / 1e12) << "</td><td>" << num(model_flop_per_s / 1e12) << "</td><td>"
    << num(err_pct) << "</td></tr>";
  return s.str();
}

// Every fitted row with the model's throughput for it (times its source's level), and the fp8
// row that bounds the fp8 ceiling, so a user sees where the tile/wave model misses a shape.
std::string gemm_rows_table(const ProfileFitResult& r) {
  const GemmFit& fit = *r.gemm;
  std::ostringstream h;
  h << "<h3>GEMM rows</h3><p>Model = the fitted GemmParams times the row's source level; error "
       "= model / measured &minus; 1.</p><table><tr><th>source</th><th>role</th><th>line</th>"
       "<th>dtype</th><th>M &times; N &times; K (&times; batch)</th><th>measured TFLOP/s</th>"
       "<th>model TFLOP/s</th><th>error (%)</th></tr>";
  for (size_t i = 0; i < fit.rows.size(); ++i) {
    const GemmMeasurement& row = *fit.rows[i];
    h << gemm_row_cells(row, fit.model_flop_per_s[i],
                        row.search_maximum ? "fit; bounds the ceiling" : "fit");
  }
  if (fit.fp8_bound_row != nullptr) {
    const GemmMeasurement& row = *fit.fp8_bound_row;
    const GemmShape shape{row.m, row.n, row.k, row.batch};
    const double t = gemm_time_s(r.profile.gemm, r.profile.gpu, Precision::kFp8, shape);
    h << gemm_row_cells(row, shape.flop() / t, "bounds the fp8 ceiling");
  }
  h << "</table>";
  return h.str();
}

}  // namespace

std::string render_report(const ProfileFitResult& r) {
  const HardwareProfile& p = r.profile;
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>capsim calibration: "
    << io::html_escape(p.name) << "</title><style>body{font-family:sans-serif;max-width:1100px}"
    << "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;"
    << "text-align:right}td:first-child,td:nth-child(2){text-align:left}.bad{color:#b00}</style>"
    << "</head><body><h1>capsim calibration report: " << io::html_escape(p.name) << "</h1>";
  h << "<p>GPU " << io::html_escape(p.gpu.name) << ", fabric " << io::html_escape(p.fabric);
  if (p.reference_node_nic_bandwidth_bytes_per_s > 0) {
    h << ", reference NIC bandwidth per node "
      << num(p.reference_node_nic_bandwidth_bytes_per_s / 1e9) << " GB/s";
  }
  h << ". Blue: measured (min of out-of-place and in-place); red: fitted model "
    << "(collective_time_s). Targets: MAPE &le; 5% for sizes &ge; 1 MiB, &le; 15% over all "
       "sizes.</p>";
  h << "<h2>Errors per curve</h2><table><tr><th>curve</th><th>source</th><th>points</th>"
    << "<th>MAPE all (%)</th><th>points &ge; 1 MiB</th><th>MAPE &ge; 1 MiB (%)</th>"
    << "<th>max |err| (%)</th></tr>";
  for (const auto& f : p.fit_quality) {
    const bool bad = f.mape_pct > 15.0 || (f.points_large > 0 && f.mape_large_pct > 5.0);
    h << "<tr" << (bad ? " class=\"bad\"" : "") << "><td>" << io::html_escape(f.curve)
      << "</td><td>" << io::html_escape(f.source) << "</td><td>" << f.points << "</td><td>"
      << io::printf_string("%.2f", f.mape_pct) << "</td><td>" << f.points_large << "</td><td>"
      << io::printf_string("%.2f", f.mape_large_pct) << "</td><td>"
      << io::printf_string("%.2f", f.max_abs_error_pct) << "</td></tr>";
  }
  h << "</table><h2>Fitted regimes</h2><table><tr><th>collective</th><th>scope</th>"
    << "<th>algorithm</th><th>base (us)</th><th>intra step (us)</th><th>inter step (us)</th>"
    << "<th>bus bw (GB/s)</th></tr>";
  for (const auto& fit : p.collectives) {
    for (const auto& a : fit.algorithms) {
      h << "<tr><td>" << io::collective_name(fit.kind) << "</td><td>"
        << (fit.inter_node ? "inter_node" : "intra_node") << "</td><td>"
        << io::algorithm_name(a.algorithm) << "</td><td>"
        << io::printf_string("%.2f", a.base_latency_s * 1e6) << "</td><td>"
        << io::printf_string("%.2f", a.intra_step_latency_s * 1e6) << "</td><td>"
        << io::printf_string("%.2f", a.inter_step_latency_s * 1e6)
        << "</td><td>"
        // Three significant figures: a latency-only regime's bandwidth is near 0, not "0.0".
        << io::printf_string("%.3g", a.bus_bandwidth_bytes_per_s / 1e9) << "</td></tr>";
    }
  }
  h << "</table><h2>Collective curves</h2>";
  for (size_t i = 0; i < r.curves.size(); ++i) {
    const auto& c = r.curves[i];
    std::vector<double> x;
    std::vector<double> measured;
    for (const auto& s : c.samples) {
      x.push_back(s.bytes);
      measured.push_back(s.best_time_s() * 1e6);
    }
    std::vector<double> model;
    for (double t : r.curve_model_s[i])
      model.push_back(t * 1e6);
    h << "<h3>" << io::html_escape(curve_label(c)) << " &mdash; " << io::html_escape(c.source)
      << "</h3>" << svg_plot(x, measured, model, "message size (bytes)", "time (us)");
  }
  if (r.gemm) {
    h << "<h2>GEMM</h2><p>Throughput (TFLOP/s) per measured shape, in input order; model "
         "includes each source's level (consensus sources: 1).</p><table><tr><th>source</th>"
         "<th>consensus</th><th>rows</th><th>level</th><th>MAPE (%)</th></tr>";
    for (const auto& s : r.gemm->sources) {
      h << "<tr><td>" << io::html_escape(truncated(s.source, 90)) << "</td><td>"
        << (s.consensus ? "yes" : "no") << "</td><td>" << s.rows << "</td><td>"
        << io::printf_string("%.3f", s.scale) << "</td><td>"
        << io::printf_string("%.2f", s.mape_pct) << "</td></tr>";
    }
    h << "</table>";
    std::vector<double> x;
    std::vector<double> measured;
    std::vector<double> model;
    for (size_t i = 0; i < r.gemm->rows.size(); ++i) {
      const auto* row = r.gemm->rows[i];
      x.push_back(2.0 * row->m * row->n * row->k * row->batch);
      measured.push_back(row->flop_per_s / 1e12);
      model.push_back(r.gemm->model_flop_per_s[i] / 1e12);
    }
    // Sort by FLOP count so the model line reads left to right.
    std::vector<size_t> order(x.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
    std::vector<double> xs;
    std::vector<double> ms;
    std::vector<double> mo;
    for (size_t i : order) {
      xs.push_back(x[i]);
      ms.push_back(measured[i]);
      mo.push_back(model[i]);
    }
    h << svg_plot(xs, ms, mo, "GEMM FLOP", "TFLOP/s") << gemm_rows_table(r);
  }
  h << "<h2>Provenance</h2><ul>";
  for (const auto& line : p.provenance)
    h << "<li>" << io::html_escape(line) << "</li>";
  h << "</ul></body></html>\n";
  return h.str();
}

}  // namespace capsim::calibrate
