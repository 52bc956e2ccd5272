#include "planner/plan_html.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "models/byte_units.hpp"
#include "models/pricing.hpp"
#include "planner/instance_comparison.hpp"
#include "planner/megatron_args.hpp"
#include "planner/plan_report.hpp"
#include "planner/sensitivity.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/chart_axes.hpp"
#include "io/html_escape.hpp"
#include "io/profile_io.hpp"
#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

using io::html_escape;
using io::printf_string;

// 1234567 -> "1,234,567".
std::string thousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<size_t>(i), ",");
  return v < 0 ? "-" + digits : digits;
}

using io::Axis;
using io::Frame;
using io::nice_axis;
using io::tick_label;

std::string instance_name(const PlanSpec& plan, const RankedEntry& r, const PlanResult& result) {
  return plan.instances[static_cast<size_t>(result.candidates[r.candidate].candidate.instance)]
      .name;
}

std::string point_label(const PlanSpec& plan, const PlanResult& result, const RankedEntry& r) {
  const ScreenedCandidate& c = result.candidates[r.candidate];
  return printf_string("%d × %s, %s", c.candidate.num_nodes, instance_name(plan, r, result).c_str(),
                       to_string(r.price.pricing));
}

// The Pareto front (cost against all-in days) over the ranked entries shown: gridlines at each
// tick, labelled axes, the front's points joined and labelled, the other entries in grey.
std::string pareto_svg(const PlanSpec& plan, const PlanResult& result,
                       const std::vector<RankedEntry>& others) {
  const Frame f;
  double x_lo = 1e300, x_hi = -1e300, y_lo = 1e300, y_hi = -1e300;
  auto extend = [&](const RankedEntry& r) {
    x_lo = std::min(x_lo, r.wall_time_s / kDay);
    x_hi = std::max(x_hi, r.wall_time_s / kDay);
    y_lo = std::min(y_lo, r.cost_usd);
    y_hi = std::max(y_hi, r.cost_usd);
  };
  for (const auto& r : result.pareto)
    extend(r);
  for (const auto& r : others)
    extend(r);
  const Axis x = nice_axis(x_lo, x_hi);
  const Axis y = nice_axis(y_lo, y_hi);
  auto px = [&](double v) { return f.left + (v - x.lo) / (x.hi - x.lo) * f.plot_width(); };
  auto py = [&](double v) { return f.top + (1.0 - (v - y.lo) / (y.hi - y.lo)) * f.plot_height(); };
  std::string s = printf_string(
      "<svg id=\"pareto\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
      "aria-label=\"Pareto front: cost against all-in days\">\n",
      f.width, f.height);
  for (double v = x.lo; v <= x.hi + 1e-9 * x.step; v += x.step) {
    s += printf_string(
        "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
        px(v), f.top, px(v), f.top + f.plot_height(), px(v), f.top + f.plot_height() + 18.0,
        tick_label(v, false).c_str());
  }
  for (double v = y.lo; v <= y.hi + 1e-9 * y.step; v += y.step) {
    s += printf_string(
        "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
        f.left, py(v), f.left + f.plot_width(), py(v), f.left - 8.0, py(v) + 4.0,
        tick_label(v, true).c_str());
  }
  s += printf_string(
      "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n"
      "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">all-in days to "
      "train</text>\n"
      "<text class=\"axis-title\" transform=\"translate(18 %.1f) rotate(-90)\" "
      "text-anchor=\"middle\">cost (USD)</text>\n",
      f.left, f.top, f.plot_width(), f.plot_height(), f.left + f.plot_width() / 2.0,
      f.height - 10.0, f.top + f.plot_height() / 2.0);
  for (const auto& r : others) {
    s += printf_string(
        "<circle class=\"other\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>%s: %.2f "
        "days, $%.0f</title></circle>\n",
        px(r.wall_time_s / kDay), py(r.cost_usd), html_escape(point_label(plan, result, r)).c_str(),
        r.wall_time_s / kDay, r.cost_usd);
  }
  if (!result.pareto.empty()) {
    std::string points;
    for (const auto& r : result.pareto)
      points += printf_string("%.1f,%.1f ", px(r.wall_time_s / kDay), py(r.cost_usd));
    points.pop_back();
    s += "<polyline class=\"front\" points=\"" + points + "\"/>\n";
  }
  for (size_t i = 0; i < result.pareto.size(); ++i) {
    const RankedEntry& r = result.pareto[i];
    const double cx = px(r.wall_time_s / kDay);
    const double cy = py(r.cost_usd);
    // Labels go right of their point, left of it in the right half so they stay in the plot.
    const bool left = cx > f.left + f.plot_width() / 2.0;
    s += printf_string(
        "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"/>"
        "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n",
        cx, cy, left ? cx - 8.0 : cx + 8.0, cy - 6.0, left ? "end" : "start",
        html_escape(printf_string("%d × %s", result.candidates[r.candidate].candidate.num_nodes,
                                  instance_name(plan, r, result).c_str()))
            .c_str());
  }
  s += "</svg>\n";
  return s;
}

// One horizontal bar split into coloured parts, each with its share; a legend under it.
std::string stacked_bar_svg(const std::string& id, const std::string& label,
                            const std::vector<std::pair<std::string, double>>& parts, double limit,
                            const std::string& limit_label) {
  const double width = 760.0, left = 16.0, bar_width = 728.0;
  double total = 0.0;
  for (const auto& p : parts)
    total += p.second;
  const double scale_max = std::max(total, limit);
  const int legend_rows = static_cast<int>((parts.size() + 2) / 3);
  const double height = 78.0 + 22.0 * legend_rows;
  std::string s = printf_string(
      "<svg id=\"%s\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
      "aria-label=\"%s\">\n",
      id.c_str(), width, height, html_escape(label).c_str());
  double x = left;
  for (size_t i = 0; i < parts.size(); ++i) {
    const double w = scale_max > 0.0 ? parts[i].second / scale_max * bar_width : 0.0;
    s += printf_string(
        "<rect class=\"part c%zu\" x=\"%.2f\" y=\"12\" width=\"%.2f\" "
        "height=\"32\"><title>%s: %.1f%%</title></rect>\n",
        i % 10, x, w, html_escape(parts[i].first).c_str(),
        total > 0.0 ? 100.0 * parts[i].second / total : 0.0);
    x += w;
  }
  if (limit > 0.0) {
    const double lx = left + limit / scale_max * bar_width;
    s += printf_string(
        "<line class=\"limit\" x1=\"%.2f\" y1=\"4\" x2=\"%.2f\" y2=\"52\"/>"
        "<text class=\"tick\" x=\"%.2f\" y=\"66\" text-anchor=\"end\">%s</text>\n",
        lx, lx, lx, html_escape(limit_label).c_str());
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const double lx = left + static_cast<double>(i % 3) * 245.0;
    const double ly = 84.0 + 22.0 * static_cast<double>(i / 3);
    s += printf_string(
        "<rect class=\"part c%zu\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\"/>"
        "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">%s %.1f%%</text>\n",
        i % 10, lx, ly - 10.0, lx + 18.0, ly, html_escape(parts[i].first).c_str(),
        total > 0.0 ? 100.0 * parts[i].second / total : 0.0);
  }
  s += "</svg>\n";
  return s;
}

std::string entry_row(const PlanSpec& plan, const PlanResult& result, size_t rank,
                      const RankedEntry& r) {
  const ScreenedCandidate& c = result.candidates[r.candidate];
  const Evaluation& e = c.final_evaluation();
  const Parallelism& p = c.candidate.parallelism;
  return printf_string(
      "<tr%s><td>%zu</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%.2f</td>"
      "<td>%s</td><td>%d/%d</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td>"
      "<td>%.3f</td><td>%.1f%%</td><td>%.1f</td><td>%.1f</td><td>%.2f</td><td>%.2f</td>"
      "<td>%s</td><td>%s</td></tr>\n",
      r.meets_target ? "" : " class=\"miss\"", rank,
      html_escape(instance_name(plan, r, result)).c_str(), to_string(r.price.pricing),
      c.candidate.num_nodes, p.num_gpus(), r.price.usd_per_node_hour,
      html_escape(layout_label(p)).c_str(), p.micro_batch_size, p.global_batch_size,
      to_string(p.schedule), to_string(p.recompute), p.zero_stage,
      p.sequence_parallel ? "yes" : "no", e.iteration_time_s, 100.0 * e.mfu,
      e.peak_memory_bytes / kGiB, (e.capacity_bytes - e.peak_memory_bytes) / kGiB,
      r.time_to_train_s / kDay, r.wall_time_s / kDay,
      thousands(static_cast<long long>(std::llround(r.cost_usd))).c_str(),
      c.confirmed ? "event" : "analytic");
}

constexpr const char* kTableHead =
    "<tr><th>#</th><th>instance</th><th>pricing</th><th>nodes</th><th>GPUs</th>"
    "<th>$/node-h</th><th>TP/PP/DP/CP/VP</th><th>mb/gbs</th><th>schedule</th>"
    "<th>recompute</th><th>ZeRO</th><th>SP</th><th>iter s</th><th>MFU</th><th>mem GiB</th>"
    "<th>free GiB</th><th>steady days</th><th>all-in days</th><th>cost $</th><th>engine</th>"
    "</tr>\n";

// The sensitivity's tornado chart: one bar per input that moves this plan, spanning the winner's
// objective value (cost, or days for a min_time plan) from the input's lowest move to its
// highest, around the nominal value (the dashed line); the widest bar on top. Blue: the value
// with the input 25% lower; orange: 25% higher.
std::string tornado_svg(const PlanSpec& plan, const RankedEntry& winner,
                        const Sensitivity& sensitivity) {
  const bool by_time = plan.objective == Objective::kMinTime;
  const double nominal = by_time ? winner.wall_time_s / kDay : winner.cost_usd;
  struct Bar {
    SensitivityFactor factor;
    double at_low = 0.0;   // the value with the input at its lowest move
    double at_high = 0.0;  // and at its highest
  };
  std::vector<Bar> bars;
  double lo = nominal, hi = nominal;
  for (const SensitivityFactor factor : kSensitivityFactors) {
    Bar bar{factor};
    bool applies = false;
    for (const SensitivityCase& c : sensitivity.cases) {
      if (c.factor != factor || !c.applies)
        continue;
      applies = true;
      const double v = by_time ? c.wall_time_s / kDay : c.cost_usd;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      if (c.change == kSensitivityChanges.front())
        bar.at_low = v;
      if (c.change == kSensitivityChanges.back())
        bar.at_high = v;
    }
    if (applies)
      bars.push_back(bar);
  }
  std::stable_sort(bars.begin(), bars.end(), [](const Bar& a, const Bar& b) {
    return std::fabs(a.at_high - a.at_low) > std::fabs(b.at_high - b.at_low);
  });
  Frame f;
  f.left = 150.0;
  const double row = 34.0;
  f.height = f.top + f.bottom + row * static_cast<double>(bars.size());
  const Axis x = nice_axis(lo, hi);
  auto px = [&](double v) { return f.left + (v - x.lo) / (x.hi - x.lo) * f.plot_width(); };
  std::string s = printf_string(
      "<svg id=\"tornado\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
      "aria-label=\"Sensitivity of the winner's %s to its inputs\">\n",
      f.width, f.height, by_time ? "days" : "cost");
  for (double v = x.lo; v <= x.hi + 1e-9 * x.step; v += x.step) {
    s += printf_string(
        "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
        px(v), f.top, px(v), f.top + f.plot_height(), px(v), f.top + f.plot_height() + 18.0,
        tick_label(v, !by_time).c_str());
  }
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& bar = bars[i];
    const double y = f.top + row * static_cast<double>(i) + 6.0;
    for (const auto& [value, css, sign] :
         {std::tuple{bar.at_low, "c0", -1}, std::tuple{bar.at_high, "c1", +1}}) {
      const double x0 = std::min(px(value), px(nominal));
      s += printf_string(
          "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%s "
          "%+.0f%%: %s</title></rect>\n",
          css, x0, y, std::fabs(px(value) - px(nominal)), row - 12.0, to_string(bar.factor),
          sign * 100.0 * kSensitivityChanges.back(),
          by_time ? printf_string("%.2f days", value).c_str()
                  : printf_string("$%.0f", value).c_str());
    }
    s +=
        printf_string("<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                      f.left - 8.0, y + (row - 12.0) / 2.0 + 4.0, to_string(bar.factor));
  }
  s += printf_string(
      "<line class=\"limit\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
      "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n"
      "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n</svg>\n",
      px(nominal), f.top, px(nominal), f.top + f.plot_height(), f.left, f.top, f.plot_width(),
      f.plot_height(), f.left + f.plot_width() / 2.0, f.height - 10.0,
      by_time ? "the winner's all-in days to train" : "the winner's cost (USD)");
  return s;
}

// The sensitivity section: the tornado chart, the moves that change the winner and the robust
// choice beside the nominal one.
std::string sensitivity_section(const PlanSpec& plan, const PlanResult& result,
                                const Sensitivity& sensitivity) {
  std::string s = "<h2>Sensitivity</h2>\n";
  s += tornado_svg(plan, result.ranked.front(), sensitivity);
  s += printf_string(
      "<p>Each input moved alone by %+.0f%%, %+.0f%%, %+.0f%% and %+.0f%%; every ranked entry "
      "re-timed and re-ranked. Blue: the input lowered; orange: raised; dashed: as planned.</p>\n",
      100.0 * kSensitivityChanges[0], 100.0 * kSensitivityChanges[1],
      100.0 * kSensitivityChanges[2], 100.0 * kSensitivityChanges[3]);
  std::string changed;
  for (const SensitivityCase& c : sensitivity.cases) {
    if (c.applies && c.winner != 0) {
      changed += printf_string(
          "<li>%s %+.0f%%: %s first; the winner ranks #%d%s</li>\n", to_string(c.factor),
          100.0 * c.change, html_escape(entry_label(plan, result, result.ranked[c.winner])).c_str(),
          c.rank, c.meets_target ? "" : " and misses the target");
    }
  }
  s += changed.empty()
           ? "<p id=\"sensitivity-winner\">The winner stays first under every move.</p>\n"
           : "<p id=\"sensitivity-winner\">Moves that change the winner:</p><ul>\n" + changed +
                 "</ul>\n";
  const bool by_time = plan.objective == Objective::kMinTime;
  const auto worst = [&](double v) {
    return by_time ? printf_string("%.2f days", v / kDay)
                   : "$" + thousands(static_cast<long long>(std::llround(v)));
  };
  s += sensitivity.robust == 0
           ? printf_string(
                 "<p id=\"robust\">Robust choice: the winner itself (worst case %s, "
                 "missing the target in %d moves).</p>\n",
                 worst(sensitivity.robust_worst).c_str(), sensitivity.robust_misses)
           : printf_string(
                 "<p id=\"robust\">Robust choice: #%zu %s (worst case %s, missing the target in "
                 "%d moves); the winner's worst case is %s, missing it in %d.</p>\n",
                 sensitivity.robust + 1,
                 html_escape(entry_label(plan, result, result.ranked[sensitivity.robust])).c_str(),
                 worst(sensitivity.robust_worst).c_str(), sensitivity.robust_misses,
                 worst(sensitivity.nominal_worst).c_str(), sensitivity.nominal_misses);
  return s;
}

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;"
    "color:#1b1b1b;line-height:1.4}h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}"
    ".headline{font-size:1.15em;background:#eef4fb;padding:.6em .8em;border-radius:4px}"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.76em}"
    "th,td{border:1px solid #ccd;padding:2px 4px;text-align:right;white-space:nowrap}"
    "th{background:#f0f0f5;white-space:normal}td:nth-child(2),td:nth-child(3),td:nth-child(7),td:"
    "nth-child(9),"
    "td:nth-child(10){text-align:left}"
    "tr.miss td{color:#999}.warn{color:#a33;font-weight:bold}"
    "svg.chart{width:100%;max-width:900px;height:auto;display:block;margin:.5em 0}"
    ".grid{stroke:#ddd;stroke-width:1}.frame{fill:none;stroke:#666}"
    ".tick{font-size:12px;fill:#333}.axis-title{font-size:14px;fill:#111}"
    ".label{font-size:12px;fill:#123}.legend{font-size:13px;fill:#222}"
    ".front{fill:none;stroke:#1f5fa8;stroke-width:2}.point{fill:#1f5fa8}"
    ".other{fill:#bbb}.limit{stroke:#c00;stroke-width:2;stroke-dasharray:4 3}"
    ".c0{fill:#1f77b4}.c1{fill:#ff7f0e}.c2{fill:#2ca02c}.c3{fill:#d62728}.c4{fill:#9467bd}"
    ".c5{fill:#8c564b}.c6{fill:#e377c2}.c7{fill:#7f7f7f}.c8{fill:#bcbd22}.c9{fill:#17becf}"
    "code.args{display:block;white-space:pre-wrap;background:#f6f6f6;padding:.6em;"
    "word-break:break-word}";

// The winner's all-in time, part by part (hours): its steady iteration split as the analytic
// engine splits it (scaled to the iteration time it ranked on), then the goodput losses.
std::vector<std::pair<std::string, double>> time_parts(const RankedEntry& best,
                                                       const SimulationResult& detail,
                                                       double iteration_time_s) {
  const TimeBreakdown& b = detail.breakdown;
  const double comm = b.tp_comm_exposed_s + b.cp_comm_exposed_s + b.ep_comm_exposed_s +
                      b.pp_comm_exposed_s + b.dp_comm_exposed_s;
  const double other =
      std::max(0.0, detail.iteration_time_s - b.compute_s - comm - b.bubble_s - b.optimizer_s);
  const double steady_h = best.time_to_train_s / 3600.0;
  const double per = detail.iteration_time_s > 0.0 ? steady_h / detail.iteration_time_s : 0.0;
  // The confirmed iteration may be slower than the analytic one: the difference is contention.
  const double contention_h =
      std::max(0.0, steady_h * (1.0 - detail.iteration_time_s / iteration_time_s));
  const double scale = (steady_h - contention_h) / steady_h;
  std::vector<std::pair<std::string, double>> parts = {
      {"compute", b.compute_s * per * scale},        {"exposed communication", comm * per * scale},
      {"pipeline bubble", b.bubble_s * per * scale}, {"optimizer", b.optimizer_s * per * scale},
      {"other (framework)", other * per * scale},    {"contention (event engine)", contention_h}};
  const GoodputBreakdown& g = best.goodput;
  const std::pair<const char*, double> losses[] = {{"stragglers", g.stragglers_s},
                                                   {"batch ramp", g.batch_ramp_s},
                                                   {"start-up", g.startup_s},
                                                   {"evaluation", g.evaluation_s},
                                                   {"checkpoint writes", g.checkpoint_s},
                                                   {"lost work", g.lost_work_s},
                                                   {"restarts", g.restarts_s}};
  for (const auto& [name, seconds] : losses)
    parts.emplace_back(name, seconds / 3600.0);
  parts.erase(
      std::remove_if(parts.begin(), parts.end(), [](const auto& p) { return !(p.second > 0.0); }),
      parts.end());
  return parts;
}

std::string time_section(const PlanSpec& plan, const PlanResult& result) {
  const RankedEntry& best = result.ranked.front();
  const ScreenedCandidate& c = result.candidates[best.candidate];
  const Scenario sc = candidate_scenario(plan, c.candidate);
  const SimulationResult detail = estimate::estimate_iteration(sc, io::resolve_profile(sc));
  const auto parts = time_parts(best, detail, c.final_evaluation().iteration_time_s);
  std::string s = "<h2>Where the winner's time goes</h2>\n";
  s += stacked_bar_svg("time", "the winner's all-in hours by part", parts, 0.0, "");
  s += "<div class=\"scroll\"><table id=\"time-table\"><tr><th>part</th><th>hours</th>"
       "<th>share</th></tr>\n";
  double total = 0.0;
  for (const auto& p : parts)
    total += p.second;
  for (const auto& [name, hours] : parts) {
    s += printf_string(
        "<tr><td style=\"text-align:left\">%s</td><td>%.1f</td><td>%.2f%%</td></tr>\n",
        html_escape(name).c_str(), hours, 100.0 * hours / total);
  }
  s += printf_string(
      "<tr><th style=\"text-align:left\">all-in</th><th>%.1f</th><th>100%%</th>"
      "</tr></table></div>\n",
      total);
  s += "<p>The iteration's parts are the analytic engine's split of the busiest pipeline stage's "
       "time";
  s += c.confirmed ? ", scaled to the event engine's iteration time (its extra time is contention "
                     "for links)"
                   : "";
  s += "; the losses after them are the goodput model's (docs/planner.md, \"Goodput\").</p>\n";
  return s;
}

std::string memory_section(const PlanSpec& plan, const PlanResult& result) {
  const RankedEntry& best = result.ranked.front();
  const ScreenedCandidate& c = result.candidates[best.candidate];
  const Scenario sc = candidate_scenario(plan, c.candidate);
  const SimulationResult detail = estimate::estimate_iteration(sc, io::resolve_profile(sc));
  const MemoryEstimate& m = detail.memory;
  const StageMemory& w = m.stages[static_cast<size_t>(m.worst_stage)];
  const std::vector<std::pair<std::string, double>> parts = {
      {"weights", w.weights_bytes / kGiB},
      {"gradients", w.gradients_bytes / kGiB},
      {"optimizer", w.optimizer_bytes / kGiB},
      {"activations", w.activations_bytes / kGiB},
      {"embedding and logits", w.embedding_logits_bytes / kGiB},
      {"communication buffers", w.communication_bytes / kGiB},
      {"reserve", w.reserve_bytes / kGiB}};
  std::string s = "<h2>Memory per GPU against capacity</h2>\n";
  s +=
      printf_string("<p>Pipeline stage %d, the fullest: %.1f GiB of %.1f GiB (%.1f GiB free)</p>\n",
                    m.worst_stage, m.peak_bytes / kGiB, m.capacity_bytes / kGiB,
                    (m.capacity_bytes - m.peak_bytes) / kGiB);
  s += stacked_bar_svg("memory", "the winner's memory per GPU by part", parts,
                       m.capacity_bytes / kGiB,
                       printf_string("capacity %.1f GiB", m.capacity_bytes / kGiB));
  return s;
}

// A plan over several instances: each one's cheapest and fastest configuration, and which wins
// on cost and on time and why (planner/instance_comparison.hpp).
std::string instance_section(const PlanSpec& plan, const PlanResult& result) {
  if (plan.instances.size() < 2)
    return {};
  const std::vector<InstanceOption> options = compare_instances(plan, result);
  std::string s =
      "<h2>Which hardware: by instance</h2>\n<div class=\"scroll\"><table id=\"by-instance\">"
      "<tr><th>instance</th><th>pricing</th><th>$/GPU-h</th><th>cheapest: GPUs</th>"
      "<th>tokens/s/GPU</th><th>$/M tokens</th><th>all-in days</th><th>cost</th>"
      "<th>fastest: GPUs</th><th>all-in days</th><th>cost</th></tr>\n";
  for (const InstanceOption& o : options) {
    s += "<tr><td style=\"text-align:left\">" + html_escape(plan.instances[o.instance].name) +
         "</td><td>" + to_string(o.price.pricing) +
         printf_string("</td><td>%.2f</td>", o.usd_per_gpu_hour);
    if (!o.cheapest) {
      s += "<td colspan=\"8\">none meets the target</td></tr>\n";
      continue;
    }
    const RankedEntry& cheap = result.ranked[*o.cheapest];
    const RankedEntry& fast = result.ranked[*o.fastest];
    s += printf_string(
        "<td>%d</td><td>%.0f</td><td>%.3f</td><td>%.2f</td><td>$%s</td><td>%d</td><td>%.2f</td>"
        "<td>$%s</td></tr>\n",
        result.candidates[cheap.candidate].candidate.parallelism.num_gpus(), o.tokens_per_s_per_gpu,
        o.usd_per_million_tokens, cheap.wall_time_s / kDay,
        thousands(static_cast<long long>(std::llround(cheap.cost_usd))).c_str(),
        result.candidates[fast.candidate].candidate.parallelism.num_gpus(), fast.wall_time_s / kDay,
        thousands(static_cast<long long>(std::llround(fast.cost_usd))).c_str());
  }
  s += "</table></div>\n";
  for (const std::string& verdict : instance_verdicts(plan, result, options))
    s += "<p class=\"verdict\">" + html_escape(verdict) + "</p>\n";
  return s;
}

std::string left_out_section(const PlanSpec& plan, const PlanResult& result) {
  std::string s =
      "<h2>What the search left out, and why</h2>\n<div class=\"scroll\"><table "
      "id=\"pruned\"><tr><th>reason</th><th>candidates</th></tr>\n";
  for (int i = 0; i < kNumPruneReasons; ++i) {
    const long long n = result.pruned.counts[static_cast<size_t>(i)];
    if (n != 0) {
      s += printf_string("<tr><td style=\"text-align:left\">%s</td><td>%s</td></tr>\n",
                         to_string(static_cast<PruneReason>(i)), thousands(n).c_str());
    }
  }
  s += "</table></div>\n<p>docs/planner.md (\"Search\", step 2) says what each reason means.</p>\n";
  if (!plan.skipped_prices.empty()) {
    s += "<p>Pricing options not offered:</p><ul>\n";
    for (const SkippedPrice& k : plan.skipped_prices) {
      s += "<li>" + html_escape(k.instance) + ", " + to_string(k.pricing) + ": " +
           html_escape(k.reason) + "</li>\n";
    }
    s += "</ul>\n";
  }
  if (!result.notes.empty()) {
    s += "<p>Notes:</p><ul>\n";
    for (const auto& n : result.notes)
      s += "<li>" + html_escape(n) + "</li>\n";
    s += "</ul>\n";
  }
  return s;
}

}  // namespace

std::string plan_html(const PlanSpec& plan, const PlanResult& result, size_t top) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>capsim plan " +
      html_escape(plan.name) + "</title><style>" + kStyle + "</style></head><body>\n";
  s += "<h1>capsim plan: " + html_escape(plan.name) + "</h1>\n";
  const bool has_best = !result.ranked.empty() && result.ranked.front().meets_target;
  if (has_best) {
    const RankedEntry& b = result.ranked.front();
    const ScreenedCandidate& c = result.candidates[b.candidate];
    const int gpus = c.candidate.parallelism.num_gpus();
    s += printf_string(
        "<p class=\"headline\" id=\"headline\"><b>%d nodes of %s (%d GPUs, %s), %.2f days, "
        "$%s</b> all-in; steady state %.2f days, $%s. %s GPU-hours all-in.</p>\n",
        c.candidate.num_nodes, html_escape(instance_name(plan, b, result)).c_str(), gpus,
        to_string(b.price.pricing), b.wall_time_s / kDay,
        thousands(static_cast<long long>(std::llround(b.cost_usd))).c_str(),
        b.time_to_train_s / kDay,
        thousands(
            static_cast<long long>(std::llround(c.candidate.num_nodes * b.price.usd_per_node_hour *
                                                billed_hours(b.price.pricing, b.time_to_train_s))))
            .c_str(),
        thousands(static_cast<long long>(std::llround(gpus * b.wall_time_s / 3600.0))).c_str());
    for (const std::string& w : memory_warnings(plan, result))
      s += "<p class=\"warn\">" + html_escape(w) + "</p>\n";
    if (plan.shared_fabric && result.shared_fabric) {
      s += "<p id=\"shared-fabric\">" +
           html_escape(shared_fabric_line(*plan.shared_fabric, *result.shared_fabric)) + "</p>\n";
    }
  } else {
    s += "<p class=\"headline\" id=\"headline\">No configuration meets the target: " +
         html_escape(no_best_reason(plan, result)) + "</p>\n";
  }
  s += printf_string(
      "<p>Objective %s; %.4g tokens at %.4g tokens/s or more; enumerated %s, screened %s, "
      "confirmed %zu with the event engine%s.</p>\n",
      to_string(plan.objective), plan.tokens, result.required_tokens_per_s,
      thousands(result.enumerated).c_str(), thousands(result.screened).c_str(),
      result.candidates.size(),
      plan.failure ? "; days and cost are all-in (goodput model on)"
                   : "; the goodput model is off: days and cost are steady state");
  s += "<h2>Ranked</h2>\n<div class=\"scroll\"><table id=\"ranked\">\n";
  s += kTableHead;
  std::vector<RankedEntry> shown;
  for (size_t i = 0; i < result.ranked.size() && (top == 0 || i < top); ++i) {
    s += entry_row(plan, result, i + 1, result.ranked[i]);
    shown.push_back(result.ranked[i]);
  }
  s += "</table></div>\n";
  if (!result.pareto.empty()) {
    s += "<h2>Pareto front: cost against days</h2>\n";
    s += pareto_svg(plan, result, shown);
    s += "<p>Blue: the front (no entry is both cheaper and faster); grey: the ranked entries "
         "above.</p>\n";
  }
  s += instance_section(plan, result);
  if (has_best) {
    s += time_section(plan, result);
    s += memory_section(plan, result);
    if (result.sensitivity)
      s += sensitivity_section(plan, result, *result.sensitivity);
    const ScreenedCandidate& c = result.candidates[result.ranked.front().candidate];
    const Scenario best = candidate_scenario(plan, c.candidate);
    s += "<h2>How to run the winner</h2>\n<p>Megatron-LM arguments:</p>\n<code class=\"args\" "
         "id=\"megatron\">" +
         html_escape(megatron_arguments(best)) + "</code>\n";
    if (const std::vector<std::string> left = megatron_unexpressed(best); !left.empty()) {
      s += "<p>Not in these arguments:</p>\n<ul>\n";
      for (const std::string& item : left)
        s += "<li>" + html_escape(item) + "</li>\n";
      s += "</ul>\n";
    }
  }
  s += left_out_section(plan, result);
  s += "</body></html>\n";
  return s;
}

}  // namespace capsim::planner
