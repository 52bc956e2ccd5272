#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/cluster_spec.hpp"

namespace capsim {

// How a job of a shared fabric gets its nodes (docs/cluster.md, "Placement").
enum class PlacementPolicy {
  kExplicit,
  kPacked,
  kSpread,
  kLeafAligned,
  kRailAligned,
  kRandomFragmented
};

// What one job asks of the fabric: its own node list, or a node count and a policy.
struct PlacementRequest {
  PlacementPolicy policy = PlacementPolicy::kPacked;
  int num_nodes = 1;
  std::vector<int> nodes;  // kExplicit: the fabric nodes, in job order
  std::uint64_t seed = 1;  // kRandomFragmented
};

// The nodes of each job, in request order, or why a job could not be placed.
struct PlacementOutcome {
  std::vector<std::vector<int>> nodes;
  // (request index, problem) for each job no policy could place.
  std::vector<std::pair<std::size_t, std::string>> problems;
};

// Returns each request's fabric nodes: explicit lists are reserved first, then the policies
// place their jobs in request order on the nodes still free. Nodes are handed out in whole
// NVLink domains (fabric.nvlink_domain_gpus() / gpus_per_node nodes) so that a job never shares
// a domain or a node with another. Deterministic: the same requests and seeds give the same
// nodes. REQUIRES: explicit lists name distinct nodes below fabric.num_nodes.
[[nodiscard]] PlacementOutcome place_jobs(const ClusterSpec& fabric,
                                          const std::vector<PlacementRequest>& requests);

// Returns `need` of `free_units` (ascending unit ids; a unit is `unit_nodes` nodes, unit u under
// leaf u * unit_nodes / leaf_nodes) as `request`'s policy picks them: the choice place_jobs makes.
// REQUIRES: need <= free_units.size(); request.policy is not kExplicit.
[[nodiscard]] std::vector<int> choose_free_units(const PlacementRequest& request,
                                                 const std::vector<int>& free_units,
                                                 std::size_t need, int unit_nodes, int leaf_nodes);

// The nodes under one leaf switch of `fabric` (1 unless the fabric is oversubscribed).
[[nodiscard]] int nodes_per_leaf(const ClusterSpec& fabric);

// Canonical names ("packed", "spread", "leaf-aligned", "rail-aligned", "random-fragmented") and
// the inverse
// (nullopt for an unknown name; "explicit" is not a policy one names).
[[nodiscard]] const char* to_string(PlacementPolicy policy);
[[nodiscard]] std::optional<PlacementPolicy> placement_policy_from_string(std::string_view name);

}  // namespace capsim
