#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "calibrate/harness/backend.hpp"
#include "calibrate/measurements.hpp"
#include "models/byte_units.hpp"
#include "models/gemm_cost.hpp"
#include "models/scenario.hpp"

namespace capsim::calibrate::harness {

// Host side of capsim-calibrate: sweep planning, statistics, output and argument validation.
// Everything that touches a GPU sits behind Backend (cuda_backend.cpp implements it with CUDA,
// NCCL and cuBLASLt; tests use a fake). No CUDA types appear here.

struct NcclSweep {
  std::vector<CollectiveKind> collectives{CollectiveKind::kAllReduce};
  double min_bytes = 8;
  double max_bytes = 8.0 * kGiB;
  double factor = 2;
  int warmup = 5;  // nccl-tests defaults (-w 5 -n 20)
  int iters = 20;
  bool in_place = true;
};

struct GemmSweep {
  std::vector<GemmShape> shapes;
  std::vector<std::string> dtypes{"bf16"};
  int warmup = 10;
  int repeats = 30;
};

// `capsim-calibrate overlap`: GEMMs alone and beside a running collective, on one node.
struct OverlapRun {
  // A square transformer GEMM (8192 tokens x hidden 8192) and the FFN up-projection of a
  // hidden-8192 SwiGLU model (ffn 28672), as cuBLASLt TN GEMMs of time_gemm.
  std::vector<GemmShape> shapes{{8192, 8192, 8192, 1}, {8192, 28672, 8192, 1}};
  std::vector<CollectiveKind> collectives{CollectiveKind::kAllReduce, CollectiveKind::kAllGather};
  double collective_bytes = 256.0 * kMiB;
  std::string dtype = "bf16";
  int warmup = 10;
  int repeats = 30;
};

// Parses an nccl-tests size argument: bytes with an optional K/M/G suffix, 1024-based like
// nccl-tests' parsesize() ("8", "128K", "1M", "8G"). Throws InputError naming `option`.
[[nodiscard]] double parse_size_arg(const std::string& option, const std::string& text);

// Parses a comma-separated collective list ("all_reduce,all_gather" or "all").
[[nodiscard]] std::vector<CollectiveKind> parse_collectives_arg(const std::string& text);

// Returns a shape as --shapes writes it: "MxNxK", with "xBATCH" when batched.
[[nodiscard]] std::string shape_text(const GemmShape& shape);

// Parses a comma-separated GEMM shape list "MxNxK[xBATCH],..." ("8192x8192x8192,8192x28672x8192").
// Throws InputError naming `option`.
[[nodiscard]] std::vector<GemmShape> parse_shapes_arg(const std::string& option,
                                                      const std::string& text);

// Checks a sweep (sizes, factor, iteration counts); throws InputError naming the option.
void validate(const NcclSweep& sweep);
void validate(const GemmSweep& sweep, bool gpu_has_fp8);
void validate(const OverlapRun& run);

// Returns how many back-to-back collectives of `collective_s` each outlast the GEMM window of
// an overlap run: (warmup + repeats) GEMMs of `gemm_s`, up to 3x slower beside the collective,
// plus a 100 us host-launch margin per GEMM; at least 4, at most kMaxCollectiveOps.
inline constexpr int kMaxCollectiveOps = 20000;
[[nodiscard]] int plan_collective_ops(double gemm_s, double collective_s, int warmup, int repeats);

// Returns how many rotating operand sets (A, B and D of `set_bytes` in all) a GEMM timing cycles
// through so that no repeat finds its operands in L2: enough to cover 2x `l2_cache_bytes`, at
// least 2, at most 1024 (small GEMMs need hundreds: a 256^3 bf16 set is 384 KiB against
// 40-50 MiB of L2). REQUIRES: set_bytes > 0.
[[nodiscard]] size_t plan_gemm_operand_sets(size_t l2_cache_bytes, size_t set_bytes);

// Returns the sizes of a sweep as nccl-tests runs them: from min to max multiplying by
// factor, each rounded down to a whole number of elements per rank (4-byte floats; all-gather,
// reduce-scatter and all-to-all move ranks x count elements), zero sizes dropped, no repeats.
[[nodiscard]] std::vector<double> plan_sizes(const NcclSweep& sweep, CollectiveKind kind,
                                             int ranks);

// Returns nccl-tests' algbw (bytes/s): size / time (src/common.cu, with GB = 1e9).
[[nodiscard]] double algorithm_bandwidth(double bytes, double time_s);

// Returns the fitting grid: square and transformer-like shapes, aligned and misaligned.
[[nodiscard]] std::vector<GemmShape> gemm_grid();

// Returns the distinct GEMM shapes one micro-batch of `scenario` runs (the shapes the
// simulator will cost), from the workload lowering.
[[nodiscard]] std::vector<GemmShape> scenario_gemm_shapes(const Scenario& scenario);

// Runs every collective of the sweep; throws std::runtime_error when a check finds wrong
// elements (like nccl-tests' "Out of bounds values : N FAILED").
[[nodiscard]] Measurements run_nccl(Backend& backend, const NcclSweep& sweep);

// cuBLASLt's fp8 GEMMs need 16-byte aligned dimensions and leading dimensions (cuBLAS
// documentation, cublasLtMatmul: "matrix dimension must support 16-byte alignment"): with
// 1-byte elements every one of M, N and K must be a multiple of 16.
inline constexpr const char* kFp8AlignmentRule =
    "cuBLASLt fp8 needs M, N and K multiples of 16 (16-byte alignment)";
[[nodiscard]] bool fp8_shape_supported(const GemmShape& shape);

// Runs every (dtype, shape) but fp8 shapes that fp8_shape_supported rejects; the recorded
// time is the median of the repeats.
[[nodiscard]] Measurements run_gemm(Backend& backend, const GemmSweep& sweep);

// Measures collective_sms: per shape the GEMM alone (median of repeats), then per collective
// the same GEMM beside a loop of that collective sized by plan_collective_ops (re-run with 4x
// the loop, up to 3 times, when the loop ended first); sms_taken per pair by
// overlap_sms_taken, the recorded value their median. Throws InputError when the backend
// drives fewer than 2 GPUs, std::runtime_error on wrong GEMM or collective elements or a loop
// that never outlasts the GEMMs.
[[nodiscard]] Measurements run_overlap(Backend& backend, const OverlapRun& run);

}  // namespace capsim::calibrate::harness
