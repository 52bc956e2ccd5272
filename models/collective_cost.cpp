#include "models/collective_cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace capsim {
namespace {

// Ring step counts per NCCL (docs/design/nccl-cost-model.md §2): 2(n-1) for all-reduce, n-1 for
// all-gather / reduce-scatter / all-to-all, 1 for broadcast and send/recv (pipelined).
double ring_steps(CollectiveKind kind, int n) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1);
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return n - 1.0;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double n = std::max(ranks, 1);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (n - 1.0) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

const CollectiveFit* find_collective_fit(const HardwareProfile& profile, CollectiveKind kind,
                                         bool inter_node) {
  const CollectiveFit* fallback = nullptr;
  for (const auto& fit : profile.collectives) {
    if (fit.inter_node != inter_node)
      continue;
    if (fit.kind == kind)
      return &fit;
    if (fit.kind == CollectiveKind::kAllReduce)
      fallback = &fit;
  }
  return fallback;
}

double nic_share_scale(const HardwareProfile& profile, const GroupShape& group) {
  if (profile.reference_node_nic_bandwidth_bytes_per_s <= 0.0 ||
      group.nic_bandwidth_per_node_bytes_per_s <= 0.0) {
    return 1.0;
  }
  return group.nic_bandwidth_per_node_bytes_per_s /
         profile.reference_node_nic_bandwidth_bytes_per_s;
}

double algorithm_time_s(const AlgorithmParams& params, CollectiveKind kind, double bytes,
                        const GroupShape& group, double bandwidth_scale) {
  const int n = group.ranks;
  const int nodes = std::max(group.nodes, 1);
  const int ppn = std::max(group.ranks_per_node, 1);
  double latency = params.base_latency_s;
  switch (params.algorithm) {
    case CollectiveAlgorithm::kRing: {
      const double steps = ring_steps(kind, n);
      const double inter_steps = nodes > 1 ? ring_steps(kind, nodes) : 0.0;
      latency += (steps - inter_steps) * params.intra_step_latency_s +
                 inter_steps * params.inter_step_latency_s;
      break;
    }
    case CollectiveAlgorithm::kTree:
      // nccl tuning.cc: base + 2 x ((ppn - 1) x intraLat + log2(nNodes) x interLat).
      latency += 2.0 * ((ppn - 1) * params.intra_step_latency_s +
                        std::log2(static_cast<double>(nodes)) * params.inter_step_latency_s);
      break;
    case CollectiveAlgorithm::kNvls:
      latency += params.intra_step_latency_s + (nodes > 1 ? params.inter_step_latency_s : 0.0);
      break;
  }
  const double bus_bw = params.bus_bandwidth_bytes_per_s * bandwidth_scale;
  if (bus_bw <= 0.0)
    return std::numeric_limits<double>::infinity();
  return latency + bytes * bus_bandwidth_factor(kind, n) / bus_bw;
}

namespace {

// These helpers run inside the planner's inner loop (about 1M calls/s): they take and return
// plain values, allocate nothing, and sit in this file so the compiler inlines them.

// Trees only serve all-reduce in NCCL. A tree's 2-node advantage (busbw above the NICs' line
// rate: each rank's data crosses the network once, not 2(n-1)/n times) is gone beyond 2 nodes,
// where inner tree nodes forward for two children: NCCL switches from bwIntra to bwInter there
// (tuning.cc, "nNodes <= 2"; docs/design/nccl-cost-model.md §3). So a tree fitted on 2 nodes is
// capped at the NIC bandwidth. Returns false when the tree does not serve `kind`.
bool adapt_tree(AlgorithmParams& costed, CollectiveKind kind, const GroupShape& group, double nic) {
  if (kind != CollectiveKind::kAllReduce)
    return false;
  if (group.nodes > 2 && nic > 0.0)
    costed.bus_bandwidth_bytes_per_s = std::min(costed.bus_bandwidth_bytes_per_s, nic);
  return true;
}

// NVLS serves all-reduce, all-gather and reduce-scatter only. NCCL's NVLS bandwidth is x2 for
// all-reduce and x (ppn-1)/ppn otherwise, and for all-gather/reduce-scatter it is not converted
// by n/(n-1) as a ring's is (docs/design/nccl-cost-model.md §3 steps 2 and 4): an all-reduce fit
// lent to them gives their nccl-tests bus bandwidth as below. Returns false when NVLS does not
// serve `kind`.
bool adapt_nvls(AlgorithmParams& costed, CollectiveKind kind, CollectiveKind fit_kind,
                const GroupShape& group) {
  if (kind == CollectiveKind::kAllReduce)
    return true;
  if (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter)
    return false;
  if (fit_kind == CollectiveKind::kAllReduce) {
    const double ppn = std::max(group.ranks_per_node, 1);
    const double n = std::max(group.ranks, 1);
    costed.bus_bandwidth_bytes_per_s *= 0.5 * (ppn - 1.0) / ppn * (n - 1.0) / n;
  }
  return true;
}

// Adjusts a fitted regime to the collective and group it costs; returns false when NCCL would
// not run that algorithm for `kind`.
bool adapt_to_collective(AlgorithmParams& costed, CollectiveKind kind, CollectiveKind fit_kind,
                         const GroupShape& group, double nic) {
  switch (costed.algorithm) {
    case CollectiveAlgorithm::kTree:
      return adapt_tree(costed, kind, group, nic);
    case CollectiveAlgorithm::kNvls:
      return adapt_nvls(costed, kind, fit_kind, group);
    case CollectiveAlgorithm::kRing:
      break;
  }
  return true;
}

// Returns the fastest of the fit's regimes that serve `kind`, or inf when none does.
double fastest_regime_time_s(const CollectiveFit& fit, CollectiveKind kind, double bytes,
                             const GroupShape& group, double scale, double nic) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& algo : fit.algorithms) {
    AlgorithmParams costed = algo;
    if (!adapt_to_collective(costed, kind, fit.kind, group, nic))
      continue;
    best = std::min(best, algorithm_time_s(costed, kind, bytes, group, scale));
  }
  return best;
}

// An all-reduce fit with no ring regime (a tree-only 2-node fit) lent to another collective:
// cost its regimes as rings, held to the NIC line rate across nodes.
double regimes_as_rings_time_s(const CollectiveFit& fit, CollectiveKind kind, double bytes,
                               const GroupShape& group, double scale, double nic) {
  const bool inter = group.nodes > 1;
  double best = std::numeric_limits<double>::infinity();
  for (AlgorithmParams costed : fit.algorithms) {
    costed.algorithm = CollectiveAlgorithm::kRing;
    if (inter && nic > 0.0)
      costed.bus_bandwidth_bytes_per_s = std::min(costed.bus_bandwidth_bytes_per_s, nic);
    best = std::min(best, algorithm_time_s(costed, kind, bytes, group, scale));
  }
  return best;
}

}  // namespace

double collective_time_s(const HardwareProfile& profile, CollectiveKind kind, double bytes,
                         const GroupShape& group) {
  if (group.ranks <= 1 && kind != CollectiveKind::kSendRecv)
    return 0.0;
  if (bytes <= 0.0)
    return 0.0;
  const bool inter = group.nodes > 1;
  const CollectiveFit* fit = find_collective_fit(profile, kind, inter);
  if (fit == nullptr)
    fit = find_collective_fit(profile, CollectiveKind::kAllReduce, inter);
  if (fit == nullptr)
    return std::numeric_limits<double>::infinity();
  const double scale = inter ? nic_share_scale(profile, group) : 1.0;
  // A ring through the NICs cannot beat the NVLink ring inside the node it also crosses.
  const double nic = profile.reference_node_nic_bandwidth_bytes_per_s;
  double best = fastest_regime_time_s(*fit, kind, bytes, group, scale, nic);
  if (!std::isfinite(best))
    best = regimes_as_rings_time_s(*fit, kind, bytes, group, scale, nic);
  if (inter && group.multi_node_nvlink) {
    // The slowest hop: the NICs between domains, or the NVLink every rank also crosses.
    GroupShape one_domain = group;
    one_domain.nodes = 1;
    one_domain.ranks_per_node = group.ranks;
    best = std::max(best, collective_time_s(profile, kind, bytes, one_domain));
  }
  return best;
}

}  // namespace capsim
