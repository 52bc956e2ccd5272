// capsim whatif [WHATIF.json] [--json] [--seed N] [--seeds N] [--jobs N] [--policy NAME]...
//               [--timeline OUT.csv] [--report OUT.html] [--emit DIR] [--allow-unmodelled]
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "traces/timeline_csv.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "cli/launcher_rank.hpp"
#include "io/input_error.hpp"
#include "whatif/policy_emit.hpp"
#include "whatif/recommendation.hpp"
#include "whatif/results.hpp"
#include "whatif/runner.hpp"
#include "whatif/whatif_io.hpp"

namespace capsim::cli {

namespace {

cxxopts::Options whatif_options() {
  cxxopts::Options options("capsim whatif",
                           "Replay a job trace on an autoscaled cluster under each policy");
  options.positional_help("[WHATIF.json]");
  options.add_options()("whatif", "capsim.whatif/v1 file (default: the embedded default)",
                        cxxopts::value<std::string>())(
      "json", "print one JSON object instead of the table")(
      "seed", "first seed (overrides the file's)", cxxopts::value<long long>())(
      "seeds", "replicas per policy, seeds seed..seed+N-1 (means and spreads)",
      cxxopts::value<int>())("jobs", "simulations in parallel (child processes)",
                             cxxopts::value<int>()->default_value("2"))(
      "policy", "run only this policy (repeatable)", cxxopts::value<std::vector<std::string>>())(
      "timeline", "write the timeline CSV (first replica of each policy)",
      cxxopts::value<std::string>())("report", "write an HTML report with SVG plots",
                                     cxxopts::value<std::string>())(
      "print-default", "print the embedded default what-if and exit")(
      "emit", "write the recommended policy's configuration into this folder",
      cxxopts::value<std::string>())(
      "allow-unmodelled",
      "model a policy's configuration without the keys capsim does not model (listed as notes)");
  options.parse_positional({"whatif"});
  return options;
}

// The what-if file (or the embedded default) with --seed applied.
whatif::WhatIf load_with_seed(const cxxopts::ParseResult& args) {
  whatif::WhatIfReadOptions read_options;
  read_options.allow_unmodelled = args.count("allow-unmodelled") > 0;
  whatif::WhatIf w = args.count("whatif") > 0
                         ? whatif::load_whatif(args["whatif"].as<std::string>(), read_options)
                         : whatif::default_whatif();
  if (args.count("seed") > 0) {
    const long long seed = args["seed"].as<long long>();
    if (seed < 0)
      throw io::InputError("--seed", "", "must be >= 0, got " + std::to_string(seed));
    w.seed = static_cast<std::uint64_t>(seed);
  }
  return w;
}

// Replicas per policy: --seeds, else the file's.
int replicas_to_run(const cxxopts::ParseResult& args, const whatif::WhatIf& w) {
  if (args.count("seeds") == 0)
    return w.replicas;
  const int replicas = args["seeds"].as<int>();
  if (replicas < 1 || replicas > 1000) {
    throw io::InputError("--seeds", "", "must be in [1, 1000], got " + std::to_string(replicas));
  }
  return replicas;
}

// Keeps the policies --policy names (all without it), after checking every name: a typo must
// not silently run nothing.
void keep_selected_policies(const cxxopts::ParseResult& args,
                            std::vector<whatif::PolicySpec>& policies) {
  if (args.count("policy") == 0)
    return;
  const auto wanted = args["policy"].as<std::vector<std::string>>();
  for (const auto& name : wanted) {
    const bool known = std::any_of(policies.begin(), policies.end(),
                                   [&](const auto& p) { return p.name == name; });
    if (known)
      continue;
    std::string names;
    for (const auto& p : policies)
      names += (names.empty() ? "" : ", ") + p.name;
    // NOLINTNEXTLINE(performance-inefficient-string-concatenation): runs once, the loop ends here
    throw io::InputError("--policy " + name, "", "no such policy (policies: " + names + ")");
  }
  std::erase_if(policies, [&](const auto& p) {
    return std::find(wanted.begin(), wanted.end(), p.name) == wanted.end();
  });
}

// Checks --timeline and --report before the runs: writable, two files, neither an input.
void check_whatif_outputs(const cxxopts::ParseResult& args, const whatif::WhatIf& w) {
  std::vector<io::NamedPath> outputs;
  for (const char* option : {"timeline", "report"}) {
    if (args.count(option) > 0)
      outputs.push_back({std::string("--") + option, args[option].as<std::string>()});
  }
  // The embedded default what-if is read from no file.
  std::vector<io::NamedPath> inputs{{"the what-if", args.count("whatif") > 0 ? w.file : ""}};
  for (const auto& [path, model] : w.scenario_models)
    inputs.push_back({"the scenario", path});
  io::check_outputs(outputs, inputs);
}

// The --timeline and --report files with their contents, to be written together.
std::vector<std::pair<std::string, std::string>> output_files(
    const cxxopts::ParseResult& args, const whatif::WhatIf& w,
    const std::vector<whatif::PolicyRuns>& runs) {
  std::vector<std::pair<std::string, std::string>> files;
  if (args.count("timeline") > 0) {
    std::vector<traces::Timeline> timelines;
    timelines.reserve(runs.size());
    for (const auto& p : runs)
      timelines.push_back(p.runs.front().timeline);
    std::ostringstream os;
    traces::write_timeline_csv(os, timelines);
    files.emplace_back(args["timeline"].as<std::string>(), os.str());
  }
  if (args.count("report") > 0)
    files.emplace_back(args["report"].as<std::string>(), whatif::html_report(w, runs));
  return files;
}

// The --emit folder's file for the recommended policy; the recommendation is returned for the
// output. Throws InputError when no policy qualifies.
std::pair<std::string, std::string> emit_file(const cxxopts::ParseResult& args,
                                              const whatif::WhatIf& w,
                                              const std::vector<whatif::PolicySpec>& policies,
                                              const std::vector<whatif::PolicyRuns>& runs,
                                              whatif::RecommendedPolicy& chosen) {
  std::string why_none;
  const auto best = whatif::recommend(w, policies, runs, why_none);
  if (!best)
    throw io::InputError("--emit", "", why_none);
  chosen = *best;
  auto [name, text] = whatif::emitted_file(w, policies[best->index]);
  return {(std::filesystem::path(args["emit"].as<std::string>()) / name).string(), text};
}

// Checks the --emit folder before the runs: an existing folder.
void check_emit_folder(const cxxopts::ParseResult& args) {
  if (args.count("emit") == 0)
    return;
  const std::string dir = args["emit"].as<std::string>();
  if (!std::filesystem::is_directory(dir))
    throw io::InputError("--emit " + dir, "", "not an existing folder");
}

// The notes on what the policies' configurations say that capsim does not model.
std::string notes_text(const whatif::WhatIf& w) {
  std::string out;
  if (w.notes.empty())
    return out;
  out += "\nnot modelled (" + std::to_string(w.notes.size()) + " notes):\n";
  for (const auto& n : w.notes)
    out += "  " + io::describe_problem(n) + "\n";
  return out;
}

int whatif_main(int argc, char** argv) {
  cxxopts::Options options = whatif_options();
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("print-default") > 0) {
    std::cout << whatif::default_whatif_text();
    return 0;
  }
  const whatif::WhatIf w = load_with_seed(args);
  const int replicas = replicas_to_run(args, w);
  const int jobs = args["jobs"].as<int>();
  check_jobs(jobs);
  check_whatif_outputs(args, w);
  check_emit_folder(args);
  auto policies = whatif::expand_policies(w);
  keep_selected_policies(args, policies);
  const auto runs = whatif::run_all(w, policies, replicas, jobs);
  auto files = output_files(args, w, runs);
  whatif::RecommendedPolicy chosen;
  if (args.count("emit") > 0)
    files.push_back(emit_file(args, w, policies, runs, chosen));
  // Every output or none.
  io::write_files_atomically(files);
  const bool emitted = args.count("emit") > 0;
  if (args.count("json") > 0) {
    nlohmann::json out = whatif::summary_json(w, runs);
    if (emitted) {
      out["recommended"] = {{"policy", policies[chosen.index].name},
                            {"by", w.recommend.by},
                            {"value", chosen.value},
                            {"file", files.back().first}};
    }
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << whatif::comparison_table(w, runs) << notes_text(w);
    if (emitted) {
      std::cout << "\nrecommended: " << policies[chosen.index].name << " (lowest " << w.recommend.by
                << " among the policies that finish every job";
      if (w.recommend.max_queue_wait_p95_s)
        std::cout << " within the p95 queue-wait bound";
      std::cout << "); wrote " << files.back().first << "\n";
    }
  }
  return 0;
}

}  // namespace

int run_whatif(int argc, char** argv) {
  // Under `mpirun -np N` every rank would run the same what-if and print the same report (and
  // write the same files): rank 0 alone runs it, the others end at once.
  if (launcher_rank() != 0)
    return 0;
  return guarded("capsim whatif", [&] { return whatif_main(argc, argv); });
}

}  // namespace capsim::cli
