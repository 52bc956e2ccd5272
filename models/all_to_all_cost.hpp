#pragma once

#include "models/cluster_spec.hpp"
#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/parallelism.hpp"

namespace capsim {

// Efficiency of a 400 Gb/s InfiniBand NIC under NCCL point-to-point traffic: CX-7 NDR NICs reach
// 46-48 GB/s of their 50 GB/s (NVIDIA/nccl-tests#290, #267, NCCL maintainers' comments).
inline constexpr double kNicPointToPointEfficiency = 47.0 / 50.0;
// DeepEP's normal (training) kernels on H800 reach 153 GB/s (dispatch) and 158 GB/s (combine) of
// the ~160 GB/s NVLink bandwidth inside a node (deepseek-ai/DeepEP README, V1 performance table,
// now docs/legacy.md): 155.5 / 160 of the NVLink bandwidth.
inline constexpr double kDeepEpNvlinkEfficiency = 155.5 / 160.0;
// SMs DeepEP's normal kernels hold while they run (Buffer.set_num_sms(24) in DeepEP's training
// example).
inline constexpr int kDeepEpSms = 24;

// One expert-parallel token exchange: `bytes` is what one rank sends in total (its routed token
// copies, nccl-tests' all-to-all "size"), spread evenly over the group's `group.ranks` ranks, of
// which `group.ranks_per_node` share a node.
//   NCCL all-to-all: the share for the rank's own node crosses NVLink at the profile's intra-node
//   ring bus bandwidth (an all-to-all's busbw is (n-1)/n x algbw, nccl-tests PERFORMANCE.md, and
//   NCCL reaches the same NVLink busbw for every non-all-reduce collective, about 370 GB/s on
//   H100: nccl-tests#212); the share for other nodes leaves through the rank's own NIC
//   (all-to-all cannot aggregate a node's NICs, nccl-tests#267), at kNicPointToPointEfficiency
//   of its share of the node's NIC bandwidth. Both run at once; the slower one and the
//   collective's latency set the time.
//   DeepEP (TokenDispatcher::kDeepEp): the same split, NVLink at kDeepEpNvlinkEfficiency of the
//   GPU's NVLink bandwidth, and a token bound for several experts on one remote node crosses the
//   network once (DeepEP forwards it over NVLink there), so the network share is `bytes` x
//   `remote_node_share` (expected distinct remote nodes per token over its copies).
// Returns 0 for a group of one rank.
[[nodiscard]] double all_to_all_time_s(const HardwareProfile& profile, const ClusterSpec& cluster,
                                       TokenDispatcher dispatcher, double bytes,
                                       const GroupShape& group, double remote_node_share = 1.0);

// The expected share of a token's `top_k` copies, routed uniformly at random to experts spread
// evenly over `nodes` nodes, that DeepEP sends over the network: the distinct remote nodes among
// its top_k experts, nodes - 1 - (nodes - 1)(1 - 1/nodes)^top_k, over the top_k x (nodes - 1) /
// nodes copies an all-to-all sends off the node.
[[nodiscard]] double deepep_remote_node_share(int nodes, int top_k);

}  // namespace capsim
