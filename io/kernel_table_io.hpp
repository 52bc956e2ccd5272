#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/kernel_table.hpp"

namespace capsim::io {

// Returns `capsim simulate --kernels --json`'s "kernels" object: max_layers_per_stage and one
// row per kernel (part, name, pass, kind, precision, GEMM shape, GFLOP, bytes, time, achieved
// TFLOP/s and fraction of peak, or achieved GB/s), numbers to 6 significant digits.
[[nodiscard]] nlohmann::json kernel_table_to_json(const KernelTable& table);

// Returns the table `capsim simulate --kernels` prints after the result, with per-part totals.
[[nodiscard]] std::string kernel_table_text(const KernelTable& table);

}  // namespace capsim::io
