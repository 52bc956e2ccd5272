#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace capsim::sim {

// What the work done in a forked child hands back to its parent.
struct ChildReport {
  int exit_code = 0;
  std::string bytes;  // the result, as the work encodes it
};

// How a forked child ended, as its parent saw it.
struct ChildOutcome {
  int exit_code = 0;    // the child's exit code, or 128 + the signal that killed it
  std::string bytes;    // what the child's work handed back
  std::string console;  // what the child wrote to stdout or stderr (crash messages)
  [[nodiscard]] bool killed_by_signal() const { return exit_code > 128; }
};

// Runs work(i) for every i < count, each in a forked child process (SimGrid allows one
// simulation per process), at most `parallel` (at least 1) at once, and calls done(i, outcome)
// in the parent as each child ends, in the order they end. Results travel on pipes: nothing is
// written to the file system. Every child dies with its parent (PR_SET_PDEATHSIG), so even a
// SIGKILL of the parent leaves none running. A SIGINT, SIGTERM or SIGHUP that would end the
// process (default action) while children run kills and reaps them, then ends the process by
// that signal; an exception (from `done`, or a failed fork) kills and reaps them before it
// propagates. Call from the main thread (the kernel ties the death signal to the forking
// thread), one call at a time; `work` runs in the child only.
void run_forked(size_t count, int parallel, const std::function<ChildReport(size_t)>& work,
                const std::function<void(size_t, ChildOutcome)>& done);

// Returns "exit N", or "killed by signal N (NAME)" for a child a signal ended.
[[nodiscard]] std::string describe_exit(int exit_code);

}  // namespace capsim::sim
