// capsim plan [PLAN.json] [--json] [--top N] [--jobs N] [--engine event|analytic]
// [--out-scenario PATH] [--report PATH.html] [--emit megatron,bridge,sbatch --emit-dir DIR]
// [--sensitivity] [--timing] | capsim plan --list-instances [--json]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "models/catalog.hpp"
#include "planner/instance_list.hpp"
#include "planner/launch_files.hpp"
#include "planner/mpi_shard.hpp"
#include "planner/plan_html.hpp"
#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "io/input_error.hpp"
#include "io/output_directory.hpp"
#include "io/output_files.hpp"
#include "io/text_format.hpp"
#include <unistd.h>

namespace capsim::cli {
namespace {

// A one-line progress bar on stderr, redrawn in place (only used on a terminal).
void draw_progress(const char* phase, long long done, long long total) {
  const int width = 30;
  const double f = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(f * width);
  std::fprintf(stderr, "\r%-8s [%s%s] %lld/%lld", phase,
               std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(width - filled), '.').c_str(), done, total);
  if (done >= total)
    std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

cxxopts::Options plan_options() {
  cxxopts::Options options(
      "capsim plan",
      "Find the cheapest (or fastest, or Pareto-optimal) cluster and layout for a training "
      "target.\nWithout PLAN.json, runs the embedded default plan (30B model, 1T tokens, 30 "
      "days).");
  options.positional_help("[PLAN.json]");
  const unsigned hw = std::max(1U, std::thread::hardware_concurrency());
  options.add_options()("plan", "capsim.plan/v1 file", cxxopts::value<std::string>())(
      "json", "print one JSON object instead of the tables")(
      "top", "ranked entries to show (0 = all)", cxxopts::value<int>()->default_value("10"))(
      "jobs", "threads for the screen and child processes for the confirmation",
      cxxopts::value<int>()->default_value(std::to_string(hw)))(
      "engine", "event (confirm the leaders with the SimGrid replay) or analytic (screen only)",
      cxxopts::value<std::string>()->default_value("event"))(
      "out-scenario", "write the winner as a capsim.scenario/v1 file",
      cxxopts::value<std::string>())(
      "report", "write a self-contained HTML report (tables, Pareto chart, breakdowns)",
      cxxopts::value<std::string>())(
      "emit",
      "write the winner's launch files into --emit-dir: megatron (megatron.args), bridge "
      "(bridge.yaml), sbatch (train.sbatch); comma-separated or repeated",
      cxxopts::value<std::vector<std::string>>())(
      "emit-dir", "the folder for --emit: new, empty, or holding the same files",
      cxxopts::value<std::string>())(
      "sensitivity",
      "also show how the winner's days, cost and rank move when NIC bandwidth, kernel "
      "efficiency, HBM bandwidth, failure rate and price move by 10% and 25%, and the robust "
      "choice (best worst case); in the table, --json and --report")(
      "timing", "add wall-clock timings (screen rate) to the JSON (not byte-stable)")(
      "list-instances",
      "list the built-in instance types with their GPUs, prices and the prices' source, and exit");
  options.parse_positional({"plan"});
  return options;
}

// The formats --emit names, each once, in the order given.
std::vector<planner::LaunchFormat> emit_formats(const cxxopts::ParseResult& args) {
  std::vector<planner::LaunchFormat> out;
  if (args.count("emit") == 0)
    return out;
  std::vector<std::string> names;
  for (const std::string& given : args["emit"].as<std::vector<std::string>>()) {
    size_t start = 0;
    while (start <= given.size()) {
      const size_t comma = std::min(given.find(',', start), given.size());
      names.push_back(given.substr(start, comma - start));
      start = comma + 1;
    }
  }
  for (const std::string& name : names) {
    const auto format = planner::launch_format_from_string(name);
    if (!format) {
      throw io::InputError("--emit", "",
                           "unknown format \"" + name + "\"; expected megatron, bridge or sbatch");
    }
    if (std::find(out.begin(), out.end(), *format) == out.end())
      out.push_back(*format);
  }
  return out;
}

std::vector<std::string> emit_file_names(const std::vector<planner::LaunchFormat>& formats) {
  std::vector<std::string> names;
  for (const planner::LaunchFormat f : formats)
    names.emplace_back(planner::launch_file_name(f));
  return names;
}

// Checks --emit and --emit-dir: both or neither, known formats, a folder that can take them.
void check_emit_args(const cxxopts::ParseResult& args) {
  const std::vector<planner::LaunchFormat> formats = emit_formats(args);
  const bool dir = args.count("emit-dir") > 0;
  if (formats.empty() != !dir)
    throw io::InputError(dir ? "--emit-dir" : "--emit", "", "give --emit and --emit-dir together");
  if (dir) {
    io::check_output_directory("--emit-dir", args["emit-dir"].as<std::string>(),
                               emit_file_names(formats));
  }
}

// Writes the winner's launch files into --emit-dir, or says on stderr why there are none.
void write_launch_files(const cxxopts::ParseResult& args, const planner::PlanSpec& plan,
                        const planner::PlanResult& result) {
  const std::string dir = args["emit-dir"].as<std::string>();
  if (result.ranked.empty() || !result.ranked.front().meets_target) {
    std::fprintf(stderr, "capsim plan: no configuration meets the target; %s not written\n",
                 dir.c_str());
    return;
  }
  const Scenario winner = planner::candidate_scenario(
      plan, result.candidates[result.ranked.front().candidate].candidate);
  std::vector<std::pair<std::string, std::string>> files;
  for (const planner::LaunchFormat f : emit_formats(args)) {
    for (const std::string& setting : planner::launch_file_unexpressed(f, winner)) {
      std::fprintf(stderr, "capsim plan: note: %s/%s does not carry %s\n", dir.c_str(),
                   planner::launch_file_name(f), setting.c_str());
    }
    files.emplace_back(planner::launch_file_name(f), planner::launch_file_text(f, winner));
  }
  io::write_output_directory(dir, files);
}

// Checks --top, --jobs, --engine and the --out-scenario path before the search, not after it,
// when the winner could not be written.
void check_plan_args(const cxxopts::ParseResult& args) {
  const int top = args["top"].as<int>();
  const int jobs = args["jobs"].as<int>();
  if (top < 0)
    throw io::InputError("--top", "", "must be at least 0, got " + std::to_string(top));
  check_jobs(jobs);
  const std::string engine = engine_option(args);
  std::vector<io::NamedPath> outputs;
  for (const char* option : {"out-scenario", "report"}) {
    if (args.count(option) > 0)
      outputs.push_back({std::string("--") + option, args[option].as<std::string>()});
  }
  if (!outputs.empty()) {
    io::check_outputs(outputs,
                      {{"the plan", args.count("plan") > 0 ? args["plan"].as<std::string>() : ""}});
  }
}

// The exit code of a plan whose report is complete but some of whose candidates rank on the
// screen's numbers because their event run failed (docs/planner.md, "Failed confirmations").
constexpr int kExitConfirmationsFailed = 3;

void print_search_summary(const planner::PlanResult& result) {
  std::fprintf(stderr,
               "capsim plan: screened %lld of %lld candidates in %.2f s (%.0f candidates/s; %lld "
               "settled by a lower bound on their time), %d event confirmations in %.2f s\n",
               result.screened, result.enumerated, result.screen_wall_s,
               result.screen_wall_s > 0.0
                   ? static_cast<double>(result.enumerated) / result.screen_wall_s
                   : 0.0,
               result.bounded, result.confirmations, result.confirm_wall_s);
}

// Writes the winner as a scenario, or says on stderr why there is none.
void write_best_scenario(const std::string& path, const planner::PlanSpec& plan,
                         const planner::PlanResult& result) {
  nlohmann::json best = planner::best_scenario_json(plan, result);
  if (best.contains("profile")) {
    // An instance's profile, named relative to the written scenario (scenario files look
    // for it beside themselves first), so that the winner loads from any folder.
    namespace fs = std::filesystem;
    const fs::path out = fs::absolute(path);
    best["profile"] =
        fs::relative(fs::absolute(best["profile"].get<std::string>()), out.parent_path())
            .generic_string();
  }
  if (best.is_null()) {
    std::fprintf(stderr, "capsim plan: no configuration meets the target; %s not written\n",
                 path.c_str());
  } else {
    io::write_file_atomically(path, best.dump(2) + "\n");
  }
}

int plan_main(int argc, char** argv, const planner::MpiSession& mpi) {
  cxxopts::Options options = plan_options();
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  check_plan_args(args);
  check_emit_args(args);
  if (args.count("list-instances") > 0) {
    if (mpi.rank() != 0)
      return 0;
    if (args.count("plan") > 0)
      throw io::InputError("--list-instances", "", "lists the built-in catalog; give no plan file");
    const Catalog& catalog = builtin_catalog();
    if (args.count("json") > 0)
      std::cout << planner::instance_list_json(catalog).dump(2) << "\n";
    else
      std::cout << planner::instance_list_table(catalog);
    return 0;
  }
  const int top = args["top"].as<int>();
  const int jobs = args["jobs"].as<int>();
  const planner::PlanSpec plan =
      args.count("plan") > 0
          ? planner::load_plan(args["plan"].as<std::string>())
          : planner::read_plan_text(planner::default_plan_text(), "<default plan>");

  planner::PlanOptions opts;
  opts.jobs = jobs;
  if (args["engine"].as<std::string>() == "event") {
    opts.confirm = planner::mpi_sharded(planner::forked_confirmer(jobs), mpi);
  }
  if (isatty(STDERR_FILENO) != 0 && mpi.rank() == 0)
    opts.progress = draw_progress;
  planner::PlanResult result = planner::run_plan(plan, opts);
  if (mpi.rank() != 0)
    return 0;
  result.shared_fabric = planner::assess_shared_fabric(plan, result);
  if (args.count("sensitivity") > 0)
    result.sensitivity = planner::plan_sensitivity(plan, result);
  print_search_summary(result);
  if (args.count("out-scenario") > 0)
    write_best_scenario(args["out-scenario"].as<std::string>(), plan, result);
  if (args.count("emit-dir") > 0)
    write_launch_files(args, plan, result);
  if (args.count("report") > 0) {
    io::write_file_atomically(args["report"].as<std::string>(),
                              planner::plan_html(plan, result, static_cast<size_t>(top)));
  }
  if (args.count("json") > 0) {
    std::cout << planner::plan_to_json(plan, result, static_cast<size_t>(top),
                                       args.count("timing") > 0)
                     .dump(2)
              << "\n";
  } else {
    std::cout << planner::plan_table(plan, result, static_cast<size_t>(top));
  }
  if (result.failed_confirmations > 0) {
    std::fprintf(stderr,
                 "capsim plan: the event confirmation of %d candidates failed; they rank on the "
                 "analytic screen's numbers (the report lists them and why)\n",
                 result.failed_confirmations);
    return kExitConfirmationsFailed;
  }
  return 0;
}

}  // namespace

int run_plan(int argc, char** argv) {
  // Under `mpirun -np N` (MPI builds), every rank screens the same space and the confirmations
  // are sharded over the ranks; rank 0 alone prints and writes files. Started before parsing:
  // input errors are then the same on every rank, and rank 0 alone reports them.
  std::optional<planner::MpiSession> session;
  const int started = guarded("capsim plan", [&] {
    session.emplace(nullptr, nullptr);
    return 0;
  });
  if (started != 0)
    return started;
  const planner::MpiSession& mpi = *session;
  if (mpi.rank() != 0)
    std::cout.setstate(std::ios::badbit);  // rank 0 alone prints (--help included)
  return guarded("capsim plan", [&] {
    try {
      return plan_main(argc, argv, mpi);
    } catch (const io::InputError&) {
      if (mpi.rank() == 0)
        throw;
      return 2;
    } catch (const cxxopts::exceptions::exception&) {
      if (mpi.rank() == 0)
        throw;
      return 2;
    }
  });
}

}  // namespace capsim::cli
