// Runs a fuzz target's LLVMFuzzerTestOneInput once on every file of the folders (or files) named
// on the command line, in name order: the corpus and the regressions replayed by ctest without
// clang or libFuzzer. A finding aborts with the input's path printed first.
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/targets/fuzz_support.hpp"
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

// The input being run, for the signal handler (which may only write(2) preallocated bytes).
char g_current[4096];

void report_current(int signal_number) {
  static const char kPrefix[] = "fuzz replay: crashed on ";
  (void)!::write(STDERR_FILENO, kPrefix, sizeof kPrefix - 1);
  (void)!::write(STDERR_FILENO, g_current, std::strlen(g_current));
  (void)!::write(STDERR_FILENO, "\n", 1);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

std::vector<fs::path> inputs_of(const char* argument) {
  std::vector<fs::path> files;
  const fs::path path(argument);
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.is_regular_file())
        files.push_back(entry.path());
  } else if (fs::exists(path)) {
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  for (const int s : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    std::signal(s, report_current);
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    for (const fs::path& file : inputs_of(argv[i])) {
      std::snprintf(g_current, sizeof g_current, "%s", file.c_str());
      std::ifstream in(file, std::ios::binary);
      const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>()};
      (void)LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                   bytes.size());
      ++count;
    }
  }
  std::printf("fuzz replay: %zu inputs ran without a finding\n", count);
  return count > 0 ? 0 : 1;
}
