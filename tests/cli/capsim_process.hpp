#pragma once

// A `capsim` run as a process the test can signal, and the processes it starts.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace capsim::testing {

// Returns the processes whose parent is `pid` (the fourth field of /proc/<pid>/stat).
inline std::set<pid_t> children_of(pid_t pid) {
  namespace fs = std::filesystem;
  std::set<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t name_end = stat.rfind(')');
    if (name_end == std::string::npos)
      continue;
    std::istringstream fields(stat.substr(name_end + 1));
    char state = 0;
    pid_t parent = 0;
    fields >> state >> parent;
    if (parent == pid)
      out.insert(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Returns whether `pid` has ended and is only waiting to be reaped.
inline bool is_zombie(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t name_end = stat.rfind(')');
  return name_end == std::string::npos || name_end + 2 >= stat.size() || stat[name_end + 2] == 'Z';
}

// Returns whether `pid` still runs; reaps it when it is a child of this process that ended (a
// subreaper's orphans are).
inline bool is_running(pid_t pid) {
  int status = 0;
  const pid_t reaped = waitpid(pid, &status, WNOHANG);
  if (reaped == pid)
    return false;
  return reaped == 0 || !is_zombie(pid);
}

// Returns whether every one of `pids` has ended within a second (a parent-death signal acts at
// once; a simulation left running takes longer); kills the ones still running.
inline bool all_end_within_a_second(const std::set<pid_t>& pids) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  std::set<pid_t> left = pids;
  while (!left.empty() && Clock::now() < deadline) {
    std::erase_if(left, [](pid_t pid) { return !is_running(pid); });
    if (!left.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (const pid_t pid : left)
    kill(pid, SIGKILL);
  return left.empty();
}

// `capsim ARGS` in a process group of its own, with the stop signals at their default actions,
// TMPDIR set to `tmpdir`, stdout written to `stdout_path` and stderr discarded. Killed and reaped
// on destruction if still running.
class CapsimProcess {
 public:
  CapsimProcess(const std::vector<std::string>& args, const std::string& tmpdir,
                const std::string& stdout_path = "/dev/null") {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      // As a terminal starts it: a shell's background job (a CI runner's, say) inherits SIGINT
      // ignored, and an ignored signal stays ignored across exec.
      for (const int stop : {SIGINT, SIGTERM, SIGHUP})
        std::signal(stop, SIG_DFL);
      setenv("TMPDIR", tmpdir.c_str(), 1);
      const int out = open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int null = open("/dev/null", O_WRONLY);
      dup2(out, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      std::vector<std::string> text{CAPSIM_BINARY};
      text.insert(text.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (std::string& a : text)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(CAPSIM_BINARY, argv.data());
      _exit(127);
    }
    setpgid(pid_, pid_);  // on both sides: the group exists before either goes on
  }
  ~CapsimProcess() {
    if (pid_ > 0 && !ended_) {
      kill(pid_, SIGKILL);
      (void)wait();
    }
  }
  CapsimProcess(const CapsimProcess&) = delete;
  CapsimProcess& operator=(const CapsimProcess&) = delete;
  CapsimProcess(CapsimProcess&&) = delete;
  CapsimProcess& operator=(CapsimProcess&&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }

  // Returns its child processes as soon as it has some (none if it ends first or after 120 s).
  [[nodiscard]] std::set<pid_t> first_children() const {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (Clock::now() < deadline) {
      const std::set<pid_t> children = children_of(pid_);
      if (!children.empty() || kill(pid_, 0) != 0)
        return children;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return {};
  }

  // Waits for it to end; returns its wait status.
  int wait() {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    ended_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  bool ended_ = false;
};

}  // namespace capsim::testing
