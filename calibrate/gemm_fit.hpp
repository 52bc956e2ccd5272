#pragma once

#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "models/gpu_catalog.hpp"
#include "models/hardware_profile.hpp"

namespace capsim::calibrate {

// How one measurement source sits against the fitted model: sources that agree with the
// consensus set the absolute level; a source far below it (a throttled or differently
// configured system) keeps only its shape information, through its own fitted scale.
struct GemmSourceFit {
  std::string source;
  int rows = 0;
  bool consensus = true;
  double scale = 1.0;     // measured / model level of this source (1 for consensus sources)
  double mape_pct = 0.0;  // after its scale
};

// The fitted GEMM model of one GPU and its quality.
struct GemmFit {
  GemmParams params;
  double max_efficiency_bound = 1.0;      // from search-maximum rows; 1 when there are none
  double fp8_max_efficiency_bound = 0.0;  // from fp8 search-maximum rows; 0: none
  const GemmMeasurement* fp8_bound_row = nullptr;  // the row that sets it
  std::vector<GemmSourceFit> sources;
  std::vector<const GemmMeasurement*> rows;  // the rows used, in input order
  std::vector<double> model_flop_per_s;      // per row, times its source's scale
  FitRecord record;                          // over the consensus rows
};

// Returns true when a GEMM row belongs to `gpu`'s family for fitting: same product line
// (A100 SXM: "A100-SXM*", "A100 (variant not stated)", not PCIe; H100: "H100*", not H200 /
// GH200) and a 16-bit dtype (fp16/bf16 share the tensor-core peak).
[[nodiscard]] bool gemm_row_matches(const GemmMeasurement& row, const GpuSpec& gpu);

// Returns true when a GEMM row (any dtype) was measured on `gpu`'s product line, as above.
[[nodiscard]] bool gemm_row_in_family(const GemmMeasurement& row, const GpuSpec& gpu);

// Fits GemmParams (max_efficiency, k_half, launch_overhead_s, misaligned_64, misaligned_8;
// memory_efficiency stays at its default: no memory-bound rows) of models/gemm_cost.hpp to the
// rows of `gpu` by least squares on log throughput, robust to whole-source offsets
// (docs/calibration.md). max_efficiency, the model's ceiling (a perfectly tiled, infinitely
// deep GEMM), is bounded by the best efficiency of the rows marked search_maximum; fp8 rows so
// marked bound fp8_max_efficiency the same way (set only when such a row exists).
// REQUIRES: at least 3 matching rows.
[[nodiscard]] GemmFit fit_gemm(const std::vector<GemmMeasurement>& rows, const GpuSpec& gpu);

}  // namespace capsim::calibrate
