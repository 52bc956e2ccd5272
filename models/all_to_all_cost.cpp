#include "models/all_to_all_cost.hpp"

#include <algorithm>
#include <cmath>

#include "models/as_double.hpp"
#include "models/collective_cost.hpp"

namespace capsim {

namespace {

// The probability that `draws` distinct picks among `n` items miss all `marked` of them,
// prod_{i < draws} (n - marked - i) / (n - i); a fractional last draw counts its share of the
// next factor (geometric interpolation).
double miss_probability(double n, double marked, double draws) {
  double miss = 1.0;
  double i = 0.0;
  for (; i + 1.0 <= draws && miss > 0.0; i += 1.0)
    miss *= std::max(n - marked - i, 0.0) / (n - i);
  if (const double rest = draws - i; rest > 0.0 && n - i > 0.0)
    miss *= std::pow(std::max(n - marked - i, 0.0) / (n - i), rest);
  return miss;
}

}  // namespace

double expert_block_hit_probability(const MoeSpec& moe, int units) {
  if (units <= 1)
    return 1.0;
  const double experts = moe.num_experts;
  const double block = experts / units;
  const int groups = moe.router_groups;
  const double picked = moe.router_group_top_k;
  if (groups > 1 && groups % units == 0) {
    // A block holds groups / units whole groups: reached when one of them is picked.
    return 1.0 - miss_probability(groups, static_cast<double>(groups / units), picked);
  }
  if (groups > 1 && units % groups == 0) {
    // A block lies inside one group: that group picked, then one of its experts.
    const double per_group = experts / groups;
    return picked / groups * (1.0 - miss_probability(per_group, block, moe.top_k / picked));
  }
  return 1.0 - miss_probability(experts, block, moe.top_k);
}

DeepEpShares deepep_shares(const MoeSpec& moe, const GroupShape& ep) {
  const auto share = [&moe](int units) {
    return std::min(1.0, units * expert_block_hit_probability(moe, units) / moe.top_k);
  };
  DeepEpShares shares;
  shares.remote_node = ep.nodes > 1 ? share(ep.nodes) : 1.0;
  shares.rank = share(ep.ranks);
  return shares;
}

double all_to_all_time_s(const HardwareProfile& profile, const ClusterSpec& cluster,
                         TokenDispatcher dispatcher, double bytes, const GroupShape& group,
                         const DeepEpShares& shares) {
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
      nvlink_s = node_bytes * shares.rank * (local - 1.0) / local /
                 (kDeepEpNvlinkEfficiency * cluster.intra_node_bandwidth_bytes_per_s);
    } else {
      nvlink_s = collective_time_s(profile, CollectiveKind::kAllToAll, node_bytes, node);
    }
  }
  double network_s = 0.0;
  if (group.nodes > 1) {
    const double nic_per_gpu =
        cluster.node_nic_bandwidth_bytes_per_s() / d(std::max(cluster.gpus_per_node, 1));
    const double remote_share = dispatcher == TokenDispatcher::kDeepEp ? shares.remote_node : 1.0;
    const double remote_bytes = bytes * (n - local) / n * remote_share;
    const double latency_s =
        collective_time_s(profile, CollectiveKind::kAllToAll, kLatencyProbeBytes, group);
    network_s = latency_s + remote_bytes / (kNicPointToPointEfficiency * nic_per_gpu);
  }
  // NCCL runs an all-to-all as rounds of point-to-point exchanges, peer by peer, so the node's
  // share and the other nodes' share follow each other; DeepEP moves both at once.
  if (dispatcher == TokenDispatcher::kDeepEp)
    return std::max(nvlink_s, network_s);
  return nvlink_s + network_s;
}

}  // namespace capsim
