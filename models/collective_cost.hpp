#pragma once

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"

namespace capsim {

// Returns the uncontended time (s) of one collective over `group`, NCCL-style: every fitted
// algorithm is costed and the fastest wins (nccl src/graph/tuning.cc, ncclTopoGetAlgoTime).
// `bytes` follows nccl-tests' "size": the full buffer (all-reduce input, all-gather output,
// reduce-scatter input; per-peer message for send/recv). A group across multi-node NVLink
// domains (group.multi_node_nvlink) takes the slower of its NIC cost and its cost inside one
// domain.
[[nodiscard]] double collective_time_s(const HardwareProfile& profile, CollectiveKind kind,
                                       double bytes, const GroupShape& group);

// A message size whose collective time is the pure latency term (collective_time_s returns 0
// for 0 bytes); its bandwidth term is below 1e-15 s for any fitted bandwidth.
inline constexpr double kLatencyProbeBytes = 1e-6;

// Returns nccl-tests' bus-bandwidth factor: 2(n-1)/n all-reduce, (n-1)/n all-gather,
// reduce-scatter and all-to-all, 1 otherwise (nccl-tests doc/PERFORMANCE.md).
[[nodiscard]] double bus_bandwidth_factor(CollectiveKind kind, int ranks);

// Returns the fit that costs `kind` in the given scope, falling back to the all-reduce fit of
// the same scope (same links, different step counts) and finally to nullptr.
[[nodiscard]] const CollectiveFit* find_collective_fit(const HardwareProfile& profile,
                                                       CollectiveKind kind, bool inter_node);

// Returns the time of one algorithm regime, without choosing among algorithms.
[[nodiscard]] double algorithm_time_s(const AlgorithmParams& params, CollectiveKind kind,
                                      double bytes, const GroupShape& group,
                                      double bandwidth_scale);

// Returns the factor applied to inter-node bus bandwidth for a group that gets
// `group.nic_bandwidth_per_node_bytes_per_s` instead of the profile's reference.
[[nodiscard]] double nic_share_scale(const HardwareProfile& profile, const GroupShape& group);

}  // namespace capsim
