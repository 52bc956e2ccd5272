#pragma once

#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

// Repeatable options (--set, --cases, --validate) take one value per flag: cxxopts would also
// split each value at commas, which breaks --set PATH={"a":1,"b":2} (a JSON object). No argv
// string holds a NUL, so nothing is split. Every capsim TU includes cxxopts through this header.
#define CXXOPTS_VECTOR_DELIMITER '\0'
#include <cxxopts.hpp>

#include "io/output_files.hpp"
#include "io/scenario_io.hpp"

namespace capsim::cli {

// Most threads or child processes `--jobs` may ask for (a larger count is a typo, and the
// system would run out of threads).
inline constexpr int kMaxJobs = 1024;

// Throws InputError unless `jobs` is between 1 and kMaxJobs.
void check_jobs(int jobs);

// The `--engine` option's value, checked: "event" or "analytic"; throws InputError otherwise.
[[nodiscard]] std::string engine_option(const cxxopts::ParseResult& args);

// Runs a subcommand body, mapping failures to exit codes and one-line stderr messages:
// InputError and bad options -> 2, any other exception -> 1. Never lets an exception escape.
int guarded(const char* command, const std::function<int()>& body);

// Parses argv with cxxopts; on --help prints the help and returns false.
[[nodiscard]] bool parse_or_help(cxxopts::Options& options, int argc, char** argv,
                                 cxxopts::ParseResult& result);

// One --set argument: "model.dropout=false" -> {"/model/dropout", false}. The value is JSON when
// it parses as JSON (true, 4, "x", {...}), else the text itself as a string. Throws InputError
// for an argument without '=' or with an empty key.
[[nodiscard]] io::ScenarioOverride parse_override(const std::string& argument);

// Every --set option given, parsed.
[[nodiscard]] std::vector<io::ScenarioOverride> overrides_option(const cxxopts::ParseResult& args);

}  // namespace capsim::cli
