// capsim validate CASES.json [--engine event|analytic] [--json] [--cases ID_PREFIX]...
//                 [--set PATH=VALUE]...
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/byte_units.hpp"
#include "sim/isolated_simulation.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "estimate/analytic_estimator.hpp"
#include "io/input_error.hpp"
#include "io/layout_ranking.hpp"
#include "io/profile_io.hpp"
#include "io/rounding.hpp"
#include "io/validation_io.hpp"

namespace capsim::cli {
namespace {

struct CaseOutcome {
  const io::ValidationCase* vc;
  double predicted_s;
  double error_pct;  // 100 (predicted - measured) / measured
  // Every case was measured, so it did fit: a predicted overflow is a memory-model miss.
  double peak_memory_gib;
  bool fits_in_memory;
};

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

void print_table(const nlohmann::json& report) {
  std::printf("%-40s %-20s %12s %12s %8s %9s\n", "case", "group", "measured s", "predicted s",
              "error", "mem GiB");
  for (const auto& c : report.at("cases")) {
    std::printf("%-40s %-20s %12.4g %12.4g %7.1f%% %8.1f%s\n",
                c.at("id").get<std::string>().c_str(),
                c.at("group").get<std::string>().substr(0, 20).c_str(),
                c.at("measured_iteration_time_s").get<double>(),
                c.at("predicted_iteration_time_s").get<double>(), c.at("error_pct").get<double>(),
                c.at("predicted_peak_memory_gib").get<double>(),
                c.at("fits_in_memory").get<bool>() ? "" : "!");
  }
  const auto& s = report.at("summary");
  std::printf(
      "\n%zu cases (%s engine): MAPE %.2f%%, mean error %+.1f%%, max |error| %.1f%%, "
      "%d within 10%%\n",
      s.at("n").get<size_t>(), report.at("engine").get<std::string>().c_str(),
      s.at("mape_pct").get<double>(), s.at("mean_error_pct").get<double>(),
      s.at("max_abs_error_pct").get<double>(), s.at("within_10_pct").get<int>());
  int width = 28;  // the group column fits the longest name
  for (const auto& [group, g] : s.at("by_group").items())
    width = std::max(width, static_cast<int>(group.size()));
  for (const auto& [group, g] : s.at("by_group").items()) {
    std::printf("  %-*s n=%-4d MAPE %6.2f%%  mean error %+6.1f%%  within 10%%: %d\n", width,
                group.c_str(), g.at("n").get<int>(), g.at("mape_pct").get<double>(),
                g.at("mean_error_pct").get<double>(), g.at("within_10_pct").get<int>());
  }
  if (!s.at("layout_ranking").empty()) {
    std::printf(
        "layout ranking (runs of one model on one cluster, by throughput: Spearman's rank "
        "correlation of predicted and measured; what capsim's pick measured over the best):\n");
  }
  for (const auto& g : s.at("layout_ranking")) {
    std::printf("  %-*s %3d layouts  Spearman %+.2f  pick costs %4.1f%% (%s; best %s)\n", width,
                g.at("label").get<std::string>().c_str(), g.at("layouts").get<int>(),
                g.at("spearman").get<double>(), g.at("pick_cost_pct").get<double>(),
                g.at("pick").get<std::string>().c_str(), g.at("best").get<std::string>().c_str());
  }
  if (report.contains("overrides")) {
    std::printf("  every scenario changed by --set");
    for (const auto& o : report.at("overrides"))
      std::printf(" %s", o.get<std::string>().c_str());
    std::printf("\n");
  }
  const int misses = s.at("predicted_out_of_memory").get<int>();
  if (misses > 0) {
    std::printf(
        "memory: %d measured run(s) predicted not to fit (marked !): the memory model is "
        "conservative for them\n",
        misses);
  }
}

cxxopts::Options validate_options() {
  cxxopts::Options options("capsim validate",
                           "Predict measured training runs and report the error per case");
  options.positional_help("CASES.json");
  options.add_options()("file", "capsim.validation/v1 file", cxxopts::value<std::string>())(
      "engine", "event (SimGrid replay) or analytic (closed form)",
      cxxopts::value<std::string>()->default_value("event"))(
      "json", "print one JSON object instead of the table")(
      "cases", "only cases whose id starts with this (repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "set",
      "change every case's scenario first: PATH=VALUE, PATH dot-separated from the scenario's "
      "top (parallelism.tp_comm_overlap=true), VALUE JSON or else a string (repeatable)",
      cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"file"});
  return options;
}

// Keeps the cases (and rejected cases) whose id starts with a --cases prefix; a rejected case
// without a readable id is kept, since it cannot be told apart.
void keep_listed_cases(io::ValidationFile& file, const cxxopts::ParseResult& args,
                       const std::string& path) {
  if (args.count("cases") == 0)
    return;
  const auto prefixes = args["cases"].as<std::vector<std::string>>();
  std::erase_if(file.cases,
                [&](const io::ValidationCase& c) { return !io::id_has_prefix(c.id, prefixes); });
  std::erase_if(file.rejected, [&](const io::RejectedCase& c) {
    return !c.id.empty() && !io::id_has_prefix(c.id, prefixes);
  });
  if (file.cases.empty() && file.rejected.empty())
    throw io::InputError(path, "/cases", "no case id starts with a --cases prefix");
}

// The cases predicted, and those left out: rejected by a check (bad input) or failed in the
// estimator or simulation (internal error).
struct Predictions {
  std::vector<CaseOutcome> outcomes;
  std::vector<io::RejectedCase> rejected;
  std::vector<std::pair<std::string, std::string>> failed;  // id, what went wrong
};

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

// Case by case: a case that fails a check (or whose simulation fails) is recorded and left
// out, and the others are still predicted.
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

void print_not_predicted(const Predictions& p) {
  for (const auto& r : p.rejected)
    std::cerr << "capsim validate: case " << (r.id.empty() ? r.pointer : r.id)
              << " rejected: " << r.error.what() << "\n";
  for (const auto& [id, what] : p.failed)
    std::cerr << "capsim validate: case " << id << " failed: " << what << "\n";
}

nlohmann::json not_predicted_json(const Predictions& p) {
  nlohmann::json not_predicted = nlohmann::json::array();
  for (const auto& r : p.rejected)
    not_predicted.push_back({{"id", r.id}, {"pointer", r.pointer}, {"error", r.error.what()}});
  for (const auto& [id, what] : p.failed)
    not_predicted.push_back({{"id", id}, {"error", what}});
  return not_predicted;
}

int validate_main(int argc, char** argv) {
  cxxopts::Options options = validate_options();
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("file") == 0)
    throw io::InputError("CASES.json", "", "missing argument");
  const std::string path = args["file"].as<std::string>();
  const std::string engine = engine_option(args);
  const std::vector<io::ScenarioOverride> overrides = overrides_option(args);
  io::ValidationFile file = io::load_validation_file(path, overrides);
  keep_listed_cases(file, args, path);
  const Predictions p = predict_cases(file, engine);
  print_not_predicted(p);
  if (p.outcomes.empty())
    throw io::InputError(path, "/cases", "no case could be predicted");
  nlohmann::json report = to_json(p.outcomes, engine);
  report["not_predicted"] = not_predicted_json(p);
  if (args.count("set") > 0)
    report["overrides"] = args["set"].as<std::vector<std::string>>();
  if (args.count("json") > 0) {
    std::cout << report.dump(2) << "\n";
  } else {
    print_table(report);
  }
  // Bad input is exit 2 and an internal failure 1, even though the other cases were reported.
  return !p.rejected.empty() ? 2 : (!p.failed.empty() ? 1 : 0);
}

}  // namespace

int run_validate(int argc, char** argv) {
  return guarded("capsim validate", [&] { return validate_main(argc, argv); });
}

}  // namespace capsim::cli
