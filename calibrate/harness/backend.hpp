#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "models/gemm_cost.hpp"

namespace capsim::calibrate::harness {

// What capsim-calibrate asks of the GPUs: Backend and the timings it returns.
// cuda_backend.cpp implements it with CUDA, NCCL and cuBLASLt; tests use a fake. No CUDA types
// appear here.

struct CollectiveTiming {
  double time_s = 0.0;  // mean time of one op over the timed iterations, averaged over ranks
  long long wrong = 0;  // wrong elements found by the sampled check (nccl-tests "#wrong")
};

struct GemmTiming {
  std::vector<double> times_s;  // one per timed repeat (CUDA events around one GEMM)
  long long wrong = 0;          // sampled output elements that failed the check
  long long checked = 0;
};

struct OverlapTiming {
  std::vector<double> times_s;  // one per timed GEMM repeat while the collective loop ran
  // True when the collective loop was still running when the last timed GEMM ended (the
  // loop outlasted the timing window, so every repeat had the collective beside it).
  bool collective_outlasted = false;
  long long wrong = 0;  // sampled GEMM output elements that failed the check
  long long checked = 0;
};

// The device layer. Implementations are not thread-safe.
class Backend {
 public:
  Backend() = default;
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  Backend(Backend&&) = delete;
  Backend& operator=(Backend&&) = delete;
  // Returns the machine header (GPU, NCCL version, environment, topology).
  [[nodiscard]] virtual MachineInfo machine() = 0;
  [[nodiscard]] virtual int ranks() = 0;
  [[nodiscard]] virtual int nodes() = 0;
  // Runs `warmup` untimed then `iters` timed back-to-back ops of nccl-tests size `bytes`.
  [[nodiscard]] virtual CollectiveTiming time_collective(CollectiveKind kind, double bytes,
                                                         bool in_place, int warmup, int iters) = 0;
  // Times one GEMM `repeats` times after `warmup` runs, rotating operand buffers.
  [[nodiscard]] virtual GemmTiming time_gemm(const std::string& dtype, const GemmShape& shape,
                                             int warmup, int repeats) = 0;
  // Returns the SM count of the GPU time_gemm runs on.
  [[nodiscard]] virtual int sm_count() = 0;
  // Starts `collective_ops` back-to-back out-of-place collectives of nccl-tests size
  // `collective_bytes` on every GPU; once the first has finished, times the GEMM on the
  // first GPU on another stream (`warmup` untimed, `repeats` timed, as time_gemm).
  [[nodiscard]] virtual OverlapTiming time_gemm_beside_collective(
      const std::string& dtype, const GemmShape& shape, CollectiveKind kind,
      double collective_bytes, int collective_ops, int warmup, int repeats) = 0;
};

}  // namespace capsim::calibrate::harness
