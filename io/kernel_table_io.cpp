#include "io/kernel_table_io.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "io/rounding.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

const char* kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kGemm:
      return "gemm";
    case KernelKind::kAttention:
      return "attention";
    case KernelKind::kMemoryBound:
      return "memory";
  }
  return "gemm";
}

// FLOP-bound kernels are read against the tensor-core peak, memory-bound ones against HBM.
bool has_flops(const KernelRow& row) {
  return row.op.kind != KernelKind::kMemoryBound;
}

std::string shape_text(const Op& op) {
  if (op.kind != KernelKind::kGemm)
    return op.kernels > 1.0 ? printf_string("(%.0f kernels)", op.kernels) : "-";
  const GemmShape& s = op.gemm;
  if (s.batch > 1.0)
    return printf_string("%.0f x %.0f x %.0f x %.0f", s.m, s.n, s.k, s.batch);
  return printf_string("%.0f x %.0f x %.0f", s.m, s.n, s.k);
}

}  // namespace

nlohmann::json kernel_table_to_json(const KernelTable& table) {
  using nlohmann::json;
  const auto g = [](double v) { return round_significant(v); };
  json rows = json::array();
  for (const KernelRow& row : table.rows) {
    json r{{"part", to_string(row.part)},           {"name", row.op.name},
           {"pass", to_string(row.op.pass)},        {"kind", kind_name(row.op.kind)},
           {"precision", to_string(row.precision)}, {"time_s", g(row.time_s)}};
    if (row.op.kind == KernelKind::kGemm) {
      r["m"] = g(row.op.gemm.m);
      r["n"] = g(row.op.gemm.n);
      r["k"] = g(row.op.gemm.k);
      r["batch"] = g(row.op.gemm.batch);
    }
    if (has_flops(row)) {
      r["gflop"] = g(row.op.flop / 1e9);
      r["tflops"] = g(row.op.flop / row.time_s / 1e12);
      r["fraction_of_peak"] = g(row.op.flop / row.time_s / row.peak_flop_per_s);
    } else {
      r["bytes"] = g(row.op.bytes);
      r["gb_per_s"] = g(row.op.bytes / row.time_s / 1e9);
      if (row.op.kernels > 1.0)
        r["launches"] = g(row.op.kernels);
    }
    rows.push_back(r);
  }
  return json{{"max_layers_per_stage", table.max_layers_per_stage}, {"rows", rows}};
}

std::string kernel_table_text(const KernelTable& table) {
  std::string out = "  kernels of one micro-batch on one GPU, alone on it (layer kernels run " +
                    std::to_string(table.max_layers_per_stage) +
                    " times per micro-batch on the busiest stage):\n";
  out += printf_string("  %-9s %-20s %-15s %-28s %10s %10s %15s %7s\n", "part", "kernel", "pass",
                       "M x N x K (x batch)", "GFLOP | MB", "time us", "achieved", "% peak");
  std::array<std::array<double, 3>, 7> totals{};  // [part][pass]
  std::vector<ModelPart> parts;                   // in the order they are listed
  for (const KernelRow& row : table.rows) {
    // FLOP-bound rows against the tensor-core peak, memory-bound rows against HBM bandwidth.
    const bool flops = has_flops(row);
    const double work = flops ? row.op.flop / 1e9 : row.op.bytes / 1e6;
    const double rate = (flops ? row.op.flop : row.op.bytes) / row.time_s;
    const double peak = flops ? row.peak_flop_per_s : table.hbm_bytes_per_s;
    const std::string achieved =
        flops ? printf_string("%.1f TFLOP/s", rate / 1e12) : printf_string("%.0f GB/s", rate / 1e9);
    out += printf_string("  %-9s %-20s %-15s %-28s %10.1f %10.1f %15s %7.1f\n", to_string(row.part),
                         row.op.name, to_string(row.op.pass), shape_text(row.op).c_str(), work,
                         row.time_s * 1e6, achieved.c_str(), 100.0 * rate / peak);
    totals[static_cast<size_t>(row.part)][static_cast<size_t>(row.op.pass)] += row.time_s;
    if (std::find(parts.begin(), parts.end(), row.part) == parts.end())
      parts.push_back(row.part);
  }
  for (ModelPart part : parts) {
    const auto& t = totals[static_cast<size_t>(part)];
    out += printf_string(
        "  %-9s total: forward %.3f ms, backward input %.3f ms, weight gradients %.3f ms\n",
        to_string(part), t[0] * 1e3, t[1] * 1e3, t[2] * 1e3);
  }
  out +=
      "  (GFLOP and % of the tensor-core peak for GEMMs and attention; MB and % of HBM bandwidth\n"
      "  for memory-bound kernels; times include the launch term, once per kernel of a row)\n";
  return out;
}

}  // namespace capsim::io
