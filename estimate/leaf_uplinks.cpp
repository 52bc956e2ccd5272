#include "estimate/leaf_uplinks.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "models/leaf_crossings.hpp"

namespace capsim::estimate {
namespace {

struct LeafSummary {
  int dp_crossing_gpus = 0;  // per leaf, at most
  int pp_crossing_gpus = 0;
  std::vector<bool> forward_hop_crosses;
  std::vector<bool> backward_hop_crosses;
};

LeafSummary summarise(const RankLayout& l, int nodes_per_leaf, bool dp_through_nics) {
  const LeafCrossings leaves(l, nodes_per_leaf, dp_through_nics);
  LeafSummary out;
  out.dp_crossing_gpus = leaves.max_dp_crossing_gpus_per_leaf();
  out.pp_crossing_gpus = leaves.max_pp_crossing_gpus_per_leaf();
  const bool wraps = l.chunks > 1;  // interleaved: the last stage feeds the first
  for (int s = 0; s < l.pp; ++s) {
    const bool has_next = s + 1 < l.pp || wraps;
    const bool has_previous = s > 0 || wraps;
    out.forward_hop_crosses.push_back(has_next && leaves.pp_crosses(s, (s + 1) % l.pp));
    out.backward_hop_crosses.push_back(has_previous && leaves.pp_crosses(s, (s + l.pp - 1) % l.pp));
  }
  return out;
}

// Counting crossings walks every GPU; the planner's screen asks for the same few hundred
// layouts thousands of times, so each thread keeps the summaries it has made.
const LeafSummary& summary_of(const RankLayout& l, int nodes_per_leaf, bool dp_through_nics) {
  using Key = std::tuple<int, int, int, int, int, int, int, bool>;
  thread_local std::map<Key, LeafSummary> seen;
  constexpr size_t kMaxRemembered = 4096;
  const Key key{l.tp,           l.dpc,          l.pp, l.chunks, l.gpus_per_node, l.nvlink_domain,
                nodes_per_leaf, dp_through_nics};
  auto it = seen.find(key);
  if (it == seen.end()) {
    if (seen.size() >= kMaxRemembered)
      seen.clear();
    it = seen.emplace(key, summarise(l, nodes_per_leaf, dp_through_nics)).first;
  }
  return it->second;
}

// Caps a group's per-node NIC bandwidth at `per_gpu_cap` for each of its ranks on a node.
void cap_group(GroupShape& group, double per_gpu_cap) {
  group.nic_bandwidth_per_node_bytes_per_s =
      std::min(group.nic_bandwidth_per_node_bytes_per_s, per_gpu_cap * group.ranks_per_node);
}

}  // namespace

LeafLimitedGroups leaf_limited_groups(const Scenario& scenario, const IterationCosts& costs) {
  LeafLimitedGroups out;
  out.dp = costs.dp_group;
  out.pp_inside_leaf = costs.pp_link;
  out.pp_between_leaves = costs.pp_link;
  // A hop that leaves its leaf leaves its node too, even when the pipeline stride is smaller
  // than a node and pp_link (priced for the common case) stays on NVLink.
  out.pp_between_leaves.nodes = 2;
  const ClusterSpec& c = scenario.cluster;
  const Parallelism& p = scenario.parallelism;
  const double node_nic = c.node_nic_bandwidth_bytes_per_s();
  const bool oversubscribed = c.topology == Topology::kOversubscribed || c.oversubscription > 1.0;
  if (c.num_nodes <= 1 || node_nic <= 0.0)
    return out;
  const RankLayout layout{p.tensor,        p.data * p.context,
                          p.pipeline,      p.virtual_pipeline_stages,
                          c.gpus_per_node, c.nvlink_domain};
  const bool dp_through_nics = costs.dp_group.ranks > 1 && costs.dp_group.nodes > 1;
  if (!oversubscribed) {
    // No leaf uplinks, but a hop between stages in different NVLink domains (nodes) still goes
    // through the NICs while pp_link prices the common hop on NVLink: count the domains as
    // one-domain leaves.
    RankLayout domains = layout;
    domains.gpus_per_node = c.nvlink_domain_gpus();
    domains.nvlink_domain = 0;
    const LeafSummary& nodes = summary_of(domains, 1, dp_through_nics);
    out.forward_hop_crosses = nodes.forward_hop_crosses;
    out.backward_hop_crosses = nodes.backward_hop_crosses;
    return out;
  }
  const LeafSummary& leaves = summary_of(layout, c.nodes_per_leaf, dp_through_nics);
  const double leaf_uplink = leaf_uplink_bytes_per_s(c);
  if (leaves.dp_crossing_gpus > 0)
    cap_group(out.dp, leaf_uplink / leaves.dp_crossing_gpus);
  if (leaves.pp_crossing_gpus > 0)
    cap_group(out.pp_between_leaves, leaf_uplink / leaves.pp_crossing_gpus);
  out.forward_hop_crosses = leaves.forward_hop_crosses;
  out.backward_hop_crosses = leaves.backward_hop_crosses;
  return out;
}

double leaf_uplink_bytes_per_s(const ClusterSpec& c) {
  const bool oversubscribed = c.topology == Topology::kOversubscribed || c.oversubscription > 1.0;
  if (!oversubscribed || c.num_nodes <= 1)
    return 0.0;
  return c.nodes_per_leaf * c.node_nic_bandwidth_bytes_per_s() / std::max(c.oversubscription, 1.0);
}

double cp_leaf_uplink_share(const Scenario& scenario) {
  const ClusterSpec& c = scenario.cluster;
  const Parallelism& p = scenario.parallelism;
  const double uplink = leaf_uplink_bytes_per_s(c);
  if (p.context <= 1 || uplink <= 0.0)
    return 0.0;
  // The planner's screen asks for the same layouts many times: remembered per thread.
  using Key = std::tuple<int, int, int, int, int, int, int>;
  thread_local std::map<Key, int> seen;
  constexpr size_t kMaxRemembered = 4096;
  const Key key{p.tensor,        p.data,          p.context,       p.pipeline,
                c.gpus_per_node, c.nvlink_domain, c.nodes_per_leaf};
  auto it = seen.find(key);
  if (it == seen.end()) {
    if (seen.size() >= kMaxRemembered)
      seen.clear();
    const RankLayout layout{p.tensor,        p.data * p.context,
                            p.pipeline,      p.virtual_pipeline_stages,
                            c.gpus_per_node, c.nvlink_domain};
    it =
        seen.emplace(key, max_cp_crossing_gpus_per_leaf(layout, p.context, c.nodes_per_leaf)).first;
  }
  return it->second > 0 ? uplink / it->second : 0.0;
}

}  // namespace capsim::estimate
