#include "cli/cli_util.hpp"

#include <cstdio>
#include <iostream>

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "io/text_check.hpp"

namespace capsim::cli {

int guarded(const char* command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const io::InputError& e) {
    for (const io::InputProblem& problem : e.problems())
      std::fprintf(stderr, "%s: error: %s\n", command, io::describe_problem(problem).c_str());
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "%s: error: %s (see %s --help)\n", command, e.what(), command);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", command, e.what());
    return 1;
  }
}

bool parse_or_help(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult& result) {
  options.add_options()("h,help", "show this help");
  result = options.parse(argc, argv);
  if (result.count("help") > 0) {
    std::cout << options.help() << std::flush;
    return false;
  }
  // Arguments beyond the positional ones the command takes would otherwise go unread.
  if (!result.unmatched().empty())
    throw io::InputError(result.unmatched().front(), "", "unexpected argument");
  return true;
}

void check_jobs(int jobs) {
  if (jobs < 1 || jobs > kMaxJobs) {
    throw io::InputError(
        "--jobs", "",
        "must be between 1 and " + std::to_string(kMaxJobs) + ", got " + std::to_string(jobs));
  }
}

std::string engine_option(const cxxopts::ParseResult& args) {
  std::string engine = args["engine"].as<std::string>();
  if (engine != "analytic" && engine != "event") {
    throw io::InputError("--engine", "", "must be event or analytic, got \"" + engine + "\"");
  }
  return engine;
}

// One --set argument: "model.dropout=false" -> {"/model/dropout", false}. The value is JSON when
// it parses as JSON (true, 4, "x", {...}), else the text itself as a string.
io::ScenarioOverride parse_override(const std::string& argument) {
  const auto bad = [&argument](const std::string& why) {
    return io::InputError("--set " + argument, "",
                          why + "; expected PATH=VALUE, e.g. parallelism.tp_comm_overlap=true");
  };
  // The value may be echoed as a JSON string, which must be UTF-8.
  if (const auto fault = io::find_text_fault(argument))
    throw bad(fault->problem + " at byte " + std::to_string(fault->offset + 1));
  const size_t eq = argument.find('=');
  if (eq == std::string::npos)
    throw bad("no '='");
  io::ScenarioOverride o;
  std::string segment;
  const std::string path = argument.substr(0, eq) + ".";
  for (char ch : path) {
    if (ch != '.') {
      segment += ch == '~' ? std::string("~0") : ch == '/' ? std::string("~1") : std::string(1, ch);
      continue;
    }
    if (segment.empty())
      throw bad("an empty key in the path");
    o.pointer += "/" + segment;
    segment.clear();
  }
  const std::string text = argument.substr(eq + 1);
  const nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  o.value_json = value.is_discarded() ? nlohmann::json(text).dump() : value.dump();
  return o;
}

std::vector<io::ScenarioOverride> overrides_option(const cxxopts::ParseResult& args) {
  std::vector<io::ScenarioOverride> out;
  if (args.count("set") > 0) {
    for (const auto& argument : args["set"].as<std::vector<std::string>>())
      out.push_back(parse_override(argument));
  }
  return out;
}

}  // namespace capsim::cli
