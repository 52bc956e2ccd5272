#pragma once

#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>

#include "models/io/output_files.hpp"

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

}  // namespace capsim::cli
