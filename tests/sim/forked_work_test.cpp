// run_forked: each piece of work in a forked child, results and console text back on pipes,
// how each child ended, and no child outliving the call (an exception, a stop signal).
#include "sim/forked_work.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

namespace capsim::sim {
namespace {

using Clock = std::chrono::steady_clock;

std::map<size_t, ChildOutcome> run_all(size_t count, int parallel,
                                       const std::function<ChildReport(size_t)>& work) {
  std::map<size_t, ChildOutcome> out;
  run_forked(count, parallel, work, [&](size_t i, ChildOutcome o) {
    EXPECT_EQ(out.count(i), 0u);
    out[i] = std::move(o);
  });
  return out;
}

// Returns the number of lines in the file at `path`.
long lines_in(const std::string& path) {
  std::ifstream in(path);
  return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
}

// No child of this process is left, running or unreaped.
bool no_children_left() {
  int status = 0;
  return waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}

TEST(ForkedWorkTest, EachChildsResultComesBackUnderItsIndex) {
  const auto out = run_all(7, 3, [](size_t i) {
    // Work runs in a child: its pid differs from the parent's.
    return ChildReport{
        static_cast<int>(i % 2),
        std::to_string(i) + ":" + std::string(100000 * i, 'x') + ":" + std::to_string(getppid())};
  });
  ASSERT_EQ(out.size(), 7u);
  for (const auto& [i, o] : out) {
    EXPECT_EQ(o.exit_code, static_cast<int>(i % 2));
    EXPECT_EQ(o.bytes, std::to_string(i) + ":" + std::string(100000 * i, 'x') + ":" +
                           std::to_string(getpid()));
  }
  EXPECT_TRUE(no_children_left());
}

TEST(ForkedWorkTest, ConsoleExceptionsAndSignalsAreReported) {
  const auto out = run_all(3, 2, [](size_t i) -> ChildReport {
    std::printf("printed by %zu\n", i);  // must not reach the parent's stdout
    std::fflush(stdout);
    if (i == 1)
      throw std::runtime_error("thrown in the child");
    if (i == 2)
      raise(SIGKILL);
    return {0, "ok"};
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.at(0).exit_code, 0);
  EXPECT_EQ(out.at(0).console, "printed by 0\n");
  EXPECT_EQ(out.at(1).exit_code, 1);
  EXPECT_EQ(out.at(1).bytes, "");
  EXPECT_EQ(out.at(1).console, "printed by 1\nthrown in the child\n");
  EXPECT_EQ(out.at(2).exit_code, 128 + SIGKILL);
  EXPECT_TRUE(out.at(2).killed_by_signal());
  EXPECT_EQ(describe_exit(out.at(2).exit_code), "killed by signal 9 (Killed)");
  EXPECT_EQ(describe_exit(3), "exit 3");
}

TEST(ForkedWorkTest, NoMoreThanParallelChildrenAtOnce) {
  // Each child reports when it started and ended (the monotonic clock is system-wide).
  const auto out = run_all(6, 2, [](size_t) {
    const auto start = Clock::now().time_since_epoch().count();
    usleep(50000);
    const auto end = Clock::now().time_since_epoch().count();
    return ChildReport{0, std::to_string(start) + " " + std::to_string(end)};
  });
  std::vector<std::pair<long long, long long>> spans;
  for (const auto& [i, o] : out) {
    const size_t space = o.bytes.find(' ');
    spans.emplace_back(std::stoll(o.bytes.substr(0, space)), std::stoll(o.bytes.substr(space + 1)));
  }
  for (const auto& [start, end] : spans) {
    (void)end;
    int running = 0;
    for (const auto& [s, e] : spans)
      running += s <= start && start < e ? 1 : 0;
    EXPECT_LE(running, 2);
  }
}

// An exception out of `done` kills and reaps the children still running before it propagates.
TEST(ForkedWorkTest, AnExceptionKillsTheOtherChildren) {
  const auto start = Clock::now();
  EXPECT_THROW(run_forked(
                   3, 3,
                   [](size_t i) {
                     if (i > 0)
                       sleep(60);
                     return ChildReport{0, ""};
                   },
                   [](size_t, const ChildOutcome&) { throw std::runtime_error("stop"); }),
               std::runtime_error);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
  EXPECT_TRUE(no_children_left());
}

// A SIGTERM to the parent kills and reaps its children, then ends it by SIGTERM.
TEST(ForkedWorkDeathTest, SigtermEndsTheProcessAfterItsChildren) {
  const std::string pids = ::testing::TempDir() + "capsim_forked_pids_" + std::to_string(getpid());
  std::filesystem::remove(pids);
  EXPECT_EXIT(run_forked(
                  3, 3,
                  [&](size_t i) {
                    if (i > 0) {
                      std::ofstream(pids, std::ios::app) << getpid() << "\n";
                      sleep(60);
                    }
                    return ChildReport{0, ""};
                  },
                  [&](size_t, const ChildOutcome&) {
                    // Once the two sleepers are running, as a `kill` from outside would.
                    while (lines_in(pids) < 2)
                      usleep(1000);
                    kill(getpid(), SIGTERM);
                  }),
              ::testing::KilledBySignal(SIGTERM), "");
  std::ifstream in(pids);
  int count = 0;
  for (pid_t pid = 0; in >> pid; ++count)
    EXPECT_NE(kill(pid, 0), 0) << "child " << pid << " outlived its parent";
  EXPECT_EQ(count, 2);
  std::filesystem::remove(pids);
}

}  // namespace
}  // namespace capsim::sim
