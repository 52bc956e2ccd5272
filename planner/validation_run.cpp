#include "planner/validation_run.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>

#include "models/byte_units.hpp"
#include "sim/isolated_simulation.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/layout_ranking.hpp"
#include "io/profile_io.hpp"
#include "io/rounding.hpp"

namespace capsim::planner {
namespace {

struct GroupStats {
  int n = 0;
  double abs_sum = 0.0;
  double signed_sum = 0.0;  // the bias: negative = too optimistic
  int within_10_pct = 0;

  void add(double error_pct) {
    ++n;
    abs_sum += std::fabs(error_pct);
    signed_sum += error_pct;
    within_10_pct += std::fabs(error_pct) <= 10.0 ? 1 : 0;
  }
  [[nodiscard]] nlohmann::json to_json() const {
    return {{"n", n},
            {"mape_pct", io::round_significant(abs_sum / n, 4)},
            {"mean_error_pct", io::round_significant(signed_sum / n, 4)},
            {"within_10_pct", within_10_pct}};
  }
};

// The groups of runs that differ only in layout, and how well the predictions order them.
nlohmann::json layout_ranking_json(const std::vector<CaseOutcome>& outcomes) {
  std::vector<const io::ValidationCase*> cases;
  std::vector<double> predicted;
  for (const auto& o : outcomes) {
    cases.push_back(o.vc);
    predicted.push_back(o.predicted_s);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const io::LayoutRanking& g : io::rank_layouts(cases, predicted)) {
    out.push_back({{"label", g.label},
                   {"n", g.cases.size()},
                   {"layouts", g.layouts},
                   {"spearman", io::round_significant(g.spearman, 4)},
                   {"pick", cases[g.pick]->id},
                   {"best", cases[g.best]->id},
                   {"pick_cost_pct", io::round_significant(g.pick_cost_pct, 4)}});
  }
  return out;
}

nlohmann::json to_json(const std::vector<CaseOutcome>& outcomes, const std::string& engine) {
  using nlohmann::json;
  json cases = json::array();
  std::map<std::string, GroupStats> groups;
  GroupStats all;
  double max_abs = 0.0;
  int memory_misses = 0;
  for (const auto& o : outcomes) {
    cases.push_back(
        {{"id", o.vc->id},
         {"group", o.vc->group},
         {"measured_iteration_time_s", io::round_significant(o.vc->measured_iteration_time_s)},
         {"predicted_iteration_time_s", io::round_significant(o.predicted_s)},
         {"error_pct", io::round_significant(o.error_pct, 4)},
         {"predicted_peak_memory_gib", io::round_significant(o.peak_memory_gib, 4)},
         {"fits_in_memory", o.fits_in_memory}});
    memory_misses += o.fits_in_memory ? 0 : 1;
    all.add(o.error_pct);
    max_abs = std::max(max_abs, std::fabs(o.error_pct));
    groups[o.vc->group].add(o.error_pct);
  }
  json by_group = json::object();
  for (const auto& [name, g] : groups)
    by_group[name] = g.to_json();
  json summary = all.to_json();
  summary["max_abs_error_pct"] = io::round_significant(max_abs, 4);
  summary["predicted_out_of_memory"] = memory_misses;
  summary["by_group"] = by_group;
  summary["layout_ranking"] = layout_ranking_json(outcomes);
  return {{"engine", engine}, {"cases", cases}, {"summary", summary}};
}

CaseOutcome predict_case(const io::ValidationCase& vc, const std::string& engine) {
  const HardwareProfile profile = io::resolve_profile(vc.scenario);
  // SimGrid runs one simulation per process: each event-level case runs in a child. Only the
  // time and memory are reported, so the estimator skips the breakdown's second replay.
  const SimulationResult r =
      engine == "event"
          ? sim::simulate_iteration_in_child(vc.scenario, profile)
          : estimate::estimate_iteration(vc.scenario, profile, estimate::EstimateDetail::kTimeOnly);
  const double predicted = r.iteration_time_s;
  return {&vc, predicted,
          100.0 * (predicted - vc.measured_iteration_time_s) / vc.measured_iteration_time_s,
          r.memory.peak_bytes / kGiB, r.memory.fits};
}

nlohmann::json not_predicted_json(const Predictions& p) {
  nlohmann::json not_predicted = nlohmann::json::array();
  for (const auto& r : p.rejected)
    not_predicted.push_back({{"id", r.id}, {"pointer", r.pointer}, {"error", r.error.what()}});
  for (const auto& [id, what] : p.failed)
    not_predicted.push_back({{"id", id}, {"error", what}});
  return not_predicted;
}

}  // namespace

Predictions predict_cases(const io::ValidationFile& file, const std::string& engine) {
  Predictions p;
  p.rejected = file.rejected;
  for (const auto& vc : file.cases) {
    try {
      p.outcomes.push_back(predict_case(vc, engine));
    } catch (const io::InputError& e) {
      p.rejected.push_back({vc.id, vc.pointer, e});
    } catch (const std::exception& e) {
      p.failed.emplace_back(vc.id, e.what());
    }
  }
  return p;
}

nlohmann::json validation_report_json(const Predictions& predictions, const std::string& engine) {
  nlohmann::json report = to_json(predictions.outcomes, engine);
  report["not_predicted"] = not_predicted_json(predictions);
  return report;
}

}  // namespace capsim::planner
