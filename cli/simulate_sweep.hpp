#pragma once

#include <string>
#include <vector>

#include "cli/cli_util.hpp"

namespace capsim::cli {

// Most values one --sweep may list (each is a whole simulation).
inline constexpr size_t kMaxSweepValues = 256;

// A --sweep argument: the key as --set takes it and the values in the order given.
struct SweepSpec {
  std::string path;
  std::vector<std::string> values;
};

// Parses "PATH=V1,V2,...": the values split at the commas outside brackets, braces and quoted
// strings, so that a value may be a JSON list or object. Throws InputError naming --sweep for a
// missing '=', an empty key or value, or more than kMaxSweepValues values.
[[nodiscard]] SweepSpec parse_sweep(const std::string& argument);

// `capsim simulate SCENARIO.json --sweep PATH=V1,V2,... [--svg OUT.svg]`: one simulation per
// value (the event engine's each in a forked child), printed as a table or as JSON, and plotted
// in an SVG (docs/usage.md, "Sweeps"). Every value's scenario is read before any runs: all bad
// values are reported at once. Returns the exit code; throws InputError for bad input.
int simulate_sweep(const cxxopts::ParseResult& args);

}  // namespace capsim::cli
