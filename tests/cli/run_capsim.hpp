#pragma once

#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace capsim::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout; stderr is appended when `merge_stderr`
};

// Runs `command` through the shell and captures its stdout.
inline CommandResult run_shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr)
    return result;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    result.out.append(buf.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Runs the built capsim binary with `args` (shell-quoted by the caller) and captures stdout.
inline CommandResult run_capsim(const std::string& args, bool merge_stderr = false) {
  return run_shell(std::string(CAPSIM_BINARY) + " " + args +
                   (merge_stderr ? " 2>&1" : " 2>/dev/null"));
}

}  // namespace capsim::testing
