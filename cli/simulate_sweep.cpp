#include "cli/simulate_sweep.hpp"

#include <iostream>
#include <optional>
#include <set>

#include "sim/isolated_simulation.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "io/input_error.hpp"
#include "io/result_io.hpp"
#include "io/simulate_output.hpp"
#include "io/simulation_input.hpp"
#include "io/sweep_chart.hpp"
#include "io/text_format.hpp"

namespace capsim::cli {
namespace {

// One value of the sweep: its scenario as read, then its run.
struct SweepRun {
  std::string value;          // as given on the command line
  nlohmann::json value_json;  // as --set reads it
  io::SimulationInput input;
  IterationCosts costs;
  SimulationResult result;
};

// The options of a single run that a sweep does not take, and why.
void check_sweep_options(const cxxopts::ParseResult& args) {
  for (const char* single : {"trace", "every-gpu", "kernels"}) {
    if (args.count(single) > 0) {
      throw io::InputError(std::string("--") + single, "",
                           "is for one run; simulate the value of interest without --sweep");
    }
  }
}

// Reads every value's scenario; throws one InputError listing each bad value's problems.
std::vector<SweepRun> read_runs(const cxxopts::ParseResult& args, const SweepSpec& sweep) {
  const std::string file = args["scenario"].as<std::string>();
  const std::optional<std::string> profile_path =
      args.count("profile") > 0 ? std::optional(args["profile"].as<std::string>()) : std::nullopt;
  const std::vector<io::ScenarioOverride> base = overrides_option(args);
  std::vector<SweepRun> runs;
  std::vector<io::InputProblem> problems;
  for (const std::string& value : sweep.values) {
    std::vector<io::ScenarioOverride> overrides = base;
    overrides.push_back(parse_override(sweep.path + "=" + value));
    try {
      runs.push_back({value,
                      nlohmann::json::parse(overrides.back().value_json),
                      io::load_simulation_input(file, overrides, profile_path),
                      {},
                      {}});
    } catch (const io::InputError& e) {
      for (const io::InputProblem& p : e.problems())
        problems.push_back(
            {p.file, p.pointer, "with " + sweep.path + "=" + value + ": " + p.message});
    }
  }
  if (!problems.empty())
    throw io::InputError(problems);
  return runs;
}

std::string sweep_table(const SweepSpec& sweep, const std::string& engine,
                        const std::vector<SweepRun>& runs) {
  std::string out = io::printf_string("sweep of %s over %zu values (%s engine)\n",
                                      sweep.path.c_str(), runs.size(), engine.c_str());
  out += io::printf_string("  %-16s %14s %14s %8s %10s %6s\n", "value", "iteration (s)", "tokens/s",
                           "MFU", "peak GiB", "fits");
  std::set<std::string> notes;
  for (const SweepRun& r : runs) {
    const SimulationResult& s = r.result;
    out += io::printf_string("  %-16s %14.4g %14.6g %7.1f%% %10.1f %6s\n", r.value.c_str(),
                             s.iteration_time_s, s.tokens_per_s, 100.0 * s.mfu,
                             s.memory.peak_bytes / (1024.0 * 1024.0 * 1024.0),
                             s.memory.fits ? "yes" : "no");
    notes.insert(s.notes.begin(), s.notes.end());
  }
  for (const std::string& n : notes)
    out += "note: " + n + "\n";
  return out;
}

nlohmann::json sweep_json(const SweepSpec& sweep, const std::string& engine,
                          const std::vector<SweepRun>& runs) {
  nlohmann::json points = nlohmann::json::array();
  for (const SweepRun& r : runs) {
    points.push_back(
        {{"value", r.value_json},
         {"result", io::simulate_output_json(r.result, r.input.scenario, r.costs, r.input.profile,
                                             /*kernels=*/false)}});
  }
  return {{"sweep", {{"path", sweep.path}, {"engine", engine}, {"points", points}}}};
}

std::vector<io::SweepChartPoint> chart_points(const std::vector<SweepRun>& runs) {
  std::vector<io::SweepChartPoint> points;
  for (const SweepRun& r : runs) {
    io::SweepChartPoint p;
    p.label = r.value;
    if (r.value_json.is_number())
      p.x = r.value_json.get<double>();
    p.tokens_per_s = r.result.tokens_per_s;
    p.iteration_time_s = r.result.iteration_time_s;
    p.fits = r.result.memory.fits;
    points.push_back(p);
  }
  return points;
}

}  // namespace

SweepSpec parse_sweep(const std::string& argument) {
  const auto bad = [&argument](const std::string& why) {
    return io::InputError(
        "--sweep " + argument, "",
        why + "; expected PATH=V1,V2,..., e.g. parallelism.micro_batch_size=1,2,4");
  };
  const size_t eq = argument.find('=');
  if (eq == std::string::npos)
    throw bad("no '='");
  if (eq == 0)
    throw bad("an empty key");
  SweepSpec sweep;
  sweep.path = argument.substr(0, eq);
  std::string value;
  int depth = 0;
  bool quoted = false;
  const auto end_value = [&] {
    if (value.empty())
      throw bad("an empty value");
    sweep.values.push_back(value);
    value.clear();
  };
  for (size_t i = eq + 1; i < argument.size(); ++i) {
    const char c = argument[i];
    if (quoted) {
      if (c == '\\' && i + 1 < argument.size()) {
        value += c;
        value += argument[++i];
        continue;
      }
      quoted = c != '"';
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      end_value();
      continue;
    }
    value += c;
  }
  if (quoted || depth != 0)
    throw bad("unbalanced quotes or brackets");
  end_value();
  if (sweep.values.size() > kMaxSweepValues) {
    throw bad(std::to_string(sweep.values.size()) + " values, more than the " +
              std::to_string(kMaxSweepValues) + " a sweep runs");
  }
  return sweep;
}

int simulate_sweep(const cxxopts::ParseResult& args) {
  check_sweep_options(args);
  const SweepSpec sweep = parse_sweep(args["sweep"].as<std::string>());
  const std::string engine = engine_option(args);
  if (args.count("svg") > 0) {
    io::check_outputs({{"--svg", args["svg"].as<std::string>()}},
                      {{"the scenario", args["scenario"].as<std::string>()}});
  }
  std::vector<SweepRun> runs = read_runs(args, sweep);
  for (SweepRun& r : runs) {
    const Scenario& sc = r.input.scenario;
    r.costs = estimate::compute_iteration_costs(sc, r.input.profile);
    r.result = engine == "event" ? sim::simulate_iteration_in_child(sc, r.input.profile)
                                 : estimate::estimate_iteration(sc, r.costs, r.input.profile);
    if (const std::optional<std::string> note = io::profile_note(r.input.profile))
      r.result.notes.push_back(*note);
  }
  if (args.count("svg") > 0)
    io::write_file_atomically(args["svg"].as<std::string>(),
                              io::sweep_chart_svg(sweep.path, chart_points(runs)));
  if (args.count("json") > 0)
    std::cout << sweep_json(sweep, engine, runs).dump(2) << "\n";
  else
    std::cout << sweep_table(sweep, engine, runs);
  return 0;
}

}  // namespace capsim::cli
