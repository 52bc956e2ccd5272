#pragma once

#include <exception>
#include <functional>
#include <string>

#include <cxxopts.hpp>

namespace capsim::cli {

// Most threads or child processes `--jobs` may ask for (a larger count is a typo, and the
// system would run out of threads).
inline constexpr int kMaxJobs = 1024;

// Runs a subcommand body, mapping failures to exit codes and one-line stderr messages:
// InputError and bad options -> 2, any other exception -> 1. Never lets an exception escape.
int guarded(const char* command, const std::function<int()>& body);

// Parses argv with cxxopts; on --help prints the help and returns false.
[[nodiscard]] bool parse_or_help(cxxopts::Options& options, int argc, char** argv,
                                 cxxopts::ParseResult& result);

// Writes `text` to `path` atomically (temp file + rename), so a failure never leaves a
// half-written file; throws InputError naming the path when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace capsim::cli
