#include "planner/sensitivity.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "planner/plan.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/profile_io.hpp"
#include "io/rounding.hpp"
#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

// A ranked entry's identity across re-rankings: its candidate and its pricing option.
using EntryKey = std::pair<size_t, Pricing>;

EntryKey key_of(const RankedEntry& e) {
  return {e.candidate, e.price.pricing};
}

bool moves_time(SensitivityFactor f) {
  return f == SensitivityFactor::kNicBandwidth || f == SensitivityFactor::kKernelEfficiency ||
         f == SensitivityFactor::kHbmBandwidth;
}

// The value the plan's objective minimises: days for min_time, cost otherwise (the Pareto
// ranking orders by cost too).
double objective_value(const PlanSpec& plan, const RankedEntry& e) {
  return plan.objective == Objective::kMinTime ? e.wall_time_s : e.cost_usd;
}

// The analytic iteration times of every candidate as planned and under each time-moving change,
// from one profile per (instance, multi-node) resolved once.
class Retimer {
 public:
  Retimer(const PlanSpec& plan, const PlanResult& result) : plan_(plan), result_(result) {}

  // The candidate's analytic time under `factor` moved by `change` (0: as planned).
  double time_s(size_t candidate, SensitivityFactor factor, double change) {
    const Candidate& c = result_.candidates[candidate].candidate;
    Scenario sc = candidate_scenario(plan_, c);
    const HardwareProfile& planned = profile_for(c, sc);
    const double scale = 1.0 + change;
    if (factor == SensitivityFactor::kNicBandwidth)
      sc.cluster.nic_bandwidth_bytes_per_s *= scale;
    if (factor == SensitivityFactor::kHbmBandwidth)
      sc.cluster.gpu.hbm_bandwidth_bytes_per_s *= scale;
    if (factor == SensitivityFactor::kNicBandwidth)
      return time_of(sc, planned);
    // The moves of the profile's own figures, on a copy of it.
    HardwareProfile moved = planned;
    if (factor == SensitivityFactor::kKernelEfficiency)
      moved.software_efficiency *= scale;
    if (factor == SensitivityFactor::kHbmBandwidth)
      moved.gpu.hbm_bandwidth_bytes_per_s *= scale;
    return time_of(sc, moved);
  }

 private:
  static double time_of(const Scenario& sc, const HardwareProfile& profile) {
    return estimate::estimate_iteration(sc, profile, estimate::EstimateDetail::kTimeOnly)
        .iteration_time_s;
  }

  const HardwareProfile& profile_for(const Candidate& c, const Scenario& sc) {
    const auto key = std::make_pair(c.instance, c.num_nodes > 1);
    auto it = profiles_.find(key);
    if (it == profiles_.end())
      it = profiles_.emplace(key, io::resolve_profile(sc)).first;
    return it->second;
  }

  const PlanSpec& plan_;
  const PlanResult& result_;
  std::map<std::pair<int, bool>, HardwareProfile> profiles_;
};

// `result` with every candidate's evaluations stretched by its time ratio under the move.
PlanResult retimed(const PlanResult& result, const std::vector<double>& ratios) {
  PlanResult moved;
  moved.candidates = result.candidates;
  for (size_t i = 0; i < moved.candidates.size(); ++i) {
    for (Evaluation* e : {&moved.candidates[i].analytic, &moved.candidates[i].event}) {
      e->iteration_time_s *= ratios[i];
      e->tokens_per_s /= ratios[i];
      e->mfu /= ratios[i];
    }
  }
  return moved;
}

// Worst objective value and target misses of one entry over the nominal plan and the moves.
struct WorstCase {
  double worst = 0.0;
  int misses = 0;
};

}  // namespace

const char* to_string(SensitivityFactor factor) {
  switch (factor) {
    case SensitivityFactor::kNicBandwidth:
      return "nic_bandwidth";
    case SensitivityFactor::kKernelEfficiency:
      return "kernel_efficiency";
    case SensitivityFactor::kHbmBandwidth:
      return "hbm_bandwidth";
    case SensitivityFactor::kFailureRate:
      return "failure_rate";
    case SensitivityFactor::kPrice:
      return "price";
  }
  return "?";
}

std::string entry_label(const PlanSpec& plan, const PlanResult& result, const RankedEntry& entry) {
  const Candidate& c = result.candidates[entry.candidate].candidate;
  return io::printf_string("%d x %s %s %s", c.num_nodes,
                           plan.instances[static_cast<size_t>(c.instance)].name.c_str(),
                           layout_label(c.parallelism).c_str(), to_string(entry.price.pricing));
}

std::optional<Sensitivity> plan_sensitivity(const PlanSpec& plan, const PlanResult& result) {
  if (result.ranked.empty() || !result.ranked.front().meets_target)
    return std::nullopt;
  std::map<EntryKey, size_t> nominal_index;
  std::map<EntryKey, WorstCase> worst;
  for (size_t i = 0; i < result.ranked.size(); ++i) {
    const RankedEntry& e = result.ranked[i];
    nominal_index[key_of(e)] = i;
    worst[key_of(e)] = {objective_value(plan, e), e.meets_target ? 0 : 1};
  }
  const EntryKey winner = key_of(result.ranked.front());

  Retimer retimer(plan, result);
  std::vector<double> planned(result.candidates.size());
  for (size_t i = 0; i < planned.size(); ++i)
    planned[i] = retimer.time_s(i, SensitivityFactor::kNicBandwidth, 0.0);

  Sensitivity out;
  for (const SensitivityFactor factor : kSensitivityFactors) {
    for (const double change : kSensitivityChanges) {
      SensitivityCase sc;
      sc.factor = factor;
      sc.change = change;
      sc.applies = factor != SensitivityFactor::kFailureRate || plan.failure.has_value();
      std::vector<double> ratios(result.candidates.size(), 1.0);
      if (moves_time(factor)) {
        for (size_t i = 0; i < ratios.size(); ++i)
          ratios[i] = retimer.time_s(i, factor, change) / planned[i];
      }
      RankingScales scales;
      if (factor == SensitivityFactor::kPrice)
        scales.price = 1.0 + change;
      if (factor == SensitivityFactor::kFailureRate)
        scales.failure_rate = 1.0 + change;
      const std::vector<RankedEntry> ranked =
          rank_entries(plan, retimed(result, ratios), /*confirmed=*/true, scales);
      sc.winner = nominal_index.at(key_of(ranked.front()));
      for (size_t i = 0; i < ranked.size(); ++i) {
        const RankedEntry& e = ranked[i];
        if (key_of(e) == winner) {
          sc.wall_time_s = e.wall_time_s;
          sc.cost_usd = e.cost_usd;
          sc.meets_target = e.meets_target;
          sc.rank = static_cast<int>(i) + 1;
        }
        if (!sc.applies)
          continue;
        WorstCase& w = worst.at(key_of(e));
        w.worst = std::max(w.worst, objective_value(plan, e));
        w.misses += e.meets_target ? 0 : 1;
      }
      out.cases.push_back(sc);
    }
  }
  // Fewest misses, then the least worst case, then the better nominal rank.
  for (size_t i = 0; i < result.ranked.size(); ++i) {
    const WorstCase& w = worst.at(key_of(result.ranked[i]));
    const WorstCase& best = worst.at(key_of(result.ranked[out.robust]));
    if (w.misses < best.misses || (w.misses == best.misses && w.worst < best.worst))
      out.robust = i;
  }
  const WorstCase& r = worst.at(key_of(result.ranked[out.robust]));
  const WorstCase& n = worst.at(winner);
  out.robust_worst = r.worst;
  out.robust_misses = r.misses;
  out.nominal_worst = n.worst;
  out.nominal_misses = n.misses;
  return out;
}

nlohmann::json sensitivity_json(const PlanSpec& plan, const PlanResult& result,
                                const Sensitivity& s) {
  using nlohmann::json;
  const auto g = [](double v) { return io::round_significant(v); };
  json cases = json::array();
  for (const SensitivityCase& c : s.cases) {
    json row = {{"factor", to_string(c.factor)}, {"change", g(c.change)}, {"applies", c.applies}};
    if (c.applies) {
      row["days"] = g(c.wall_time_s / kDay);
      row["cost_usd"] = g(c.cost_usd);
      row["meets_target"] = c.meets_target;
      row["rank"] = c.rank;
      row["first"] = entry_label(plan, result, result.ranked[c.winner]);
    }
    cases.push_back(row);
  }
  const char* unit = plan.objective == Objective::kMinTime ? "worst_days" : "worst_cost_usd";
  const double to_unit = plan.objective == Objective::kMinTime ? 1.0 / kDay : 1.0;
  const auto choice = [&](size_t index, double worst_value, int misses) {
    return json{{"entry", entry_label(plan, result, result.ranked[index])},
                {"rank", index + 1},
                {unit, g(worst_value * to_unit)},
                {"moves_missing_target", misses}};
  };
  return json{{"changes", kSensitivityChanges},
              {"cases", cases},
              {"nominal", choice(0, s.nominal_worst, s.nominal_misses)},
              {"robust", choice(s.robust, s.robust_worst, s.robust_misses)}};
}

std::string sensitivity_table(const PlanSpec& plan, const PlanResult& result,
                              const Sensitivity& s) {
  std::string out = "\nSensitivity of the winner (all-in days and cost with one input moved):\n";
  out += io::printf_string("  %-18s", "input");
  for (const double change : kSensitivityChanges)
    out += io::printf_string(" %+21.0f%%", 100.0 * change);
  out += "\n";
  for (const SensitivityFactor factor : kSensitivityFactors) {
    out += io::printf_string("  %-18s", to_string(factor));
    for (const SensitivityCase& c : s.cases) {
      if (c.factor != factor)
        continue;
      if (!c.applies) {
        out += io::printf_string(" %22s", "(no failure model)");
        continue;
      }
      const std::string rank = c.rank > 1 ? io::printf_string(" #%d", c.rank) : "";
      const std::string cell =
          io::printf_string("%.2fd $%.3gM%s%s", c.wall_time_s / kDay, c.cost_usd / 1e6,
                            c.meets_target ? "" : "!", rank.c_str());
      out += io::printf_string(" %22s", cell.c_str());
    }
    out += "\n";
  }
  out += "  (#N: the winner's rank under the move; !: it misses the target)\n";
  const bool by_time = plan.objective == Objective::kMinTime;
  const auto worst = [&](double v) {
    return by_time ? io::printf_string("%.2f days", v / kDay)
                   : io::printf_string("$%.4gM", v / 1e6);
  };
  if (s.robust == 0) {
    out += io::printf_string(
        "Robust choice: the winner (worst case %s, missing the target in %d moves)\n",
        worst(s.robust_worst).c_str(), s.robust_misses);
  } else {
    out += io::printf_string(
        "Robust choice: #%zu %s (worst case %s, missing the target in %d moves); the winner's "
        "worst case %s, missing it in %d\n",
        s.robust + 1, entry_label(plan, result, result.ranked[s.robust]).c_str(),
        worst(s.robust_worst).c_str(), s.robust_misses, worst(s.nominal_worst).c_str(),
        s.nominal_misses);
  }
  return out;
}

}  // namespace capsim::planner
