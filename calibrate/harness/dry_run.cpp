#include "calibrate/harness/dry_run.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "io/profile_io.hpp"
#include "io/text_format.hpp"

namespace capsim::calibrate::harness {
namespace {

// 1024-based, as nccl-tests' size arguments: "8 B", "128 KiB", "4 GiB".
std::string bytes_text(double bytes) {
  static constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < kUnits.size()) {
    bytes /= 1024.0;
    ++unit;
  }
  return io::printf_string("%g %s", bytes, kUnits[unit]);
}

std::string shape_list(const std::vector<GemmShape>& shapes) {
  std::string out;
  for (const GemmShape& s : shapes)
    out += "    " + shape_text(s) + "\n";
  return out;
}

}  // namespace

std::string describe_plan(const NcclSweep& sweep, int ranks) {
  std::string out = "dry run: nccl on " + std::to_string(ranks) + " ranks, " +
                    std::to_string(sweep.warmup) + " warm-up + " + std::to_string(sweep.iters) +
                    " timed ops per size" + (sweep.in_place ? ", out-of-place and in-place" : "") +
                    "\n";
  long long launches = 0;
  for (CollectiveKind kind : sweep.collectives) {
    const std::vector<double> sizes = plan_sizes(sweep, kind, ranks);
    const long long ops = static_cast<long long>(sizes.size()) * (sweep.warmup + sweep.iters) *
                          (sweep.in_place ? 2 : 1);
    launches += ops;
    out += "  " + std::string(io::collective_name(kind)) + ": " + std::to_string(sizes.size()) +
           " sizes" +
           (sizes.empty() ? std::string()
                          : ", " + bytes_text(sizes.front()) + " .. " + bytes_text(sizes.back())) +
           ", " + std::to_string(ops) + " launches\n";
  }
  return out + "  " + std::to_string(launches) + " collective launches in all; no GPU touched\n";
}

std::string describe_plan(const GemmSweep& sweep) {
  std::string out = "dry run: gemm, " + std::to_string(sweep.warmup) + " warm-up + " +
                    std::to_string(sweep.repeats) + " timed runs per shape (median)\n";
  long long runs = 0;
  for (const std::string& dtype : sweep.dtypes) {
    std::vector<GemmShape> run;
    std::vector<GemmShape> skipped;
    for (const GemmShape& s : sweep.shapes)
      (dtype == "fp8_e4m3" && !fp8_shape_supported(s) ? skipped : run).push_back(s);
    runs += static_cast<long long>(run.size()) * (sweep.warmup + sweep.repeats);
    out += "  " + dtype + ": " + std::to_string(run.size()) + " shapes\n" + shape_list(run);
    if (!skipped.empty()) {
      out += "  " + dtype + ": " + std::to_string(skipped.size()) + " skipped (" +
             kFp8AlignmentRule + ")\n" + shape_list(skipped);
    }
  }
  if (std::find(sweep.dtypes.begin(), sweep.dtypes.end(), "fp8_e4m3") != sweep.dtypes.end())
    out += "  fp8 needs compute capability 8.9 or newer; a real run checks the GPU\n";
  return out + "  " + std::to_string(runs) + " GEMM runs in all; no GPU touched\n";
}

std::string describe_plan(const OverlapRun& run) {
  std::string out = "dry run: overlap, " + run.dtype + " GEMMs beside " +
                    bytes_text(run.collective_bytes) + " collectives, " +
                    std::to_string(run.warmup) + " warm-up + " + std::to_string(run.repeats) +
                    " timed GEMMs per measurement\n  collectives:";
  for (CollectiveKind kind : run.collectives)
    out += std::string(" ") + io::collective_name(kind);
  out += "\n  shapes:\n" + shape_list(run.shapes);
  const size_t pairs = run.shapes.size() * (run.collectives.size() + 1);
  return out + "  " + std::to_string(pairs) +
         " measurements (each shape alone, then beside each collective); no GPU touched\n";
}

}  // namespace capsim::calibrate::harness
