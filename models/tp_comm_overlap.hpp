#pragma once

#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/workload.hpp"

namespace capsim {

// Time a layer's tensor-parallel collectives add to its compute, per pass (seconds).
struct LayerComm {
  double forward_s = 0.0;
  double backward_s = 0.0;
};

// Transformer Engine's userbuffers defaults (transformer_engine/pytorch/module/base.py,
// initialize_ub): the pipelined and bulk overlaps run their communication on 16 SMs and the GEMM
// beside it on the rest (set_sm_margin), the pipelined one in 4 splits; the ring exchange copies
// with the copy engines (use_ce, 1 SM) in tensor-parallel-size splits.
inline constexpr int kUserbufferSms = 16;
inline constexpr int kUserbufferPipelineSplits = 4;

// Returns what a transformer layer's sequence-parallel collectives add to its compute under
// Transformer Engine's comm-GEMM overlap (Megatron-Core --tp-comm-overlap, NeMo
// ub_tp_comm_overlap), each collective beside the GEMM TE pairs it with:
//   forward: the QKV and MLP-up input all-gathers by ring exchange (each split of the GEMM runs
//     while the next arrives), the projection's and MLP-down's output reduce-scatters pipelined
//     (each split's scatter beside the next split's GEMM; the last one's exposed);
//   backward: the projection's and MLP-down's output-gradient all-gathers by ring exchange beside
//     their data-gradient GEMMs; the QKV and MLP-up norm-output re-gathers beside their
//     data-gradient GEMMs and their input-gradient reduce-scatters beside their weight-gradient
//     GEMMs (bulk).
// `gather_bytes` is what an all-gather moves (fp8 under Transformer Engine's fp8), and
// `scatter_bytes` what a reduce-scatter moves. The GEMMs are `layer_ops`' (lower_layer).
[[nodiscard]] LayerComm tp_overlapped_layer_comm(const std::vector<Op>& layer_ops,
                                                 const HardwareProfile& profile, const GpuSpec& gpu,
                                                 Precision precision, double seq_length,
                                                 const GroupShape& tp, double gather_bytes,
                                                 double scatter_bytes);

}  // namespace capsim
