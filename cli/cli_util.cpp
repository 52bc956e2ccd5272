#include "cli/cli_util.hpp"

#include <cstdio>
#include <iostream>

#include "models/io/input_error.hpp"

namespace capsim::cli {

int guarded(const char* command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: error: %s\n", command, e.what());
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
    throw InputError("", "", "unexpected argument \"" + result.unmatched().front() + "\"");
  return true;
}

void check_jobs(int jobs) {
  if (jobs < 1 || jobs > kMaxJobs) {
    throw InputError("", "",
                     "--jobs must be between 1 and " + std::to_string(kMaxJobs) + ", got " +
                         std::to_string(jobs));
  }
}

std::string engine_option(const cxxopts::ParseResult& args) {
  std::string engine = args["engine"].as<std::string>();
  if (engine != "analytic" && engine != "event") {
    throw InputError("", "", "--engine must be event or analytic, got \"" + engine + "\"");
  }
  return engine;
}

}  // namespace capsim::cli
