// capsim: one binary, git-style subcommands. Exit codes: 0 ok, 1 internal error, 2 bad input;
// `capsim plan` exits 3 when some event confirmations failed (docs/planner.md).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.hpp"

namespace {

void print_usage() {
  std::printf(
      "capsim - simulator and capacity planner for GPU training clusters\n\n"
      "usage: capsim <command> [options]   (capsim <command> --help for its options)\n\n"
      "commands:\n");
  for (const auto& c : capsim::cli::commands())
    std::printf("  %-10s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("capsim 0.1.0\n");
    return 0;
  }
  for (const auto& c : capsim::cli::commands()) {
    if (std::strcmp(argv[1], c.name) == 0) {
      std::string name = std::string("capsim ") + c.name;
      argv[1] = name.data();
      const int code = c.run(argc - 1, argv + 1);
      // The command has closed its files. Ending without destructors lets the kernel free a
      // simulation's engine and actor stacks at once instead of one by one.
      std::cout.flush();
      std::fflush(nullptr);
      std::_Exit(code);
    }
  }
  std::fprintf(stderr, "capsim: unknown command \"%s\"; run capsim --help\n", argv[1]);
  return 2;
}
