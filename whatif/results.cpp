#include "whatif/results.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <sstream>

#include "io/html_escape.hpp"
#include "io/rounding.hpp"
#include "io/text_format.hpp"

namespace capsim::whatif {
namespace {

// Decimals past the point the JSON keeps: readable and stable; totals keep every digit.
constexpr int kDecimals = 6;

// A per-run figure; none where it does not exist (job completion times when no job finished).
struct Metric {
  const char* key;
  std::function<std::optional<double>(const PolicyResult&)> get;
};

const std::vector<Metric>& metrics() {
  static const std::vector<Metric> kMetrics{
      {"cost_usd", [](const PolicyResult& r) { return r.cost_usd; }},
      {"gpu_hours_billed", [](const PolicyResult& r) { return r.gpu_hours_billed; }},
      {"gpu_hours_busy", [](const PolicyResult& r) { return r.gpu_hours_busy; }},
      {"utilization", [](const PolicyResult& r) { return r.utilization; }},
      {"queue_wait_p50_s", [](const PolicyResult& r) { return r.queue_wait_p50_s; }},
      {"queue_wait_p95_s", [](const PolicyResult& r) { return r.queue_wait_p95_s; }},
      {"queue_wait_max_s", [](const PolicyResult& r) { return r.queue_wait_max_s; }},
      {"queue_wait_mean_s", [](const PolicyResult& r) { return r.queue_wait_mean_s; }},
      {"queue_wait_p99_s", [](const PolicyResult& r) { return r.queue_wait_p99_s; }},
      {"jct_p50_s", [](const PolicyResult& r) { return r.jct_p50_s; }},
      {"jct_p95_s", [](const PolicyResult& r) { return r.jct_p95_s; }},
      {"jct_max_s", [](const PolicyResult& r) { return r.jct_max_s; }},
      {"cost_per_useful_gpu_hour_usd",
       [](const PolicyResult& r) { return r.cost_per_useful_gpu_hour_usd; }},
      {"jobs_finished", [](const PolicyResult& r) { return r.jobs_finished; }},
      {"goodput_lost_gpu_hours", [](const PolicyResult& r) { return r.lost.total(); }},
      {"scale_ups", [](const PolicyResult& r) { return r.scale_ups; }},
      {"scale_downs", [](const PolicyResult& r) { return r.scale_downs; }},
      {"end_time_s", [](const PolicyResult& r) { return r.end_time_s; }},
  };
  return kMetrics;
}

double mean_of(const std::vector<PolicyResult>& runs,
               const std::function<double(const PolicyResult&)>& get) {
  double s = 0.0;
  for (const auto& r : runs)
    s += get(r);
  return runs.empty() ? 0.0 : s / static_cast<double>(runs.size());
}

// The values of a metric over the runs that have it, in run order.
std::vector<double> present_values(const std::vector<PolicyResult>& runs, const Metric& m) {
  std::vector<double> out;
  for (const auto& r : runs) {
    if (const std::optional<double> v = m.get(r))
      out.push_back(*v);
  }
  return out;
}

// The mean of a metric over the runs that have it; none when no run has it.
std::optional<double> mean_of(const std::vector<PolicyResult>& runs, const Metric& m) {
  const std::vector<double> values = present_values(runs, m);
  if (values.empty())
    return std::nullopt;
  double s = 0.0;
  for (const double v : values)
    s += v;
  return s / static_cast<double>(values.size());
}

// A rounded figure, or JSON null for none.
nlohmann::json rounded_or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(io::round_decimals(*v, kDecimals)) : nlohmann::json(nullptr);
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> optional_from_json(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

nlohmann::json lost_json(const GoodputLoss& l) {
  nlohmann::json j = nlohmann::json::object();
  j["failure"] = io::round_decimals(l.failure_gpu_hours, kDecimals);
  j["preemption"] = io::round_decimals(l.preemption_gpu_hours, kDecimals);
  j["disruption"] = io::round_decimals(l.disruption_gpu_hours, kDecimals);
  j["restart"] = io::round_decimals(l.restart_gpu_hours, kDecimals);
  j["checkpoint"] = io::round_decimals(l.checkpoint_gpu_hours, kDecimals);
  return j;
}

// Hours with two decimals and an "h"; "-" for none.
std::string hours(const std::optional<double>& s) {
  return s ? io::printf_string("%.2fh", *s / 3600.0) : std::string("-");
}

}  // namespace

nlohmann::json run_to_json(const PolicyResult& r) {
  nlohmann::json j;
  j["name"] = r.name;
  j["preset"] = r.preset;
  j["seed"] = r.seed;
  j["end_time_s"] = r.end_time_s;
  j["cost_usd"] = r.cost_usd;
  j["cost_by_pricing_usd"] = r.cost_by_pricing_usd;
  j["gpu_hours_billed"] = r.gpu_hours_billed;
  j["gpu_hours_busy"] = r.gpu_hours_busy;
  j["utilization"] = r.utilization;
  j["queue_wait_p50_s"] = r.queue_wait_p50_s;
  j["queue_wait_p95_s"] = r.queue_wait_p95_s;
  j["queue_wait_max_s"] = r.queue_wait_max_s;
  j["queue_wait_mean_s"] = r.queue_wait_mean_s;
  j["queue_wait_p99_s"] = r.queue_wait_p99_s;
  j["jct_p50_s"] = optional_json(r.jct_p50_s);
  j["jct_p95_s"] = optional_json(r.jct_p95_s);
  j["jct_max_s"] = optional_json(r.jct_max_s);
  j["cost_per_useful_gpu_hour_usd"] = optional_json(r.cost_per_useful_gpu_hour_usd);
  j["jobs_total"] = r.jobs_total;
  j["jobs_finished"] = r.jobs_finished;
  j["lost"] = {r.lost.failure_gpu_hours, r.lost.preemption_gpu_hours, r.lost.disruption_gpu_hours,
               r.lost.restart_gpu_hours, r.lost.checkpoint_gpu_hours};
  j["counts"] = {r.scale_ups,     r.scale_downs,        r.launch_failures, r.provision_timeouts,
                 r.node_failures, r.spot_interruptions, r.job_restarts,    r.job_resizes};
  nlohmann::json t = nlohmann::json::array();
  for (const auto& s : r.timeline.samples) {
    t.push_back({s.time_s, s.nodes_booting, s.nodes_idle, s.nodes_busy, s.nodes_draining,
                 s.nodes_failed, s.gpus_busy, s.jobs_running, s.jobs_queued});
  }
  j["timeline"] = t;
  return j;
}

PolicyResult run_from_json(const nlohmann::json& j) {
  PolicyResult r;
  r.name = j.at("name").get<std::string>();
  r.preset = j.at("preset").get<std::string>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.end_time_s = j.at("end_time_s").get<double>();
  r.cost_usd = j.at("cost_usd").get<double>();
  r.cost_by_pricing_usd = j.at("cost_by_pricing_usd").get<std::map<std::string, double>>();
  r.gpu_hours_billed = j.at("gpu_hours_billed").get<double>();
  r.gpu_hours_busy = j.at("gpu_hours_busy").get<double>();
  r.utilization = j.at("utilization").get<double>();
  r.queue_wait_p50_s = j.at("queue_wait_p50_s").get<double>();
  r.queue_wait_p95_s = j.at("queue_wait_p95_s").get<double>();
  r.queue_wait_max_s = j.at("queue_wait_max_s").get<double>();
  r.queue_wait_mean_s = j.at("queue_wait_mean_s").get<double>();
  r.queue_wait_p99_s = j.at("queue_wait_p99_s").get<double>();
  r.jct_p50_s = optional_from_json(j.at("jct_p50_s"));
  r.jct_p95_s = optional_from_json(j.at("jct_p95_s"));
  r.jct_max_s = optional_from_json(j.at("jct_max_s"));
  r.cost_per_useful_gpu_hour_usd = optional_from_json(j.at("cost_per_useful_gpu_hour_usd"));
  r.jobs_total = j.at("jobs_total").get<int>();
  r.jobs_finished = j.at("jobs_finished").get<int>();
  const auto& l = j.at("lost");
  r.lost = {l.at(0).get<double>(), l.at(1).get<double>(), l.at(2).get<double>(),
            l.at(3).get<double>(), l.at(4).get<double>()};
  const auto& c = j.at("counts");
  r.scale_ups = c.at(0).get<int>();
  r.scale_downs = c.at(1).get<int>();
  r.launch_failures = c.at(2).get<int>();
  r.provision_timeouts = c.at(3).get<int>();
  r.node_failures = c.at(4).get<int>();
  r.spot_interruptions = c.at(5).get<int>();
  r.job_restarts = c.at(6).get<int>();
  r.job_resizes = c.at(7).get<int>();
  r.timeline.name = r.name;
  for (const auto& s : j.at("timeline")) {
    traces::TimelineSample x;
    x.time_s = s.at(0).get<double>();
    x.nodes_booting = s.at(1).get<int>();
    x.nodes_idle = s.at(2).get<int>();
    x.nodes_busy = s.at(3).get<int>();
    x.nodes_draining = s.at(4).get<int>();
    x.nodes_failed = s.at(5).get<int>();
    x.gpus_busy = s.at(6).get<int>();
    x.jobs_running = s.at(7).get<int>();
    x.jobs_queued = s.at(8).get<int>();
    r.timeline.samples.push_back(x);
  }
  return r;
}

nlohmann::json summary_json(const WhatIf& whatif, const std::vector<PolicyRuns>& policies) {
  nlohmann::json out;
  out["schema"] = "capsim.whatif-result/v1";
  out["name"] = whatif.name;
  out["jobs"] = whatif.jobs.size();
  out["replicas"] = policies.empty() ? 0 : policies.front().runs.size();
  // What the policies' configuration files say that capsim does not model (allowed ones).
  if (!whatif.notes.empty()) {
    nlohmann::json notes = nlohmann::json::array();
    for (const auto& n : whatif.notes)
      notes.push_back({{"file", n.file}, {"pointer", n.pointer}, {"message", n.message}});
    out["notes"] = notes;
  }
  nlohmann::json seeds = nlohmann::json::array();
  if (!policies.empty()) {
    for (const auto& r : policies.front().runs)
      seeds.push_back(r.seed);
  }
  out["seeds"] = seeds;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : policies) {
    nlohmann::json j;
    j["name"] = p.name;
    j["preset"] = p.preset;
    for (const auto& m : metrics())
      j[m.key] = rounded_or_null(mean_of(p.runs, m));
    j["jobs_total"] = whatif.jobs.size();
    nlohmann::json cost = nlohmann::json::object();
    for (const auto& r : p.runs) {
      for (const auto& [k, v] : r.cost_by_pricing_usd) {
        cost[k] = (cost.contains(k) ? cost.at(k).get<double>() : 0.0) +
                  v / static_cast<double>(p.runs.size());
      }
    }
    for (auto& [k, v] : cost.items())
      v = io::round_decimals(v.get<double>(), kDecimals);
    j["cost_by_pricing_usd"] = cost;
    GoodputLoss l;
    for (const auto& r : p.runs) {
      const auto n = static_cast<double>(p.runs.size());
      l.failure_gpu_hours += r.lost.failure_gpu_hours / n;
      l.preemption_gpu_hours += r.lost.preemption_gpu_hours / n;
      l.disruption_gpu_hours += r.lost.disruption_gpu_hours / n;
      l.restart_gpu_hours += r.lost.restart_gpu_hours / n;
      l.checkpoint_gpu_hours += r.lost.checkpoint_gpu_hours / n;
    }
    j["goodput_lost_by_cause_gpu_hours"] = lost_json(l);
    auto count_mean = [&](int PolicyResult::*field) {
      return io::round_decimals(
          mean_of(p.runs, [field](const PolicyResult& r) { return r.*field; }), kDecimals);
    };
    j["launch_failures"] = count_mean(&PolicyResult::launch_failures);
    j["provision_timeouts"] = count_mean(&PolicyResult::provision_timeouts);
    j["node_failures"] = count_mean(&PolicyResult::node_failures);
    j["spot_interruptions"] = count_mean(&PolicyResult::spot_interruptions);
    j["job_restarts"] = count_mean(&PolicyResult::job_restarts);
    j["job_resizes"] = count_mean(&PolicyResult::job_resizes);
    if (p.runs.size() > 1) {
      nlohmann::json spread = nlohmann::json::object();
      for (const auto& m : metrics()) {
        // Over the replicas that have the metric; none when fewer than two do.
        const std::vector<double> values = present_values(p.runs, m);
        if (values.size() < 2) {
          spread[m.key] = {{"std", nullptr}, {"min", nullptr}, {"max", nullptr}};
          continue;
        }
        const double mean = *mean_of(p.runs, m);
        double var = 0.0, lo = values.front(), hi = lo;
        for (const double v : values) {
          var += (v - mean) * (v - mean);
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        // Sample standard deviation (n - 1).
        const double sd = std::sqrt(var / static_cast<double>(values.size() - 1));
        spread[m.key] = {{"std", io::round_decimals(sd, kDecimals)},
                         {"min", io::round_decimals(lo, kDecimals)},
                         {"max", io::round_decimals(hi, kDecimals)}};
      }
      j["spread"] = spread;
    }
    list.push_back(j);
  }
  out["policies"] = list;
  return out;
}

std::string comparison_table(const WhatIf& whatif, const std::vector<PolicyRuns>& policies) {
  std::ostringstream os;
  const std::size_t n = policies.empty() ? 0 : policies.front().runs.size();
  os << "what-if \"" << whatif.name << "\": " << whatif.jobs.size() << " jobs, " << n
     << (n == 1 ? " replica" : " replicas (means)") << "\n\n";
  os << io::printf_string(
      "%-34s %11s %9s %9s %6s %10s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s %5s %5s\n", "policy",
      "cost $", "GPU-h bil", "GPU-h bsy", "util", "$/usefulGh", "wait mean", "wait p50", "wait p95",
      "wait p99", "wait max", "JCT p50", "JCT p95", "JCT max", "end", "lost GPUh", "done", "up",
      "down");
  for (const auto& p : policies) {
    auto m = [&](const std::function<double(const PolicyResult&)>& f) {
      return mean_of(p.runs, f);
    };
    auto jct_mean = [&](std::optional<double> PolicyResult::*field) {
      return mean_of(p.runs, Metric{"", [field](const PolicyResult& r) { return r.*field; }});
    };
    const std::optional<double> per_useful = jct_mean(&PolicyResult::cost_per_useful_gpu_hour_usd);
    const std::string per_useful_text = per_useful ? io::printf_string("%.2f", *per_useful) : "-";
    os << io::printf_string(
        "%-34s %11.0f %9.1f %9.1f %5.1f%% %10s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9.1f "
        "%3.0f/%-3zu %5.0f %5.0f\n",
        p.name.substr(0, 34).c_str(), m([](auto& r) { return r.cost_usd; }),
        m([](auto& r) { return r.gpu_hours_billed; }), m([](auto& r) { return r.gpu_hours_busy; }),
        100 * m([](auto& r) { return r.utilization; }), per_useful_text.c_str(),
        hours(m([](auto& r) { return r.queue_wait_mean_s; })).c_str(),
        hours(m([](auto& r) { return r.queue_wait_p50_s; })).c_str(),
        hours(m([](auto& r) { return r.queue_wait_p95_s; })).c_str(),
        hours(m([](auto& r) { return r.queue_wait_p99_s; })).c_str(),
        hours(m([](auto& r) { return r.queue_wait_max_s; })).c_str(),
        hours(jct_mean(&PolicyResult::jct_p50_s)).c_str(),
        hours(jct_mean(&PolicyResult::jct_p95_s)).c_str(),
        hours(jct_mean(&PolicyResult::jct_max_s)).c_str(),
        hours(m([](auto& r) { return r.end_time_s; })).c_str(),
        m([](auto& r) { return r.lost.total(); }), m([](auto& r) { return r.jobs_finished; }),
        whatif.jobs.size(), m([](auto& r) { return r.scale_ups; }),
        m([](auto& r) { return r.scale_downs; }));
  }
  return os.str();
}

namespace {

// One line chart: x = hours, one polyline per series, axes with min/max labels.
std::string svg_chart(
    const std::string& title,
    const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series) {
  const double w = 720, h = 220, l = 50, r = 10, t = 24, b = 30;
  double xmax = 1e-9, ymax = 1e-9;
  for (const auto& [name, pts] : series) {
    for (const auto& [x, y] : pts) {
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  }
  static constexpr std::array<const char*, 10> kColors{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                       "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                                       "#bcbd22", "#17becf"};
  const std::size_t legend_rows = (series.size() + 3) / 4;  // four entries a row
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\""
     << h + 18.0 * static_cast<double>(legend_rows)
     << "\" font-family=\"sans-serif\" font-size=\"11\">";
  os << "<text x=\"" << l << "\" y=\"14\" font-weight=\"bold\">" << title << "</text>";
  os << "<line x1=\"" << l << "\" y1=\"" << h - b << "\" x2=\"" << w - r << "\" y2=\"" << h - b
     << "\" stroke=\"#000\"/><line x1=\"" << l << "\" y1=\"" << t << "\" x2=\"" << l << "\" y2=\""
     << h - b << "\" stroke=\"#000\"/>";
  os << "<text x=\"" << l - 4 << "\" y=\"" << t + 4 << "\" text-anchor=\"end\">"
     << io::printf_string("%.0f", ymax) << "</text><text x=\"" << l - 4 << "\" y=\"" << h - b
     << "\" text-anchor=\"end\">0</text>";
  os << "<text x=\"" << w - r << "\" y=\"" << h - b + 14 << "\" text-anchor=\"end\">"
     << io::printf_string("%.1f h", xmax) << "</text><text x=\"" << l << "\" y=\"" << h - b + 14
     << "\">0 h</text>";
  std::size_t i = 0;
  for (const auto& [name, pts] : series) {
    const char* color = kColors[i % kColors.size()];
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"";
    for (const auto& [x, y] : pts) {
      os << io::printf_string("%.1f", l + (w - l - r) * x / xmax) << ','
         << io::printf_string("%.1f", h - b - (h - b - t) * y / ymax) << ' ';
    }
    os << "\"/>";
    const std::size_t legend_row = i / 4, legend_column = i % 4;
    const double lx = l + static_cast<double>(legend_column) * 170,
                 ly = h + 4 + 18 * static_cast<double>(legend_row);
    os << "<rect x=\"" << lx << "\" y=\"" << ly - 9 << "\" width=\"10\" height=\"10\" fill=\""
       << color << "\"/><text x=\"" << lx + 14 << "\" y=\"" << ly << "\">" << name << "</text>";
    ++i;
  }
  os << "</svg>";
  return os.str();
}

std::string svg_bars(const std::string& title,
                     const std::vector<std::pair<std::string, double>>& bars) {
  const double w = 720, row = 20, l = 230;
  double vmax = 1e-9;
  for (const auto& [n, v] : bars)
    vmax = std::max(vmax, v);
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\""
     << 24 + row * static_cast<double>(bars.size())
     << "\" font-family=\"sans-serif\" font-size=\"11\">";
  os << "<text x=\"0\" y=\"14\" font-weight=\"bold\">" << title << "</text>";
  double y = 22;
  for (const auto& [n, v] : bars) {
    const double bw = (w - l - 80) * v / vmax;
    os << "<text x=\"" << l - 6 << "\" y=\"" << y + 13 << "\" text-anchor=\"end\">" << n
       << "</text>";
    os << "<rect x=\"" << l << "\" y=\"" << y + 3 << "\" width=\"" << io::printf_string("%.1f", bw)
       << "\" height=\"14\" fill=\"#1f77b4\"/>";
    os << "<text x=\"" << l + bw + 4 << "\" y=\"" << y + 14 << "\">$"
       << io::printf_string("%.0f", v) << "</text>";
    y += row;
  }
  os << "</svg>";
  return os.str();
}

}  // namespace

std::string html_report(const WhatIf& whatif, const std::vector<PolicyRuns>& policies) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>capsim what-if: "
     << io::html_escape(whatif.name) << "</title><style>body{font-family:sans-serif;margin:2em}"
     << "pre{background:#f6f6f6;padding:1em}</style></head><body>\n";
  os << "<h1>What-if: " << io::html_escape(whatif.name) << "</h1>\n";
  os << "<pre>" << io::html_escape_text(comparison_table(whatif, policies)) << "</pre>\n";
  std::vector<std::pair<std::string, double>> bars;
  bars.reserve(policies.size());
  for (const auto& p : policies) {
    bars.emplace_back(io::html_escape(p.name),
                      mean_of(p.runs, [](const PolicyResult& r) { return r.cost_usd; }));
  }
  os << svg_bars("Cost per policy (USD, mean over replicas)", bars) << "\n";
  using Series = std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>;
  Series on, queue, gpus;
  for (const auto& p : policies) {
    if (p.runs.empty())
      continue;
    std::vector<std::pair<double, double>> a, q, g;
    for (const auto& s : p.runs.front().timeline.samples) {
      const double x = s.time_s / 3600.0;
      a.emplace_back(x, s.nodes_booting + s.nodes_idle + s.nodes_busy + s.nodes_draining);
      q.emplace_back(x, s.jobs_queued);
      g.emplace_back(x, s.gpus_busy);
    }
    on.emplace_back(io::html_escape(p.name), a);
    queue.emplace_back(io::html_escape(p.name), q);
    gpus.emplace_back(io::html_escape(p.name), g);
  }
  os << "<h2>Nodes powered (booting, idle, busy, draining)</h2>\n"
     << svg_chart("nodes on", on) << "\n";
  os << "<h2>Jobs queued</h2>\n" << svg_chart("jobs queued", queue) << "\n";
  os << "<h2>GPUs busy</h2>\n" << svg_chart("GPUs busy", gpus) << "\n";
  for (const auto& p : policies) {
    if (p.runs.empty())
      continue;
    Series states;
    std::vector<std::pair<double, double>> boot, idle, busy, drain, failed;
    for (const auto& s : p.runs.front().timeline.samples) {
      const double x = s.time_s / 3600.0;
      boot.emplace_back(x, s.nodes_booting);
      idle.emplace_back(x, s.nodes_idle);
      busy.emplace_back(x, s.nodes_busy);
      drain.emplace_back(x, s.nodes_draining);
      failed.emplace_back(x, s.nodes_failed);
    }
    states = {
        {"booting", boot}, {"idle", idle}, {"busy", busy}, {"draining", drain}, {"failed", failed}};
    os << "<h3>" << io::html_escape(p.name) << ": nodes by state</h3>\n"
       << svg_chart(io::html_escape(p.name), states) << "\n";
  }
  os << "</body></html>\n";
  return os.str();
}

}  // namespace capsim::whatif
