#pragma once

#include <vector>

#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"

namespace capsim::estimate {

// The data-parallel group and the pipeline hops as the analytic engine costs them on an
// oversubscribed fabric. A class of flows (the DP ring, the PP sends) that leaves its leaf switch
// gets per GPU at most the leaf's uplink capacity (nodes_per_leaf x node NIC bandwidth /
// oversubscription) over the number of GPUs of one leaf that send that class across: the share
// the event engine's reduced run gives each simulated GPU (docs/simulator.md). Other fabrics,
// and classes that stay inside their leaves, keep the groups of `costs`.
struct LeafLimitedGroups {
  GroupShape dp;
  GroupShape pp_inside_leaf;     // a PP hop between stages under one leaf (any hop elsewhere)
  GroupShape pp_between_leaves;  // a PP hop that leaves its leaf
  // Per stage s: whether its sends to stage s + 1 (forward; the last stage feeds the first when
  // interleaved) and to stage s − 1 (backward) leave the leaf. Empty: no hop does.
  std::vector<bool> forward_hop_crosses;
  std::vector<bool> backward_hop_crosses;

  [[nodiscard]] bool forward_crosses(int stage) const { return at(forward_hop_crosses, stage); }
  [[nodiscard]] bool backward_crosses(int stage) const { return at(backward_hop_crosses, stage); }
  [[nodiscard]] const GroupShape& forward_hop(int stage) const {
    return forward_crosses(stage) ? pp_between_leaves : pp_inside_leaf;
  }
  [[nodiscard]] const GroupShape& backward_hop(int stage) const {
    return backward_crosses(stage) ? pp_between_leaves : pp_inside_leaf;
  }

 private:
  static bool at(const std::vector<bool>& hops, int stage) {
    return stage >= 0 && static_cast<size_t>(stage) < hops.size() &&
           hops[static_cast<size_t>(stage)];
  }
};

[[nodiscard]] LeafLimitedGroups leaf_limited_groups(const Scenario& scenario,
                                                    const IterationCosts& costs);

// Returns a leaf switch's uplink capacity per direction on an oversubscribed fabric:
// nodes_per_leaf x node NIC bandwidth / oversubscription; 0 on other fabrics.
[[nodiscard]] double leaf_uplink_bytes_per_s(const ClusterSpec& cluster);

// Returns the most a GPU's context-parallel ring traffic gets per direction when its rings
// leave their leaves on an oversubscribed fabric: the leaf's uplinks over the GPUs of one leaf
// that send across (max_cp_crossing_gpus_per_leaf); 0 when no CP ring leaves a leaf. Both
// engines cost CP with it (CP exchanges are not flows; docs/simulator.md).
[[nodiscard]] double cp_leaf_uplink_share(const Scenario& scenario);

}  // namespace capsim::estimate
