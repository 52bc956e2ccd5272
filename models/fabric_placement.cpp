#include "models/fabric_placement.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>

namespace capsim {
namespace {

// Nodes of one NVLink domain: the unit a job takes or leaves whole.
int domain_nodes(const ClusterSpec& fabric) {
  const int per_node = std::max(fabric.gpus_per_node, 1);
  return std::clamp(fabric.nvlink_domain_gpus() / per_node, 1, std::max(fabric.num_nodes, 1));
}

// The free units of each leaf, leaves and units in ascending order.
std::map<int, std::vector<int>> free_units_by_leaf(const std::vector<int>& free_units,
                                                   int unit_nodes, int leaf_nodes) {
  std::map<int, std::vector<int>> by_leaf;
  for (const int unit : free_units)
    by_leaf[unit * unit_nodes / leaf_nodes].push_back(unit);
  return by_leaf;
}

// Round robin over the leaves: each leaf's first free unit, then each one's second, ...
std::vector<int> spread_units(const std::map<int, std::vector<int>>& by_leaf, std::size_t need) {
  std::vector<int> chosen;
  for (std::size_t pass = 0; chosen.size() < need; ++pass) {
    for (const auto& [leaf, units] : by_leaf) {
      if (pass < units.size() && chosen.size() < need)
        chosen.push_back(units[pass]);
    }
  }
  return chosen;
}

// The fewest leaves: the fullest-fitting leaf that holds the whole job (best fit), else whole
// leaves from the one with the most free units down.
std::vector<int> leaf_aligned_units(const std::map<int, std::vector<int>>& by_leaf,
                                    std::size_t need) {
  const std::vector<int>* best = nullptr;
  for (const auto& [leaf, units] : by_leaf) {
    if (units.size() >= need && (best == nullptr || units.size() < best->size()))
      best = &units;
  }
  if (best != nullptr)
    return {best->begin(), best->begin() + static_cast<std::ptrdiff_t>(need)};
  std::vector<const std::vector<int>*> leaves;
  for (const auto& [leaf, units] : by_leaf)
    leaves.push_back(&units);
  std::stable_sort(leaves.begin(), leaves.end(),
                   [](const auto* a, const auto* b) { return a->size() > b->size(); });
  std::vector<int> chosen;
  for (const auto* units : leaves) {
    for (const int unit : *units) {
      if (chosen.size() < need)
        chosen.push_back(unit);
    }
  }
  return chosen;
}

// Rail groups kept whole: a job that fits one group takes the fullest group that holds it (best
// fit); a larger one takes wholly free groups for all but its remainder, which then goes to the
// fullest group that holds it. So its rings leave a rail switch as seldom as possible and the
// groups it does not need stay whole for the jobs after it (NVIDIA DGX SuperPOD reference
// architecture: a job's nodes in as few scalable units as possible).
std::vector<int> rail_aligned_units(const std::map<int, std::vector<int>>& by_leaf,
                                    std::size_t need, std::size_t group_units) {
  std::vector<int> chosen;
  std::vector<bool> taken;
  std::vector<const std::vector<int>*> groups;
  for (const auto& [leaf, units] : by_leaf)
    groups.push_back(&units);
  taken.assign(groups.size(), false);
  for (std::size_t g = 0; g < groups.size() && need - chosen.size() >= group_units; ++g) {
    if (groups[g]->size() == group_units) {
      chosen.insert(chosen.end(), groups[g]->begin(), groups[g]->end());
      taken[g] = true;
    }
  }
  const std::size_t rest = need - chosen.size();
  if (rest == 0)
    return chosen;
  std::optional<std::size_t> best;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!taken[g] && groups[g]->size() >= rest &&
        (!best || groups[g]->size() < groups[*best]->size()))
      best = g;
  }
  if (best) {
    chosen.insert(chosen.end(), groups[*best]->begin(),
                  groups[*best]->begin() + static_cast<std::ptrdiff_t>(rest));
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }
  // No group holds the remainder: the groups with the most free units first.
  std::vector<std::size_t> order;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!taken[g])
      order.push_back(g);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return groups[a]->size() > groups[b]->size();
  });
  for (const std::size_t g : order) {
    for (const int unit : *groups[g]) {
      if (chosen.size() < need)
        chosen.push_back(unit);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// A seeded uniform choice of `need` free units (a partial Fisher-Yates shuffle driven by
// mt19937_64, whose output the standard fixes), in ascending order.
std::vector<int> random_units(std::vector<int> free_units, std::size_t need, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t n = free_units.size();
  for (std::size_t i = 0; i < need; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(rng() % (n - i));
    std::swap(free_units[i], free_units[j]);
  }
  free_units.resize(need);
  std::sort(free_units.begin(), free_units.end());
  return free_units;
}

std::vector<int> choose_units(const PlacementRequest& request, const std::vector<int>& free_units,
                              std::size_t need, int unit_nodes, int leaf_nodes) {
  switch (request.policy) {
    case PlacementPolicy::kSpread:
      return spread_units(free_units_by_leaf(free_units, unit_nodes, leaf_nodes), need);
    case PlacementPolicy::kLeafAligned:
      return leaf_aligned_units(free_units_by_leaf(free_units, unit_nodes, leaf_nodes), need);
    case PlacementPolicy::kRailAligned:
      return rail_aligned_units(free_units_by_leaf(free_units, unit_nodes, leaf_nodes), need,
                                static_cast<std::size_t>(std::max(leaf_nodes / unit_nodes, 1)));
    case PlacementPolicy::kRandomFragmented:
      return random_units(free_units, need, request.seed);
    case PlacementPolicy::kPacked:
    case PlacementPolicy::kExplicit:
      break;
  }
  return {free_units.begin(), free_units.begin() + static_cast<std::ptrdiff_t>(need)};
}

}  // namespace

std::vector<int> choose_free_units(const PlacementRequest& request,
                                   const std::vector<int>& free_units, std::size_t need,
                                   int unit_nodes, int leaf_nodes) {
  return choose_units(request, free_units, need, unit_nodes, leaf_nodes);
}

int nodes_per_leaf(const ClusterSpec& fabric) {
  const bool has_leaves =
      fabric.topology == Topology::kOversubscribed || fabric.oversubscription > 1.0;
  return has_leaves ? std::max(fabric.nodes_per_leaf, 1) : 1;
}

PlacementOutcome place_jobs(const ClusterSpec& fabric,
                            const std::vector<PlacementRequest>& requests) {
  const int unit_nodes = domain_nodes(fabric);
  const int leaf_nodes = nodes_per_leaf(fabric);
  std::vector<bool> used(static_cast<std::size_t>(fabric.num_nodes / unit_nodes), false);
  PlacementOutcome out;
  out.nodes.resize(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].policy != PlacementPolicy::kExplicit)
      continue;
    out.nodes[i] = requests[i].nodes;
    for (const int node : requests[i].nodes) {
      const auto unit = static_cast<std::size_t>(node / unit_nodes);
      if (unit < used.size())
        used[unit] = true;
    }
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const PlacementRequest& request = requests[i];
    if (request.policy == PlacementPolicy::kExplicit)
      continue;
    std::vector<int> free_units;
    for (std::size_t u = 0; u < used.size(); ++u) {
      if (!used[u])
        free_units.push_back(static_cast<int>(u));
    }
    const auto need = static_cast<std::size_t>((request.num_nodes + unit_nodes - 1) / unit_nodes);
    if (need > free_units.size()) {
      const std::string free_nodes =
          std::to_string(free_units.size() * static_cast<std::size_t>(unit_nodes));
      out.problems.emplace_back(
          i, unit_nodes == 1
                 ? "needs " + std::to_string(request.num_nodes) + " node(s); " + free_nodes +
                       " of the fabric's " + std::to_string(fabric.num_nodes) +
                       " are left after the jobs placed before it"
                 : "needs " + std::to_string(request.num_nodes) + " node(s) in NVLink domains of " +
                       std::to_string(unit_nodes) + " nodes that no other job uses; " + free_nodes +
                       " of the fabric's " + std::to_string(fabric.num_nodes) +
                       " nodes are in such domains after the jobs placed before it");
      continue;
    }
    for (const int unit : choose_units(request, free_units, need, unit_nodes, leaf_nodes)) {
      used[static_cast<std::size_t>(unit)] = true;
      for (int k = 0; k < unit_nodes && static_cast<int>(out.nodes[i].size()) < request.num_nodes;
           ++k)
        out.nodes[i].push_back(unit * unit_nodes + k);
    }
  }
  return out;
}

const char* to_string(PlacementPolicy policy) {
  switch (policy) {
    case PlacementPolicy::kExplicit:
      return "explicit";
    case PlacementPolicy::kPacked:
      return "packed";
    case PlacementPolicy::kSpread:
      return "spread";
    case PlacementPolicy::kLeafAligned:
      return "leaf-aligned";
    case PlacementPolicy::kRailAligned:
      return "rail-aligned";
    case PlacementPolicy::kRandomFragmented:
      return "random-fragmented";
  }
  return "packed";
}

std::optional<PlacementPolicy> placement_policy_from_string(std::string_view name) {
  for (const PlacementPolicy p :
       {PlacementPolicy::kPacked, PlacementPolicy::kSpread, PlacementPolicy::kLeafAligned,
        PlacementPolicy::kRailAligned, PlacementPolicy::kRandomFragmented}) {
    if (name == to_string(p))
      return p;
  }
  return std::nullopt;
}

}  // namespace capsim
