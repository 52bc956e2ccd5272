#pragma once

#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <cxxopts.hpp>

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

// Throws InputError naming `path` unless a file could be written there: a non-empty name, not
// a folder, in a folder that exists. Commands call it before their work, so a long run does not
// end in an error about its output.
void check_output_path(const std::string& path);

// Writes `text` to `path` atomically (temp file + rename), so a failure never leaves a
// half-written file; throws InputError naming the path when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);
// Writes several files so that either all are written or none is (each to a temporary first,
// renamed into place once every one was written); throws InputError naming the file.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace capsim::cli
