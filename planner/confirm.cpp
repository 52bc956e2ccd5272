#include "planner/confirm.hpp"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <nlohmann/json.hpp>

#include "models/io/scenario_io.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX, for posix_spawn

namespace capsim::planner {
namespace {

namespace fs = std::filesystem;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A fresh folder under TMPDIR (or /tmp), removed with its files on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/capsim-plan-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary folder: " +
                               std::generic_category().message(errno));
    }
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&&) = delete;
  TempDir& operator=(TempDir&&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_line(const std::string& text) {
  const size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

// Starts `binary simulate FILE --engine event --json` with stdout/stderr in files.
pid_t spawn_simulate(const std::string& binary, const std::string& dir, size_t index) {
  const std::string base = dir + "/c" + std::to_string(index);
  const std::string scenario = base + ".json";
  const std::string out = base + ".out";
  const std::string err = base + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args{binary, "simulate", scenario, "--engine", "event", "--json"};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw std::runtime_error("cannot start " + binary + ": " + std::generic_category().message(rc));
  }
  return pid;
}

int wait_exit_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

ConfirmOutcome collect(const std::string& dir, size_t index, int exit_code) {
  const std::string base = dir + "/c" + std::to_string(index);
  if (exit_code != 0) {
    ConfirmOutcome o;
    o.error = "exit " + std::to_string(exit_code) + ": " + first_line(read_text(base + ".err"));
    return o;
  }
  return parse_simulate_json(read_text(base + ".out"));
}

// Blocks until child `pid` exits, retrying when a signal interrupts the wait; returns its status.
int wait_for_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Writes scenario i to DIR/c<i>.json, where spawn_simulate and collect expect it.
void write_scenario_files(const std::string& dir, const std::vector<Scenario>& scenarios) {
  for (size_t i = 0; i < scenarios.size(); ++i) {
    std::ofstream out(dir + "/c" + std::to_string(i) + ".json");
    out << scenario_to_json(scenarios[i]).dump(2) << "\n";
  }
}

// Runs the first scenario alone. Exit 2 on a scenario the screen accepted means this binary
// cannot run the event engine at all: marks the batch unavailable and returns false.
bool probe_first_scenario(const std::string& binary, const std::string& dir, ConfirmBatch& batch,
                          const ProgressFn& progress, long long total) {
  const pid_t pid = spawn_simulate(binary, dir, 0);
  const int code = wait_exit_code(wait_for_child(pid));
  if (code == 2) {
    batch.available = false;
    batch.reason = first_line(read_text(dir + "/c0.err"));
    batch.outcomes.clear();
    return false;
  }
  batch.outcomes[0] = collect(dir, 0, code);
  if (progress)
    progress("confirm", 1, total);
  return true;
}

// Children in flight: pid -> scenario index.
using RunningChildren = std::map<pid_t, size_t>;

// Starts children for the next scenarios until `jobs` (at least 1) are in flight.
void spawn_up_to_jobs(const std::string& binary, const std::string& dir, int jobs, size_t count,
                      size_t& next, RunningChildren& running) {
  while (next < count && static_cast<int>(running.size()) < std::max(1, jobs)) {
    running[spawn_simulate(binary, dir, next)] = next;
    ++next;
  }
}

// Reaps the children still running, so none outlives the folder holding its files.
void reap_all(const RunningChildren& running) {
  for (const auto& [pid, index] : running) {
    wait_for_child(pid);
  }
}

// Runs scenarios 1.. with up to `jobs` children at once, storing each outcome as its child exits.
void run_remaining_scenarios(const std::string& binary, int jobs, const std::string& dir,
                             size_t count, ConfirmBatch& batch, const ProgressFn& progress,
                             long long total) {
  RunningChildren running;
  size_t next = 1;
  long long done = 1;
  try {
    while (next < count || !running.empty()) {
      spawn_up_to_jobs(binary, dir, jobs, count, next, running);
      int status = 0;
      const pid_t pid = waitpid(-1, &status, 0);
      if (pid < 0) {
        if (errno == EINTR)
          continue;
        throw std::runtime_error(std::string("waitpid: ") + std::generic_category().message(errno));
      }
      const auto it = running.find(pid);
      if (it == running.end())
        continue;  // not one of ours
      batch.outcomes[it->second] = collect(dir, it->second, wait_exit_code(status));
      running.erase(it);
      if (progress)
        progress("confirm", ++done, total);
    }
  } catch (...) {
    reap_all(running);
    throw;
  }
}

}  // namespace

ConfirmOutcome parse_simulate_json(const std::string& text) {
  ConfirmOutcome o;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    o.evaluation.engine = j.at("engine").get<std::string>();
    o.evaluation.iteration_time_s = j.at("iteration_time_s").get<double>();
    o.evaluation.tokens_per_s = j.at("tokens_per_s").get<double>();
    o.evaluation.mfu = j.at("mfu").get<double>();
    const auto& mem = j.at("memory");
    o.evaluation.peak_memory_bytes = mem.at("peak_gib_per_gpu").get<double>() * kGiB;
    o.evaluation.capacity_bytes = mem.at("capacity_gib").get<double>() * kGiB;
    o.ok = o.evaluation.iteration_time_s > 0.0 && o.evaluation.tokens_per_s > 0.0;
    if (!o.ok)
      o.error = "non-positive iteration time in simulate output";
  } catch (const nlohmann::json::exception& e) {
    o.ok = false;
    o.error = std::string("unreadable simulate output: ") + e.what();
  }
  return o;
}

ConfirmFn subprocess_confirmer(std::string binary, int jobs) {
  return [binary = std::move(binary), jobs](const std::vector<Scenario>& scenarios,
                                            const ProgressFn& progress) {
    ConfirmBatch batch;
    if (scenarios.empty())
      return batch;
    TempDir dir;
    write_scenario_files(dir.path(), scenarios);
    const auto total = static_cast<long long>(scenarios.size());
    batch.outcomes.resize(scenarios.size());
    if (!probe_first_scenario(binary, dir.path(), batch, progress, total))
      return batch;
    run_remaining_scenarios(binary, jobs, dir.path(), scenarios.size(), batch, progress, total);
    return batch;
  };
}

}  // namespace capsim::planner
