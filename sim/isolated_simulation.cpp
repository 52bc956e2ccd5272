#include "sim/isolated_simulation.hpp"

#include <array>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "sim/detail/die_with_parent.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include <sys/wait.h>
#include <unistd.h>

namespace capsim::sim {
namespace {

// What the child sends back: the simulated numbers; the parent recomputes everything that is
// a pure function of them (finish_result) so the wire format stays small. After it come the
// `stages` busy times, then the notes (or the error).
struct Wire {
  double ok = 0.0;
  double iteration_time_s = 0.0;
  std::array<double, 8> breakdown{};
  int stage = 0;
  int stages = 0;  // how many busy times follow
};

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string out;
  std::array<char, 4096> buf{};
  ssize_t n = 0;
  while ((n = read(fd, buf.data(), buf.size())) > 0)
    out.append(buf.data(), static_cast<size_t>(n));
  return out;
}

}  // namespace

SimulationResult simulate_iteration_in_child(const Scenario& scenario,
                                             const HardwareProfile& profile,
                                             const SimOptions& options) {
  if (options.trace != nullptr) {
    throw std::invalid_argument("simulate_iteration_in_child: traces stay in-process");
  }
  const IterationCosts costs = estimate::compute_iteration_costs(scenario, profile);
  std::array<int, 2> fds{};
  if (pipe(fds.data()) != 0)
    throw std::runtime_error("simulate_iteration_in_child: pipe failed");
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error("simulate_iteration_in_child: fork failed");
  if (pid == 0) {
    detail::die_with_parent(parent);
    close(fds[0]);
    Wire w;
    std::string payload;  // the result's notes, one per line, or the error
    try {
      const SimulationResult r = simulate_iteration(scenario, costs, profile, options);
      const TimeBreakdown& b = r.breakdown;
      w.ok = 1.0;
      w.iteration_time_s = r.iteration_time_s;
      w.breakdown = {
          b.compute_s,         b.tp_comm_exposed_s, b.cp_comm_exposed_s, b.pp_comm_exposed_s,
          b.dp_comm_exposed_s, b.bubble_s,          b.optimizer_s,       b.other_s};
      w.stage = b.stage;
      w.stages = static_cast<int>(b.stage_busy_s.size());
      payload.resize(b.stage_busy_s.size() * sizeof(double));
      std::memcpy(payload.data(), b.stage_busy_s.data(), payload.size());
      for (const std::string& note : r.notes)
        payload += note + '\n';
    } catch (const std::exception& e) {
      payload = e.what();
    }
    const bool sent =
        write_all(fds[1], &w, sizeof w) && write_all(fds[1], payload.data(), payload.size());
    close(fds[1]);
    _exit(sent ? 0 : 1);
  }
  close(fds[1]);
  const std::string bytes = read_all(fds[0]);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Wire w;
  if (bytes.size() < sizeof w) {
    throw std::runtime_error("event engine child process died (status " + std::to_string(status) +
                             ")");
  }
  std::memcpy(&w, bytes.data(), sizeof w);
  if (w.ok == 0.0)
    throw std::runtime_error(bytes.substr(sizeof w));
  SimulationResult r;
  r.engine = "event";
  r.set_profile(profile);
  r.iteration_time_s = w.iteration_time_s;
  TimeBreakdown& b = r.breakdown;
  b.compute_s = w.breakdown[0];
  b.tp_comm_exposed_s = w.breakdown[1];
  b.cp_comm_exposed_s = w.breakdown[2];
  b.pp_comm_exposed_s = w.breakdown[3];
  b.dp_comm_exposed_s = w.breakdown[4];
  b.bubble_s = w.breakdown[5];
  b.optimizer_s = w.breakdown[6];
  b.other_s = w.breakdown[7];
  b.stage = w.stage;
  const size_t busy_bytes = static_cast<size_t>(w.stages) * sizeof(double);
  if (bytes.size() < sizeof w + busy_bytes)
    throw std::runtime_error("event engine child process sent a truncated result");
  b.stage_busy_s.resize(static_cast<size_t>(w.stages));
  std::memcpy(b.stage_busy_s.data(), bytes.data() + sizeof w, busy_bytes);
  // The child's notes (what it simulated, the approximations it made), one per line.
  for (size_t begin = sizeof w + busy_bytes; begin < bytes.size();) {
    size_t end = bytes.find('\n', begin);
    if (end == std::string::npos)
      end = bytes.size();
    r.notes.push_back(bytes.substr(begin, end - begin));
    begin = end + 1;
  }
  estimate::finish_result(scenario, costs, r);
  return r;
}

}  // namespace capsim::sim
