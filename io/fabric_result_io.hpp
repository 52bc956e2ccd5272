#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/fabric_result.hpp"

namespace capsim::io {

// The links the report's "hottest links" table lists.
inline constexpr std::size_t kHottestLinks = 8;

// Returns the JSON of `capsim simulate CLUSTER.json --json` (docs/cluster.md, "Output"): per
// job its placement, alone and shared iteration times, slowdown and both results
// (result_to_json); per inter-node link its capacity, bytes, utilisation and the bytes of each
// job; the hottest links. Numbers rounded as result_to_json rounds them; key order fixed.
[[nodiscard]] nlohmann::json fabric_contention_to_json(const FabricContention& contention);

// Returns the tables `capsim simulate CLUSTER.json` prints: the jobs, then the hottest links
// with the jobs that share them.
[[nodiscard]] std::string fabric_contention_table(const FabricContention& contention);

// Returns a node list in ranges, in its own order: "0-3, 8, 10-11".
[[nodiscard]] std::string node_ranges(const std::vector<int>& nodes);

}  // namespace capsim::io
