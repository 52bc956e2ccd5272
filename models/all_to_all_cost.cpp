#include "models/all_to_all_cost.hpp"

#include <algorithm>
#include <cmath>

#include "models/as_double.hpp"
#include "models/collective_cost.hpp"

namespace capsim {

double deepep_remote_node_share(int nodes, int top_k) {
  if (nodes <= 1 || top_k <= 0)
    return 1.0;
  const double n = nodes;
  const double k = top_k;
  const double distinct_remote = (n - 1.0) * (1.0 - std::pow(1.0 - 1.0 / n, k));
  const double remote_copies = k * (n - 1.0) / n;
  return std::min(1.0, distinct_remote / remote_copies);
}

double all_to_all_time_s(const HardwareProfile& profile, const ClusterSpec& cluster,
                         TokenDispatcher dispatcher, double bytes, const GroupShape& group,
                         double remote_node_share) {
  if (group.ranks <= 1 || bytes <= 0.0)
    return 0.0;
  const double n = group.ranks;
  const double local = std::min(group.ranks_per_node, group.ranks);
  // The rank's own node: (local - 1) / n of its bytes cross NVLink.
  GroupShape node = group;
  node.ranks = static_cast<int>(local);
  node.ranks_per_node = static_cast<int>(local);
  node.nodes = 1;
  const double node_bytes = bytes * local / n;  // the a2a among the node's ranks moves this
  double nvlink_s = 0.0;
  if (local > 1.0) {
    if (dispatcher == TokenDispatcher::kDeepEp) {
      nvlink_s = node_bytes * (local - 1.0) / local /
                 (kDeepEpNvlinkEfficiency * cluster.gpu.nvlink_bandwidth_bytes_per_s);
    } else {
      nvlink_s = collective_time_s(profile, CollectiveKind::kAllToAll, node_bytes, node);
    }
  }
  double network_s = 0.0;
  if (group.nodes > 1) {
    const double nic_per_gpu =
        cluster.node_nic_bandwidth_bytes_per_s() / d(std::max(cluster.gpus_per_node, 1));
    const double remote_bytes = bytes * (n - local) / n * remote_node_share;
    const double latency_s =
        collective_time_s(profile, CollectiveKind::kAllToAll, kLatencyProbeBytes, group);
    network_s = latency_s + remote_bytes / (kNicPointToPointEfficiency * nic_per_gpu);
  }
  return std::max(nvlink_s, network_s);
}

}  // namespace capsim
