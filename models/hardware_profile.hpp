#pragma once

#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"

namespace capsim {

// GEMM efficiency model (fitted by calibrate/ from cuBLAS measurements):
//   t = launch_overhead_s + max(flop / (peak x eta), bytes / (hbm_bw x memory_efficiency))
//   eta = max_efficiency x tile_wave_efficiency(M, N, SMs) x K / (K + k_half) x alignment
// after NVIDIA's "Matrix Multiplication Background" (tile and wave quantization) and
// docs/design/gemm-efficiency.md. alignment = 1 when every dim is a multiple of 64 elements,
// misaligned_64 when some dim is a multiple of 8 only, misaligned_8 otherwise.
struct GemmParams {
  double max_efficiency = 0.80;
  // Ceiling of fp8 GEMMs as a fraction of the fp8 peak when measurements bound it below
  // max_efficiency (the best fp8 shape of a brute-force search); 0: max_efficiency.
  double fp8_max_efficiency = 0.0;
  double k_half = 64.0;
  double launch_overhead_s = 6e-6;
  double memory_efficiency = 0.80;
  double misaligned_64 = 0.90;
  double misaligned_8 = 0.70;
};

// FlashAttention kernel efficiency as a fraction of the dense 16-bit peak, per head dimension
// (forward and backward differ), reached at long sequences; shorter sequences reach
// eff x s / (s + half_efficiency_seq_length) (causal FA2 ramps up with the work per head).
// Defaults: FlashAttention-2 on A100 (Dao 2023, figures 4-6: ~73% forward / ~63% backward at
// head dim 128, lower at 64); published_attention_params() gives each architecture's values.
struct AttentionParams {
  double forward_efficiency_hd128 = 0.68;
  double forward_efficiency_hd64 = 0.60;
  double backward_efficiency_hd128 = 0.56;
  double backward_efficiency_hd64 = 0.48;
  double half_efficiency_seq_length = 512.0;
};

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv
};
enum class CollectiveAlgorithm { kRing, kTree, kNvls };

// One NCCL algorithm regime, NCCL's own structure (src/graph/tuning.cc, summarised in
// docs/design/nccl-cost-model.md §1-3):
//   time = base_latency + steps_intra x intra_step_latency + steps_inter x inter_step_latency
//          + bytes x traffic_factor(n) / bus_bandwidth
// Ring steps: 2(n-1) all-reduce, n-1 all-gather/reduce-scatter; tree: 2 log2(nodes) inter hops.
struct AlgorithmParams {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  double base_latency_s = 0.0;
  double intra_step_latency_s = 0.0;
  double inter_step_latency_s = 0.0;
  // Bus bandwidth (nccl-tests busbw), bytes/s. For inter-node regimes it is the value measured
  // with the reference NIC bandwidth per node; costs scale it by what a group actually gets.
  double bus_bandwidth_bytes_per_s = 0.0;
};

// The fitted regimes of one collective in one scope (inside a node, or across nodes).
struct CollectiveFit {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  bool inter_node = false;
  std::vector<AlgorithmParams> algorithms;  // NCCL picks the fastest; so do we
  double mape_pct = 0.0;                    // fit quality over its log(s)
};

// Quality of one fitted curve against the measurements it came from (`capsim calibrate fit`).
// Errors are 100 x |model - measured| / measured over the curve's sizes, in percent.
struct FitRecord {
  std::string curve;   // e.g. "all_reduce inter_node 16 ranks / 2 nodes" or "gemm bf16"
  std::string source;  // measurement file name the curve came from
  int points = 0;
  int points_large = 0;         // sizes >= 1 MiB (collectives); 0 for GEMM curves
  double mape_pct = 0.0;        // over all points
  double mape_large_pct = 0.0;  // over points_large (0 when there are none)
  double max_abs_error_pct = 0.0;
};

// Everything capsim knows about one hardware family, read from a `capsim.profile/v1` file or
// derived from datasheets when no profile matches. Immutable after loading.
struct HardwareProfile {
  std::string name;
  GpuSpec gpu{};
  std::string fabric;  // "infiniband", "roce", "efa", "nvswitch"
  // Aggregate NIC bandwidth per node (bytes/s) of the nodes the inter-node fits were measured
  // on. Inter-node bus bandwidth is proportional to the NIC bandwidth a group gets per node
  // (docs/design/hardware-facts.md §2: ring busbw ~ aggregate NIC bandwidth per node).
  double reference_node_nic_bandwidth_bytes_per_s = 0.0;
  GemmParams gemm;
  AttentionParams attention;
  std::vector<CollectiveFit> collectives;
  // Fixed CPU/framework cost per micro-batch per stage (kernel launches, Python), seconds.
  double per_microbatch_overhead_s = 0.0;
  // SMs a running NCCL collective takes from compute: one CTA per channel, and NCCL CTAs do
  // not share an SM with compute kernels (NVIDIA/nccl#1656, #689). HGX A100 NVSwitch runs 24
  // channels (NCCL INFO "Channel 23/24", NVIDIA/nccl-tests#100); an H100 all-gather launches
  // 24 blocks (NVIDIA developer forum, "Compute-Communication Overlap Causes Severe GEMM
  // Performance Degradation", 2025). 0 models free overlap.
  int collective_sms = 24;
  // Fraction of the isolated-kernel speed (the GEMM, attention and HBM figures above) that a
  // training stack reaches in situ: every kernel time is divided by it. 1 = benchmark speed;
  // fitted by `capsim calibrate step` from measured iterations of the user's own stack.
  double software_efficiency = 1.0;
  static constexpr double kMinSoftwareEfficiency = 0.1;
  static constexpr double kMaxSoftwareEfficiency = 2.0;
  // The tensor cores' sustained rate in situ over the datasheet's fp8 and 16-bit peaks, which
  // the GEMM and attention figures are fractions of: it multiplies the compute-bound part of a
  // GEMM or an attention kernel only (memory-bound time, launch overhead and fp4 GEMMs keep their
  // speed). 1 on every profile whose kernels were measured; a datasheet profile takes its GPU's
  // fitted value where one was fitted (io/in_situ_prior.cpp: GB300, whose published runs outpace
  // its datasheet's parity with GB200), by `capsim calibrate step --tensor-speed`.
  double tensor_speed = 1.0;
  static constexpr double kMinTensorSpeed = 0.5;
  static constexpr double kMaxTensorSpeed = 2.0;
  std::vector<std::string> provenance;  // logs, dates, hardware the fit came from
  bool is_datasheet_default = false;    // true when built from specs, not measurements
  // True when a family's measured profile took its inter-node fits from the datasheet model
  // (with_datasheet_network); not written to profile files, whose provenance says it.
  bool has_datasheet_network = false;
  std::vector<FitRecord> fit_quality;  // one record per fitted curve (empty for datasheets)
};

}  // namespace capsim
