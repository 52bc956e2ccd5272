// capsim validate CASES.json [--engine event|analytic] [--json] [--cases ID_PREFIX]...
//                 [--set PATH=VALUE]...
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "planner/validation_run.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "io/input_error.hpp"
#include "io/validation_io.hpp"

namespace capsim::cli {
namespace {

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

void print_not_predicted(const planner::Predictions& p) {
  for (const auto& r : p.rejected)
    std::cerr << "capsim validate: case " << (r.id.empty() ? r.pointer : r.id)
              << " rejected: " << r.error.what() << "\n";
  for (const auto& [id, what] : p.failed)
    std::cerr << "capsim validate: case " << id << " failed: " << what << "\n";
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
  const planner::Predictions p = planner::predict_cases(file, engine);
  print_not_predicted(p);
  if (p.outcomes.empty())
    throw io::InputError(path, "/cases", "no case could be predicted");
  nlohmann::json report = planner::validation_report_json(p, engine);
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
