#include "sim/forked_work.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "sim/detail/die_with_parent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

namespace capsim::sim {
namespace {

// The signals that end a process by default and that a user or a scheduler sends to stop it.
constexpr std::array<int, 3> kStopSignals{SIGINT, SIGTERM, SIGHUP};

// A child's console text is kept up to this size: enough for any message, bounded for a chatty
// child.
constexpr size_t kMaxConsoleBytes = 64 * 1024;

volatile std::sig_atomic_t g_caught_signal = 0;
volatile std::sig_atomic_t g_wake_fd = -1;

// Async-signal-safe: remembers the signal and wakes the poll loop through the self-pipe (the
// signal may be delivered to another thread than the one polling).
void on_stop_signal(int signal) {
  const int saved_errno = errno;
  g_caught_signal = signal;
  const char byte = 0;
  const ssize_t written = write(g_wake_fd, &byte, 1);
  (void)written;
  errno = saved_errno;
}

std::system_error os_error(const char* what) {
  return {errno, std::generic_category(), what};
}

void close_fd(int& fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

// Returns the exit code of a wait status: the child's own, or 128 + the signal that ended it.
int exit_code_of(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// Waits for `pid` to end, through interrupting signals; returns its exit code (-1 when it was
// reaped elsewhere).
int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return -1;
  }
  return exit_code_of(status);
}

bool write_all(int fd, const std::string& bytes) {
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// While it lives, catches the stop signals whose action is the default one; ignored or
// otherwise handled ones are left as they are.
class StopSignals {
 public:
  StopSignals() {
    if (pipe2(wake_.data(), O_CLOEXEC | O_NONBLOCK) != 0)
      throw os_error("pipe");
    g_caught_signal = 0;
    g_wake_fd = wake_[1];
    for (size_t i = 0; i < kStopSignals.size(); ++i) {
      struct sigaction current {};
      sigaction(kStopSignals[i], nullptr, &current);
      if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL)
        continue;
      struct sigaction catching {};
      catching.sa_handler = on_stop_signal;
      sigemptyset(&catching.sa_mask);
      catching.sa_flags = 0;  // no SA_RESTART: a blocked poll returns EINTR
      sigaction(kStopSignals[i], &catching, &previous_[i]);
      installed_[i] = true;
    }
  }
  ~StopSignals() {
    restore();
    close_fd(wake_[0]);
    close_fd(wake_[1]);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  StopSignals(StopSignals&&) = delete;
  StopSignals& operator=(StopSignals&&) = delete;

  [[nodiscard]] int wake_fd() const { return wake_[0]; }
  [[nodiscard]] static int caught() { return g_caught_signal; }

  // Gives the signals back their previous actions (in a child: so that a stop signal ends it).
  void restore() {
    for (size_t i = 0; i < kStopSignals.size(); ++i) {
      if (installed_[i])
        sigaction(kStopSignals[i], &previous_[i], nullptr);
      installed_[i] = false;
    }
  }

  // In a fresh child: the parent's actions and no copy of the self-pipe.
  void leave_in_child() {
    restore();
    close_fd(wake_[0]);
    close_fd(wake_[1]);
  }

  // Ends the process by `signal` under its default action, as it would have ended had nothing
  // caught it.
  [[noreturn]] void end_process_by(int signal) {
    restore();
    raise(signal);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);  // pending if this thread blocked it
    throw std::runtime_error(std::string("interrupted by ") + strsignal(signal));
  }

 private:
  std::array<int, 2> wake_{-1, -1};
  std::array<struct sigaction, kStopSignals.size()> previous_{};
  std::array<bool, kStopSignals.size()> installed_{};
};

// A running child and what it has sent so far.
struct Child {
  pid_t pid = -1;
  size_t index = 0;
  int out_fd = -1;      // the work's result
  int console_fd = -1;  // its stdout and stderr
  std::string bytes;
  std::string console;
};

// The children in flight. Whatever ends the parent's loop early (an exception, a stop signal)
// kills and reaps them: none outlives the call.
class Children {
 public:
  Children() = default;
  ~Children() { kill_all(); }
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  Children(Children&&) = delete;
  Children& operator=(Children&&) = delete;

  [[nodiscard]] size_t size() const { return running_.size(); }
  [[nodiscard]] bool empty() const { return running_.empty(); }
  std::vector<Child>& running() { return running_; }

  // Forks the child that runs work(index).
  void start(size_t index, const std::function<ChildReport(size_t)>& work, StopSignals& signals) {
    std::array<int, 2> out{-1, -1};
    std::array<int, 2> console{-1, -1};
    if (pipe2(out.data(), O_CLOEXEC) != 0)
      throw os_error("pipe");
    if (pipe2(console.data(), O_CLOEXEC) != 0) {
      const std::system_error error = os_error("pipe");
      close_fd(out[0]);
      close_fd(out[1]);
      throw error;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      const std::system_error error = os_error("fork");
      for (int* fd : {&out[0], &out[1], &console[0], &console[1]})
        close_fd(*fd);
      throw error;
    }
    if (pid == 0)
      run_child(index, work, signals, out, console, parent);
    close_fd(out[1]);
    close_fd(console[1]);
    running_.push_back(Child{pid, index, out[0], console[0], {}, {}});
  }

  // Reads what child `i` sent; returns true once both of its pipes are at their end.
  bool drain(size_t i, const pollfd& out_poll, const pollfd& console_poll) {
    Child& c = running_[i];
    read_some(out_poll, c.out_fd, c.bytes, std::string::npos);
    read_some(console_poll, c.console_fd, c.console, kMaxConsoleBytes);
    return c.out_fd < 0 && c.console_fd < 0;
  }

  // Reaps child `i` (its pipes are closed) and takes it off the list.
  std::pair<size_t, ChildOutcome> finish(size_t i) {
    Child c = std::move(running_[i]);
    running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    ChildOutcome outcome;
    outcome.exit_code = reap(c.pid);
    outcome.bytes = std::move(c.bytes);
    outcome.console = std::move(c.console);
    return {c.index, std::move(outcome)};
  }

  void kill_all() noexcept {
    for (Child& c : running_)
      kill(c.pid, SIGKILL);
    for (Child& c : running_) {
      close_fd(c.out_fd);
      close_fd(c.console_fd);
      (void)reap(c.pid);
    }
    running_.clear();
  }

 private:
  // One read from a pipe poll found ready; the pipe is closed at its end.
  static void read_some(const pollfd& p, int& fd, std::string& into, size_t limit) {
    if (fd < 0 || (p.revents & (POLLIN | POLLHUP | POLLERR)) == 0)
      return;
    std::array<char, 65536> buf{};
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      return;
    if (n <= 0) {
      close_fd(fd);
      return;
    }
    const size_t keep = std::min(static_cast<size_t>(n), limit - std::min(limit, into.size()));
    into.append(buf.data(), keep);
  }

  // The child's side: never returns.
  [[noreturn]] void run_child(size_t index, const std::function<ChildReport(size_t)>& work,
                              StopSignals& signals, std::array<int, 2>& out,
                              std::array<int, 2>& console, pid_t parent) {
    detail::die_with_parent(parent);
    signals.leave_in_child();
    for (Child& other : running_) {
      close_fd(other.out_fd);
      close_fd(other.console_fd);
    }
    close_fd(out[0]);
    close_fd(console[0]);
    // The parent's stdout may be a JSON document: anything the work prints goes to the console.
    dup2(console[1], STDOUT_FILENO);
    dup2(console[1], STDERR_FILENO);
    close_fd(console[1]);
    ChildReport report;
    try {
      report = work(index);
    } catch (const std::exception& e) {
      report = {1, ""};
      const std::string message = std::string(e.what()) + "\n";
      (void)write_all(STDERR_FILENO, message);
    } catch (...) {
      report = {1, ""};
    }
    const bool sent = write_all(out[1], report.bytes);
    _exit(sent ? report.exit_code : 1);
  }

  std::vector<Child> running_;
};

}  // namespace

void run_forked(size_t count, int parallel, const std::function<ChildReport(size_t)>& work,
                const std::function<void(size_t, ChildOutcome)>& done) {
  StopSignals signals;
  Children children;
  const auto limit = static_cast<size_t>(std::max(1, parallel));
  size_t next = 0;
  std::vector<pollfd> polls;
  while (next < count || !children.empty()) {
    if (const int signal = StopSignals::caught(); signal != 0) {
      children.kill_all();
      signals.end_process_by(signal);
    }
    for (; next < count && children.size() < limit; ++next)
      children.start(next, work, signals);
    polls.assign(1, pollfd{signals.wake_fd(), POLLIN, 0});
    for (const Child& c : children.running()) {
      polls.push_back(pollfd{c.out_fd, POLLIN, 0});
      polls.push_back(pollfd{c.console_fd, POLLIN, 0});
    }
    if (poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      throw os_error("poll");
    }
    // Backwards, so that finishing a child does not move the ones still to be read.
    for (size_t i = children.size(); i-- > 0;) {
      if (!children.drain(i, polls[1 + 2 * i], polls[2 + 2 * i]))
        continue;
      auto [index, outcome] = children.finish(i);
      done(index, std::move(outcome));
    }
  }
  // A stop signal that arrived with the last children's end (a Ctrl-C to the process group ends
  // them too) still ends the process: the next call would forget it.
  if (const int signal = StopSignals::caught(); signal != 0)
    signals.end_process_by(signal);
}

std::string describe_exit(int exit_code) {
  if (exit_code > 128) {
    return "killed by signal " + std::to_string(exit_code - 128) + " (" +
           strsignal(exit_code - 128) + ")";
  }
  return exit_code < 0 ? std::string("exit status lost") : "exit " + std::to_string(exit_code);
}

}  // namespace capsim::sim
