#include "whatif/runner.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "sim/forked_work.hpp"

#include "whatif/engine.hpp"

namespace capsim::whatif {
namespace {

// Child side: one simulation's JSON, or {"error": message} with exit code 1.
sim::ChildReport run_one(const WhatIf& whatif, const PolicySpec& policy, std::uint64_t seed) {
  try {
    return {0, run_to_json(run_policy(whatif, policy, seed)).dump()};
  } catch (const std::exception& e) {
    return {1, nlohmann::json{{"error", e.what()}}.dump()};
  }
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

// The message for a child that failed: the error it reported, else how it ended and the first
// line it printed.
std::string failure_message(const std::string& policy_name, const nlohmann::json& json,
                            const sim::ChildOutcome& outcome) {
  std::string why;
  if (json.is_object() && json.contains("error") && json.at("error").is_string()) {
    why = json.at("error").get<std::string>();
  } else {
    why = "child process ended abnormally (" + sim::describe_exit(outcome.exit_code) + ")";
    const std::string first_line = outcome.console.substr(0, outcome.console.find('\n'));
    if (!first_line.empty())
      why += ": " + first_line;
  }
  return "what-if run of policy \"" + policy_name + "\" failed: " + why;
}

}  // namespace

std::vector<PolicyRuns> run_all(const WhatIf& whatif, const std::vector<PolicySpec>& policies,
                                int replicas, int parallel) {
  std::vector<PolicyRuns> out = empty_results(policies, replicas);
  const std::vector<std::pair<std::size_t, int>> todo = work_list(policies.size(), replicas);
  // Only the first failure (in work order) is reported; the rest of the work still runs.
  std::size_t failed_at = todo.size();
  std::string failure;
  sim::run_forked(
      todo.size(), parallel,
      [&](std::size_t i) {
        const auto [policy, replica] = todo[i];
        return run_one(whatif, policies[policy], whatif.seed + static_cast<std::uint64_t>(replica));
      },
      [&](std::size_t i, sim::ChildOutcome outcome) {
        const auto [policy, replica] = todo[i];
        const auto json = nlohmann::json::parse(outcome.bytes, nullptr, false);
        if (outcome.exit_code != 0 || json.is_discarded() || json.contains("error")) {
          if (i < failed_at) {
            failed_at = i;
            failure = failure_message(policies[policy].name, json, outcome);
          }
          return;
        }
        out[policy].runs[static_cast<std::size_t>(replica)] = run_from_json(json);
      });
  if (!failure.empty())
    throw std::runtime_error(failure);
  return out;
}

}  // namespace capsim::whatif
