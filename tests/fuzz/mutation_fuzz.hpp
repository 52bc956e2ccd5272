// Deterministic mutation fuzzing of capsim's input files, shared by the fuzz tests: every mutant
// must either load (and give finite numbers on the path the CLI runs it through) or be rejected
// with an InputError naming the file and a JSON pointer (a line number for text inputs).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace capsim::fuzz {

using nlohmann::json;

[[nodiscard]] json read_json(const std::string& path);
[[nodiscard]] std::string read_text(const std::string& path);

// A scratch folder for the mutated files, removed at the end of each test.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `text` to `name` in the folder and returns its path.
  [[nodiscard]] std::string write(const std::string& name, const std::string& text) const;

 private:
  std::filesystem::path path_;
};

struct Mutant {
  std::string label;  // what was changed, for failure messages
  json doc;
};

// Returns `budget` scaled by CAPSIM_FUZZ_SCALE (default 1) for longer exploratory runs.
[[nodiscard]] size_t scaled(size_t budget);

// A fixed-seed sample of `budget` single mutations of `doc` (each leaf replaced by a value of
// another type, zero, +-1, +-1e308, 1e-308, huge integers, empty and nonsense strings, empty
// arrays and objects, garbled unit strings; each key deleted; an unknown key added to each
// object), then `budget / 4` mutants with two or three mutations each.
[[nodiscard]] std::vector<Mutant> mutants(const json& doc, size_t budget, std::uint32_t seed);

// Fails the test when `j` holds a non-finite number, or `v` is one.
void expect_finite(const json& j, const std::string& what, const std::string& label);
void expect_finite(double v, const std::string& what, const std::string& label);

// Mutants loaded and rejected, and when the count began (for the report's time).
struct Tally {
  int accepted = 0;
  int rejected = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

// Runs `body` on one mutant: it must return normally or throw an InputError naming `file` (or
// a file it references, `other_files`) and a pointer (or, with `line_ok`, a line number).
// CAPSIM_FUZZ_VERBOSE=1 prints each mutant before it runs, to find the one that crashes.
void run_mutant(const std::string& label, const std::string& file, Tally& tally,
                const std::function<void()>& body, bool line_ok = false,
                const std::vector<std::string>& other_files = {});

// Prints the tally and the time it took, and fails the test unless some mutants loaded (else
// nothing downstream of the reader ran) and some were rejected (else no mutation bit).
void report(const char* what, const Tally& t);

// One data line of a CSV (an index in [first_data_line, lines.size())) cut short, one of its
// fields replaced by garbage (nan, inf, negative, huge, empty, a stray quote or comma, ...), or
// one field deleted; `label` says which, for failure messages.
struct CsvMutant {
  std::vector<std::string> lines;
  std::string label;
};
[[nodiscard]] CsvMutant mutate_csv_line(const std::vector<std::string>& lines,
                                        size_t first_data_line, std::mt19937& rng);

// Text inputs (nccl-tests logs, CSV): lines and whitespace- or comma-separated words.
[[nodiscard]] std::vector<std::string> split_lines(const std::string& text);
[[nodiscard]] std::string join_lines(const std::vector<std::string>& lines);
[[nodiscard]] std::vector<std::string> split_ws(const std::string& line);
[[nodiscard]] std::string join_ws(const std::vector<std::string>& words);

}  // namespace capsim::fuzz
