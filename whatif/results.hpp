#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "whatif/engine.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// The runs of one policy over the replicas (one seed each), in seed order.
struct PolicyRuns {
  std::string name;
  std::string preset;
  std::vector<PolicyResult> runs;
};

// Serialises one run (with its timeline) and reads it back; used across the fork boundary.
[[nodiscard]] nlohmann::json run_to_json(const PolicyResult& result);
[[nodiscard]] PolicyResult run_from_json(const nlohmann::json& json);

// Returns the `capsim whatif --json` document: per policy the mean over replicas of every
// metric (the keys of docs/design/json-output.md §4 and more) and, with several replicas, a
// "spread" object {metric: {std, min, max}}; "notes" when the policies' configuration files
// hold keys capsim does not model (read with allow_unmodelled). Byte-stable for the same runs.
[[nodiscard]] nlohmann::json summary_json(const WhatIf& whatif,
                                          const std::vector<PolicyRuns>& policies);

// Returns the human comparison table (one row per policy, means over replicas).
[[nodiscard]] std::string comparison_table(const WhatIf& whatif,
                                           const std::vector<PolicyRuns>& policies);

// Returns a self-contained HTML report: the table plus inline SVG plots of nodes by state and
// the queue over time (first replica of each policy) and cost per policy.
[[nodiscard]] std::string html_report(const WhatIf& whatif,
                                      const std::vector<PolicyRuns>& policies);

}  // namespace capsim::whatif
