#pragma once

#include "models/cluster_spec.hpp"
#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/model_spec.hpp"
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

// How DeepEP thins out a rank's routed token copies (deepseek-ai/DeepEP, get_dispatch_layout's
// is_token_in_rank): a token crosses the network once per remote node and NVLink once per rank
// that holds any of its experts, whatever the number of its experts there.
struct DeepEpShares {
  double remote_node = 1.0;  // distinct nodes a token reaches over its copies
  double rank = 1.0;         // distinct ranks a token reaches over its copies
};

// One expert-parallel token exchange: `bytes` is what one rank sends in total (its routed token
// copies, nccl-tests' all-to-all "size"), spread evenly over the group's `group.ranks` ranks, of
// which `group.ranks_per_node` share a node.
//   NCCL all-to-all: the share for the rank's own node crosses NVLink at the profile's intra-node
//   ring bus bandwidth (an all-to-all's busbw is (n-1)/n x algbw, nccl-tests PERFORMANCE.md, and
//   NCCL reaches the same NVLink busbw for every non-all-reduce collective, about 370 GB/s on
//   H100: nccl-tests#212); the share for other nodes leaves through the rank's own NIC
//   (all-to-all cannot aggregate a node's NICs, nccl-tests#267), at kNicPointToPointEfficiency
//   of its share of the node's NIC bandwidth. NCCL sends to its peers in rounds (its p2p
//   schedule), so the two shares follow each other: their times and the latency add.
//   DeepEP (TokenDispatcher::kDeepEp): the same split, NVLink at kDeepEpNvlinkEfficiency of the
//   GPU's NVLink bandwidth for `shares.rank` of the node's share, and `shares.remote_node` of
//   the other nodes' share over the network; both run at once and the slower sets the time.
// Returns 0 for a group of one rank.
[[nodiscard]] double all_to_all_time_s(const HardwareProfile& profile, const ClusterSpec& cluster,
                                       TokenDispatcher dispatcher, double bytes,
                                       const GroupShape& group, const DeepEpShares& shares = {});

// The probability that a token's experts include one of the experts held by one of `units`
// equal blocks of a layer's experts (Megatron-Core places experts contiguously over EP ranks,
// so a block is a rank or a node). Routing as forced-balanced benchmarks run it: without groups,
// top_k distinct experts uniformly at random; with groups, router_group_top_k groups uniformly
// at random and top_k / router_group_top_k experts in each (the router picks a group by its best
// experts' scores), uniformly within it; groups that neither hold whole blocks nor lie inside
// one are treated as no groups.
[[nodiscard]] double expert_block_hit_probability(const MoeSpec& moe, int units);

// DeepEP's shares for the expert-parallel group `ep` of a layer routed as `moe` routes: distinct
// blocks reached over copies, units x expert_block_hit_probability / top_k, for the group's nodes
// and for its ranks.
[[nodiscard]] DeepEpShares deepep_shares(const MoeSpec& moe, const GroupShape& ep);

}  // namespace capsim
