#include "sim/whatif/runner.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "models/io/input_error.hpp"
#include "sim/detail/die_with_parent.hpp"
#include "sim/whatif/engine.hpp"

#include <sys/wait.h>
#include <unistd.h>

namespace capsim::whatif {
namespace {

struct Child {
  pid_t pid = -1;
  std::FILE* out = nullptr;
  std::size_t policy = 0;
  int replica = 0;
};

// Child side: run one simulation, write its JSON to `out`, never return.
[[noreturn]] void child_main(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed,
                             std::FILE* out) {
  int code = 0;
  std::string text;
  try {
    text = run_to_json(run_policy(whatif, policy, seed)).dump();
  } catch (const std::exception& e) {
    text = nlohmann::json{{"error", e.what()}}.dump();
    code = 1;
  }
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
  _exit(code);
}

std::string slurp(std::FILE* f) {
  std::string s;
  std::rewind(f);
  std::array<char, 65536> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0)
    s.append(buf.data(), n);
  return s;
}

// One PolicyRuns per policy, in policy order, with a slot for each replica's run.
std::vector<PolicyRuns> empty_results(const std::vector<PolicySpec>& policies, int replicas) {
  std::vector<PolicyRuns> out(policies.size());
  for (std::size_t p = 0; p < policies.size(); ++p) {
    out[p].name = policies[p].name;
    out[p].preset = policies[p].preset;
    out[p].runs.resize(static_cast<std::size_t>(replicas));
  }
  return out;
}

// The (policy, replica) pairs in the order children are started: policy order, seeds ascending.
std::vector<std::pair<std::size_t, int>> work_list(std::size_t policy_count, int replicas) {
  std::vector<std::pair<std::size_t, int>> todo;
  for (std::size_t p = 0; p < policy_count; ++p) {
    for (int r = 0; r < replicas; ++r)
      todo.emplace_back(p, r);
  }
  return todo;
}

// Forks a child that runs replica `replica` of policy `policy` and writes its JSON to a
// temporary file the parent reads after the child exits.
Child start_child(const WhatIf& whatif, const std::vector<PolicySpec>& policies, std::size_t policy,
                  int replica) {
  Child c;
  c.policy = policy;
  c.replica = replica;
  c.out = std::tmpfile();
  if (c.out == nullptr)
    throw std::runtime_error("cannot create a temporary file");
  std::fflush(nullptr);
  const pid_t parent = getpid();
  c.pid = fork();
  if (c.pid < 0)
    throw std::runtime_error("fork failed");
  if (c.pid == 0) {
    sim::detail::die_with_parent(parent);
    child_main(whatif, policies[c.policy], whatif.seed + static_cast<std::uint64_t>(c.replica),
               c.out);
  }
  return c;
}

// The message for a child that failed: the error it reported, else how it exited.
std::string failure_message(const std::string& policy_name, const nlohmann::json& json,
                            int status) {
  return "what-if run of policy \"" + policy_name + "\" failed: " +
         (json.is_object() && json.contains("error")
              ? json.at("error").get<std::string>()
              : "child exited abnormally (status " + std::to_string(status) + ")");
}

// Reads the finished child's output into its slot in `out`. Only the first failure is kept in
// `failure`; run_all still runs the rest of the work and throws it at the end.
void collect_child(const Child& child, int status, const std::vector<PolicySpec>& policies,
                   std::vector<PolicyRuns>& out, std::string& failure) {
  const std::string text = slurp(child.out);
  std::fclose(child.out);
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (!WIFEXITED(status) || json.is_discarded() || json.contains("error")) {
    if (failure.empty())
      failure = failure_message(policies[child.policy].name, json, status);
  } else {
    out[child.policy].runs[static_cast<std::size_t>(child.replica)] = run_from_json(json);
  }
}

// Waits for any child to exit and, when it is one of ours, collects it and drops it from
// `running`.
void reap_one(std::vector<Child>& running, const std::vector<PolicySpec>& policies,
              std::vector<PolicyRuns>& out, std::string& failure) {
  int status = 0;
  const pid_t pid = waitpid(-1, &status, 0);
  if (pid < 0)
    throw std::runtime_error("waitpid failed");
  for (auto it = running.begin(); it != running.end(); ++it) {
    if (it->pid != pid)
      continue;
    collect_child(*it, status, policies, out, failure);
    running.erase(it);
    return;
  }
}

}  // namespace

std::vector<PolicyRuns> run_all(const WhatIf& whatif, const std::vector<PolicySpec>& policies,
                                int replicas, int parallel) {
  std::vector<PolicyRuns> out = empty_results(policies, replicas);
  const std::vector<std::pair<std::size_t, int>> todo = work_list(policies.size(), replicas);
  std::vector<Child> running;
  std::size_t next = 0;
  std::string failure;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && static_cast<int>(running.size()) < std::max(1, parallel)) {
      running.push_back(start_child(whatif, policies, todo[next].first, todo[next].second));
      ++next;
    }
    reap_one(running, policies, out, failure);
  }
  if (!failure.empty())
    throw std::runtime_error(failure);
  return out;
}

}  // namespace capsim::whatif
