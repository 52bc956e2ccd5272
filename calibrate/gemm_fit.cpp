#include "calibrate/gemm_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "calibrate/median.hpp"
#include "models/gemm_cost.hpp"
#include "models/gpu_catalog.hpp"

namespace capsim::calibrate {
namespace {

constexpr size_t kDims = 5;
using Vec = std::array<double, kDims>;

// A source whose median log-residual sits more than this below or above the median of all
// sources is not part of the consensus level (ln 1.15: the A100 sweeps differ by ~30%).
constexpr double kConsensusBand = 0.14;
constexpr double kGemmPriorWeight = 1e-3;

// Maps unconstrained coordinates to parameters: efficiencies through a logistic (the ceiling
// scaled to its bound), k_half and launch overhead through exp, so the search never leaves the
// physical range.
GemmParams to_params(const Vec& x, double ceiling_bound) {
  auto logistic = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  GemmParams p;
  p.max_efficiency = ceiling_bound * logistic(x[0]);
  p.k_half = 8.0 * std::exp(8.0 * logistic(x[1]));  // 8 .. 24000: K/(K + k_half) stays sane
  p.launch_overhead_s = std::exp(x[2]) * 1e-6;
  p.misaligned_64 = logistic(x[3]);
  p.misaligned_8 = logistic(x[4]);
  return p;
}

Vec from_params(const GemmParams& p, double ceiling_bound) {
  auto logit = [](double v) { return std::log(v / (1.0 - v)); };
  return {logit(std::min(p.max_efficiency / ceiling_bound, 0.99)),
          logit(std::clamp(std::log(p.k_half / 8.0) / 8.0, 0.01, 0.99)),
          std::log(std::max(p.launch_overhead_s * 1e6, 0.1)),
          logit(std::min(p.misaligned_64, 0.99)), logit(std::min(p.misaligned_8, 0.99))};
}

// The simplex of Nelder-Mead: kDims + 1 vertices and the objective at each.
struct Simplex {
  std::array<Vec, kDims + 1> vertices{};
  std::array<double, kDims + 1> values{};
};

// The start plus one step of 0.5 along each coordinate.
Simplex initial_simplex(const std::function<double(const Vec&)>& f, const Vec& start) {
  Simplex s;
  s.vertices[0] = start;
  for (size_t i = 0; i < kDims; ++i) {
    s.vertices[i + 1] = start;
    s.vertices[i + 1][i] += 0.5;
  }
  for (size_t i = 0; i <= kDims; ++i)
    s.values[i] = f(s.vertices[i]);
  return s;
}

// Vertex indices from the best value to the worst (std::sort: ties in an order fixed by the
// values, so the search stays deterministic).
std::array<size_t, kDims + 1> best_to_worst(const Simplex& s) {
  std::array<size_t, kDims + 1> order{};
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return s.values[a] < s.values[b]; });
  return order;
}

// The centroid of every vertex but the worst.
Vec centroid_of_best(const Simplex& s, const std::array<size_t, kDims + 1>& order) {
  Vec centroid{};
  for (size_t i = 0; i < kDims; ++i) {
    for (size_t d = 0; d < kDims; ++d)
      centroid[d] += s.vertices[order[i]][d] / kDims;
  }
  return centroid;
}

// The point centroid + t (worst - centroid): t = -1 reflects, -2 expands, 0.5 contracts.
Vec along(const Vec& centroid, const Vec& worst, double t) {
  Vec v{};
  for (size_t d = 0; d < kDims; ++d)
    v[d] = centroid[d] + t * (worst[d] - centroid[d]);
  return v;
}

// Moves every vertex but the best halfway towards it.
void shrink_towards(Simplex& s, size_t best_index, const std::function<double(const Vec&)>& f) {
  const Vec best = s.vertices[best_index];
  for (size_t i = 0; i <= kDims; ++i) {
    if (i == best_index)
      continue;
    for (size_t d = 0; d < kDims; ++d)
      s.vertices[i][d] = best[d] + 0.5 * (s.vertices[i][d] - best[d]);
    s.values[i] = f(s.vertices[i]);
  }
}

// One Nelder-Mead iteration: replace the worst vertex by its reflection, expansion or
// contraction through the centroid of the others, else shrink towards the best.
void nelder_mead_step(Simplex& s, const std::function<double(const Vec&)>& f) {
  const auto order = best_to_worst(s);
  const size_t worst = order[kDims];
  const Vec centroid = centroid_of_best(s, order);
  const auto replace_worst = [&](const Vec& v, double value) {
    s.vertices[worst] = v;
    s.values[worst] = value;
  };
  const Vec reflected = along(centroid, s.vertices[worst], -1.0);
  const double fr = f(reflected);
  if (fr < s.values[order[0]]) {
    const Vec expanded = along(centroid, s.vertices[worst], -2.0);
    const double fe = f(expanded);
    if (fe < fr)
      replace_worst(expanded, fe);
    else
      replace_worst(reflected, fr);
    return;
  }
  if (fr < s.values[order[kDims - 1]]) {
    replace_worst(reflected, fr);
    return;
  }
  const Vec contracted = along(centroid, s.vertices[worst], 0.5);
  const double fc = f(contracted);
  if (fc < s.values[worst])
    replace_worst(contracted, fc);
  else
    shrink_towards(s, order[0], f);
}

// Nelder-Mead simplex minimiser (Nelder & Mead 1965), fixed iteration budget: deterministic.
Vec minimise(const std::function<double(const Vec&)>& f, Vec start, int iterations) {
  Simplex s = initial_simplex(f, start);
  for (int it = 0; it < iterations; ++it)
    nelder_mead_step(s, f);
  size_t best = 0;
  for (size_t i = 1; i <= kDims; ++i) {
    if (s.values[i] < s.values[best])
      best = i;
  }
  return s.vertices[best];
}

// The sources of the rows in order of first appearance, and each row's index among them.
struct SourceIndex {
  std::vector<std::string> names;
  std::vector<size_t> of_row;
};

SourceIndex index_sources(const std::vector<const GemmMeasurement*>& rows) {
  SourceIndex sources;
  sources.of_row.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    auto it = std::find(sources.names.begin(), sources.names.end(), rows[i]->source);
    sources.of_row[i] = static_cast<size_t>(it - sources.names.begin());
    if (it == sources.names.end())
      sources.names.push_back(rows[i]->source);
  }
  return sources;
}

// A brute-force shape search found nothing faster than its best row, so the ceiling of the
// model (max_efficiency) may not exceed that row's efficiency (docs/design/gemm-efficiency.md §1:
// eta_max from MAMF). The bound is the best over all such rows of this GPU; 1 without any.
double max_efficiency_bound(const std::vector<const GemmMeasurement*>& rows, const GpuSpec& gpu) {
  double bound = 0.0;
  for (const auto* r : rows) {
    if (r->search_maximum)
      bound = std::max(bound, r->flop_per_s / gpu.peak_flop_per_s(Precision::kBf16));
  }
  return bound > 0.0 ? std::min(bound, 1.0) : 1.0;
}

// The least-squares problem on log throughput: residuals log(measured) - log(model), where
// sources with a free scale are re-levelled by their mean residual, plus a weak prior.
struct LogFit {
  const std::vector<const GemmMeasurement*>& rows;
  const GpuSpec& gpu;
  const SourceIndex& sources;
  double ceiling;
  Vec prior;
  std::vector<bool> free_scale;  // per source: levelled on its own, not by the consensus

  [[nodiscard]] double log_model(const GemmParams& p, size_t i) const {
    const GemmMeasurement& r = *rows[i];
    const GemmShape shape{r.m, r.n, r.k, r.batch};
    return std::log(shape.flop() / gemm_time_s(p, gpu, Precision::kBf16, shape));
  }

  // Returns the residuals; `scales` (when not null) receives each source's level.
  std::vector<double> residuals(const GemmParams& p, std::vector<double>* scales) const {
    const size_t num_sources = sources.names.size();
    std::vector<double> res(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      res[i] = std::log(rows[i]->flop_per_s) - log_model(p, i);
    }
    std::vector<double> sum(num_sources, 0.0);
    std::vector<double> count(num_sources, 0.0);
    for (size_t i = 0; i < res.size(); ++i) {
      sum[sources.of_row[i]] += res[i];
      count[sources.of_row[i]] += 1.0;
    }
    std::vector<double> level(num_sources, 0.0);
    for (size_t s = 0; s < num_sources; ++s) {
      if (free_scale[s])
        level[s] = sum[s] / count[s];
    }
    for (size_t i = 0; i < res.size(); ++i)
      res[i] -= level[sources.of_row[i]];
    if (scales != nullptr)
      *scales = level;
    return res;
  }

  // The weak pull towards the documented defaults keeps parameters the rows do not determine
  // (e.g. misaligned_64 when no A100 row is misaligned) at their defaults instead of drifting.
  [[nodiscard]] double objective(const Vec& x) const {
    const auto res = residuals(to_params(x, ceiling), nullptr);
    double sum = 0.0;
    for (double r : res)
      sum += r * r;
    for (size_t d = 0; d < kDims; ++d)
      sum += kGemmPriorWeight * (x[d] - prior[d]) * (x[d] - prior[d]);
    return sum;
  }
};

// Sources whose median residual is far from the median over sources get their own level
// (they still inform k_half, launch overhead and alignment).
std::vector<bool> sources_off_consensus(const std::vector<double>& res,
                                        const SourceIndex& sources) {
  const size_t num_sources = sources.names.size();
  std::vector<std::vector<double>> per_source(num_sources);
  for (size_t i = 0; i < res.size(); ++i)
    per_source[sources.of_row[i]].push_back(res[i]);
  std::vector<double> medians;
  medians.reserve(per_source.size());
  for (const auto& v : per_source)
    medians.push_back(median(v));
  const double centre = median(medians);
  std::vector<bool> free_scale(num_sources, false);
  for (size_t s = 0; s < num_sources; ++s) {
    free_scale[s] = std::abs(medians[s] - centre) > kConsensusBand;
  }
  // With two far-apart sources (or a split middle) every source can sit outside the band;
  // the one closest to the centre (the first on a tie) keeps the absolute level.
  if (std::all_of(free_scale.begin(), free_scale.end(), [](bool b) { return b; })) {
    size_t closest = 0;
    for (size_t s = 1; s < num_sources; ++s) {
      if (std::abs(medians[s] - centre) < std::abs(medians[closest] - centre))
        closest = s;
    }
    free_scale[closest] = false;
  }
  return free_scale;
}

// fp8 runs on the same tiles at twice the peak, but its best searched shape reaches a lower
// fraction of that peak (H100: 1402.6 of 1979 TFLOP/s, 71%, vs 80% in bf16): the same bound
// applies to fp8 GEMMs on their own (the other parameters are shared: one fp8 row cannot fit
// them).
void bound_fp8_ceiling(const std::vector<GemmMeasurement>& all_rows, const GpuSpec& gpu,
                       GemmFit& fit) {
  for (const auto& r : all_rows) {
    if (r.search_maximum && r.dtype.starts_with("fp8") && gemm_row_in_family(r, gpu) &&
        gpu.peak_fp8_flop_per_s > 0.0) {
      const double eff = r.flop_per_s / gpu.peak_flop_per_s(Precision::kFp8);
      if (eff > fit.fp8_max_efficiency_bound) {
        fit.fp8_max_efficiency_bound = eff;
        fit.fp8_bound_row = &r;
      }
    }
  }
  if (fit.fp8_max_efficiency_bound > 0.0) {
    fit.params.fp8_max_efficiency =
        std::min(fit.params.max_efficiency, fit.fp8_max_efficiency_bound);
  }
}

// Each source's level and mean error, for the report and the profile's provenance.
std::vector<GemmSourceFit> source_fits(const LogFit& problem, const std::vector<double>& res,
                                       const std::vector<double>& levels) {
  std::vector<GemmSourceFit> fits;
  for (size_t s = 0; s < problem.sources.names.size(); ++s) {
    GemmSourceFit src;
    src.source = problem.sources.names[s];
    src.consensus = !problem.free_scale[s];
    src.scale = std::exp(levels[s]);
    std::vector<double> errs;
    for (size_t i = 0; i < res.size(); ++i) {
      if (problem.sources.of_row[i] == s)
        errs.push_back(100.0 * std::abs(std::exp(res[i]) - 1.0));
    }
    src.rows = static_cast<int>(errs.size());
    src.mape_pct =
        std::accumulate(errs.begin(), errs.end(), 0.0) / static_cast<double>(errs.size());
    fits.push_back(src);
  }
  return fits;
}

// The model's throughput per row (at its source's level), and the fit record over the rows of
// the consensus sources: the others' absolute level is not the model's to predict.
void record_consensus_quality(const LogFit& problem, const std::vector<double>& res,
                              const std::vector<double>& levels, GemmFit& fit) {
  std::vector<double> consensus_errors;
  fit.record.curve = "gemm " + problem.gpu.architecture + " fp16/bf16 (consensus sources)";
  std::set<std::string> files;  // the files the consensus rows came from
  for (size_t i = 0; i < fit.rows.size(); ++i) {
    const size_t s = problem.sources.of_row[i];
    fit.model_flop_per_s.push_back(std::exp(problem.log_model(fit.params, i) + levels[s]));
    if (!problem.free_scale[s]) {
      files.insert(fit.rows[i]->file);
      const double err = 100.0 * std::abs(std::exp(res[i]) - 1.0);
      consensus_errors.push_back(err);
      fit.record.max_abs_error_pct = std::max(fit.record.max_abs_error_pct, err);
    }
  }
  for (const std::string& file : files)
    fit.record.source += (fit.record.source.empty() ? "" : ", ") + file;
  fit.record.points = static_cast<int>(consensus_errors.size());
  fit.record.mape_pct = consensus_errors.empty() ? 0.0
                                                 : std::accumulate(consensus_errors.begin(),
                                                                   consensus_errors.end(), 0.0) /
                                                       static_cast<double>(consensus_errors.size());
}

}  // namespace

bool gemm_row_in_family(const GemmMeasurement& row, const GpuSpec& gpu) {
  // The harness records CUDA's device name ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3");
  // the CSV names the GPU without the vendor. PCIe and NVL boards run at lower clocks and power.
  std::string name = row.gpu;
  if (name.starts_with("NVIDIA "))
    name = name.substr(7);
  // "PCIe" in the CSV, "PCIE" in CUDA's names ("NVIDIA A100-PCIE-40GB").
  if (name.find("PCI") != std::string::npos || name.find("NVL") != std::string::npos)
    return false;
  // Hardware defined in an input fits to its own measurements only, named as CUDA names it.
  if (!is_builtin_gpu(gpu.name))
    return name == gpu.name;
  if (gpu.architecture == "ampere")
    return name.starts_with("A100");
  if (gpu.architecture == "hopper")
    return name.starts_with("H100");
  return false;
}

bool gemm_row_matches(const GemmMeasurement& row, const GpuSpec& gpu) {
  return (row.dtype == "fp16" || row.dtype == "bf16") && gemm_row_in_family(row, gpu);
}

GemmFit fit_gemm(const std::vector<GemmMeasurement>& all_rows, const GpuSpec& gpu) {
  GemmFit fit;
  for (const auto& r : all_rows) {
    if (gemm_row_matches(r, gpu))
      fit.rows.push_back(&r);
  }
  if (fit.rows.size() < 3) {
    throw std::invalid_argument("fewer than 3 GEMM rows for " + gpu.name);
  }
  const SourceIndex sources = index_sources(fit.rows);
  fit.max_efficiency_bound = max_efficiency_bound(fit.rows, gpu);
  const double ceiling = fit.max_efficiency_bound;
  GemmParams prior_params;
  prior_params.max_efficiency = std::min(prior_params.max_efficiency, 0.95 * ceiling);
  LogFit problem{fit.rows,
                 gpu,
                 sources,
                 ceiling,
                 from_params(prior_params, ceiling),
                 std::vector<bool>(sources.names.size(), false)};
  const auto objective = [&problem](const Vec& x) { return problem.objective(x); };

  Vec x = problem.prior;
  x = minimise(objective, x, 1500);
  // Consensus: refit with the off-consensus sources levelled on their own.
  problem.free_scale =
      sources_off_consensus(problem.residuals(to_params(x, ceiling), nullptr), sources);
  if (std::any_of(problem.free_scale.begin(), problem.free_scale.end(), [](bool b) { return b; })) {
    x = minimise(objective, x, 1500);
  }
  // Restart once from the optimum (Nelder-Mead can stall on a collapsed simplex).
  x = minimise(objective, x, 1500);

  fit.params = to_params(x, ceiling);
  bound_fp8_ceiling(all_rows, gpu, fit);
  std::vector<double> levels;
  const auto res = problem.residuals(fit.params, &levels);
  fit.sources = source_fits(problem, res, levels);
  record_consensus_quality(problem, res, levels, fit);
  return fit;
}

}  // namespace capsim::calibrate
