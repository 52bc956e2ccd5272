#include "models/gemm_cost.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "models/low_precision.hpp"

namespace capsim {
namespace {

// A tile of m x n and its transpose n x m, or a square tile twice. Both have the same area and
// intrinsic efficiency, so of the two only the one with fewer tiles (hence no more waves) can
// be the best: each pair costs one wave count and one quotient instead of two.
struct TilePair {
  double area;       // m x n
  double intrinsic;  // relative throughput of a full tile of this size (smaller tiles reuse less)
  size_t edge_m;     // m and n as an index into {64, 128, 256}
  size_t edge_n;
};

// CUTLASS/cuBLAS tile menu (docs/design/gemm-efficiency.md §2): 256x128 and 128x256, 128x128,
// 256x64 and 64x256, 128x64 and 64x128, 64x64. Relative efficiencies of the smaller tiles
// reflect their lower operand reuse: per output element a tile of m x n loads (m + n) / (m n)
// operands, so 128x64 needs 1.5x the bandwidth of 128x128 per FLOP.
constexpr std::array<TilePair, 5> kTiles{{
    {256 * 128, 1.00, 2, 1},
    {128 * 128, 0.97, 1, 1},
    {256 * 64, 0.93, 2, 0},
    {128 * 64, 0.90, 1, 0},
    {64 * 64, 0.80, 0, 0},
}};

// The units are powers of two, so the quotient is exact and whole exactly for multiples (and
// floor is much cheaper than fmod in the planner's screen).
bool multiple_of(double value, double unit) {
  const double quotient = value / unit;
  return quotient == std::floor(quotient);
}

// Tensor cores want every dimension a multiple of 128 bytes for full speed on A100, and of at
// least 16 bytes to be used at all (docs/design/gemm-efficiency.md §4): 64 and 8 elements in 16
// bits, 128 and 16 in fp8.
double alignment_factor(const GemmParams& params, Precision precision, const GemmShape& s) {
  const double bytes = element_bytes(precision);
  const std::array<double, 3> dims{s.m, s.n, s.k};
  double factor = 1.0;
  for (double dim : dims) {
    if (!multiple_of(dim * bytes, 16.0)) {
      factor = std::min(factor, params.misaligned_8);
    } else if (!multiple_of(dim * bytes, 128.0)) {
      factor = std::min(factor, params.misaligned_64);
    }
  }
  return factor;
}

// Returns the utilisation of the best tile for `batch` outputs of m x n on `sms` SMs, times its
// intrinsic efficiency.
double best_tile(double m, double n, double batch, double sms) {
  // Tile counts along M and N for the three tile edges (64, 128, 256), computed once.
  const std::array<double, 3> m_tiles{std::ceil(m / 64.0), std::ceil(m / 128.0),
                                      std::ceil(m / 256.0)};
  const std::array<double, 3> n_tiles{std::ceil(n / 64.0), std::ceil(n / 128.0),
                                      std::ceil(n / 256.0)};
  double best = 0.0;  // max over tiles of intrinsic / (waves x tile area)
  for (const auto& pair : kTiles) {
    // Every step from tile count to quotient is monotonic (batch and SMs are positive), so the
    // pair's smaller count gives the larger of its two quotients, to the bit (areas are powers
    // of two: waves x area is exact).
    const double tiles = std::min(m_tiles[pair.edge_m] * n_tiles[pair.edge_n],
                                  m_tiles[pair.edge_n] * n_tiles[pair.edge_m]) *
                         batch;
    const double waves = std::ceil(tiles / sms);
    best = std::max(best, pair.intrinsic / (waves * pair.area));
  }
  return best * ((m * n * batch) / sms);
}

// best_tile, kept per thread for the last shapes seen: the planner's screen costs the same few
// hundred GEMM shapes for every recompute and ZeRO choice of a layout. A direct-mapped table of
// 512 shapes (20 KB); an entry is found only for the same bits of all four inputs.
double kept_best_tile(double m, double n, double batch, double sms) {
  struct Entry {
    std::array<uint64_t, 4> key{};  // the bits of m, n, batch, sms; all zero: empty (m > 0)
    double best = 0.0;
  };
  constexpr size_t kEntries = 512;
  thread_local std::array<Entry, kEntries> kept;
  const std::array<uint64_t, 4> key{std::bit_cast<uint64_t>(m), std::bit_cast<uint64_t>(n),
                                    std::bit_cast<uint64_t>(batch), std::bit_cast<uint64_t>(sms)};
  // Whole values have zero low mantissa bits, so the slot comes from the top bits of a
  // multiplicative hash.
  const uint64_t hash = key[0] * 0x9E3779B97F4A7C15u ^ key[1] * 0xC2B2AE3D27D4EB4Fu ^
                        key[2] * 0x165667B19E3779F9u ^ key[3] * 0x27D4EB2F165667C5u;
  Entry& entry = kept[(hash >> 55) % kEntries];
  if (entry.key != key) {
    entry.key = key;
    entry.best = best_tile(m, n, batch, sms);
  }
  return entry.best;
}

}  // namespace

double element_bytes(Precision precision) {
  switch (precision) {
    case Precision::kFp8:
    case Precision::kFp8Cs:
    case Precision::kFp8Blockwise:
    case Precision::kMxfp8:
      return 1.0;
    case Precision::kNvfp4:
      return 0.5;
    case Precision::kFp32:
      return 4.0;
    case Precision::kFp16:
    case Precision::kBf16:
      return 2.0;
  }
  return 2.0;
}

double gemm_efficiency(const GemmParams& params, const GpuSpec& gpu, Precision precision,
                       const GemmShape& s) {
  if (s.m <= 0.0 || s.n <= 0.0 || s.k <= 0.0)
    return 0.0;
  const double best = kept_best_tile(s.m, s.n, s.batch, gpu.num_sms);
  const double k_efficiency = s.k / (s.k + params.k_half);
  const bool fp8_ceiling = is_low_precision(precision) && params.fp8_max_efficiency > 0.0;
  const double ceiling = fp8_ceiling ? params.fp8_max_efficiency : params.max_efficiency;
  return ceiling * best * k_efficiency * alignment_factor(params, precision, s) *
         scaling_rate_factor(precision, gpu);
}

double gemm_time_s(const GemmParams& params, const GpuSpec& gpu, Precision precision,
                   const GemmShape& s, double tensor_speed) {
  const double eta = gemm_efficiency(params, gpu, precision, s);
  if (eta <= 0.0)
    return params.launch_overhead_s;
  const double compute_s = s.flop() / (gpu.peak_flop_per_s(precision) * eta * tensor_speed);
  const double bytes = (s.m * s.k + s.k * s.n + s.m * s.n) * s.batch * element_bytes(precision);
  const double memory_s = bytes / (gpu.hbm_bandwidth_bytes_per_s * params.memory_efficiency);
  return params.launch_overhead_s + std::max(compute_s, memory_s);
}

double memory_bound_time_s(const GemmParams& params, const GpuSpec& gpu, double bytes) {
  return params.launch_overhead_s +
         bytes / (gpu.hbm_bandwidth_bytes_per_s * params.memory_efficiency);
}

}  // namespace capsim
