#include "calibrate/collective_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include <Eigen/Dense>

#include "models/byte_units.hpp"
#include "models/collective_cost.hpp"
#include "models/time_units.hpp"

#include "io/profile_io.hpp"

namespace capsim::calibrate {
namespace {

// Fewest points one regime of a multi-regime fit may rest on.
constexpr size_t kMinSegment = 3;
// Weight of the prior "latency scale = 1" (NCCL's own constants) against the relative errors:
// small, so it only decides latencies the data leave open (bandwidth-bound segments).
constexpr double kPriorWeight = 0.03;
// Reweighting rounds of the least-absolute-error fit and the error below which a point's
// weight stops growing (0.5%: finer than any log's run-to-run noise).
constexpr int kIrlsIterations = 12;
constexpr double kIrlsFloor = 0.005;
// NCCL's best sm90 ring: 18 NVLinks x 20.6 GB/s (nccl src/graph/topo.h,
// docs/design/nccl-cost-model.md §3). A single-node regime faster than this is NVLink SHARP.
constexpr double kHopperRingMaxBusBw = 18 * 20.6e9;
// NCCL's ring LL128 bus bandwidth as a share of the Simple one (tuning.cc: 120 of 128 bytes
// are payload; docs/design/nccl-cost-model.md §3 step 3).
constexpr double kLl128PayloadShare = 0.92;

enum class Template { kRingLl, kRingLl128, kRingSimple, kTreeLl, kTreeSimple, kNvls };

// NCCL latency constants, current values (docs/design/nccl-cost-model.md §2a/2b): base, NVLink
// step, NET step; the net plugin's latency is added once per NET step (twice for Simple).
AlgorithmParams template_params(Template t, double plugin_s) {
  switch (t) {
    case Template::kRingLl:
      return {CollectiveAlgorithm::kRing, 6.6 * kUs, 0.6 * kUs, 2.7 * kUs + plugin_s, 1.0};
    case Template::kRingLl128:
      return {CollectiveAlgorithm::kRing, 14.0 * kUs, 1.9 * kUs, 4.0 * kUs + plugin_s, 1.0};
    case Template::kRingSimple:
      return {CollectiveAlgorithm::kRing, 8.4 * kUs, 3.4 * kUs, 14.0 * kUs + 2 * plugin_s, 1.0};
    case Template::kTreeLl:
      return {CollectiveAlgorithm::kTree, 6.8 * kUs, 0.6 * kUs, 5.0 * kUs + plugin_s, 1.0};
    case Template::kTreeSimple:
      return {CollectiveAlgorithm::kTree, 8.4 * kUs, 4.0 * kUs, 14.0 * kUs + 2 * plugin_s, 1.0};
    case Template::kNvls:
      return {CollectiveAlgorithm::kNvls, 0.0, 25.0 * kUs, 18.0 * kUs + plugin_s, 1.0};
  }
  return {};
}

bool is_ring(Template t) {
  return t == Template::kRingLl || t == Template::kRingLl128 || t == Template::kRingSimple;
}

// Regime templates in size order for K regimes (small messages: LL, then LL128, then Simple;
// across nodes NCCL starts with tree/LL, docs/design/nccl-cost-model.md §7).
std::vector<Template> templates_for(int k, bool inter, bool tree_allowed, Template last) {
  const Template first = (inter && tree_allowed) ? Template::kTreeLl : Template::kRingLl;
  switch (k) {
    case 1:
      return {last};
    case 2:
      return {first, last};
    case 3:
      return {first, Template::kRingLl128, last};
    default:
      return {first, Template::kRingLl128, Template::kRingLl128, last};
  }
}

struct Point {
  double bytes;
  double x;  // bytes x busbw factor
  double t;  // measured seconds
  GroupShape group;
};

struct Regime {
  double lambda = 1.0;
  double inv_bw = 0.0;
};

// Weighted least squares of one segment: minimise sum(w (lambda a + v b - 1)^2) +
// prior^2 (lambda - 1)^2 with a = L/t, b = x/t, subject to v >= v_min and lambda >= 0.
Regime weighted_segment_fit(const std::vector<double>& a, const std::vector<double>& b,
                            const std::vector<double>& w, size_t begin, size_t end, double v_min) {
  const auto n = static_cast<Eigen::Index>(end - begin);
  Eigen::MatrixXd design(n + 1, 2);
  Eigen::VectorXd rhs(n + 1);
  for (Eigen::Index i = 0; i < n; ++i) {
    const size_t j = begin + static_cast<size_t>(i);
    const double sw = std::sqrt(w[j]);
    design(i, 0) = sw * a[j];
    design(i, 1) = sw * b[j];
    rhs(i) = sw;
  }
  design(n, 0) = kPriorWeight;
  design(n, 1) = 0.0;
  rhs(n) = kPriorWeight;
  Regime r;
  const Eigen::Vector2d sol = design.colPivHouseholderQr().solve(rhs);
  r.lambda = sol(0);
  r.inv_bw = sol(1);
  auto lambda_given_v = [&](double v) {
    double num = kPriorWeight * kPriorWeight;
    double den = kPriorWeight * kPriorWeight;
    for (size_t i = begin; i < end; ++i) {
      num += w[i] * a[i] * (1.0 - v * b[i]);
      den += w[i] * a[i] * a[i];
    }
    return std::max(0.0, num / den);
  };
  if (!(r.inv_bw >= v_min)) {
    r.inv_bw = v_min;
    r.lambda = lambda_given_v(v_min);
  }
  if (r.lambda < 0.0) {
    r.lambda = 0.0;
    double num = 0.0;
    double den = 0.0;
    for (size_t i = begin; i < end; ++i) {
      num += w[i] * b[i];
      den += w[i] * b[i] * b[i];
    }
    r.inv_bw = std::max(v_min, num / den);
    // At the bound the best latency factor is the constrained one again (it may be positive).
    if (num / den < v_min)
      r.lambda = lambda_given_v(v_min);
  }
  return r;
}

// Least absolute relative error of one segment by iteratively reweighted least squares
// (weights 1/|error|), so the fit minimises the MAPE the fit targets are stated in and one
// outlying row of a noisy log does not pull the whole regime (Schlossmacher 1973, "An iterative
// technique for absolute deviations curve fitting", JASA 68:857).
Regime fit_segment(const std::vector<double>& a, const std::vector<double>& b, size_t begin,
                   size_t end, double v_min, std::vector<double>& w) {
  std::fill(w.begin() + static_cast<std::ptrdiff_t>(begin),
            w.begin() + static_cast<std::ptrdiff_t>(end), 1.0);
  Regime r = weighted_segment_fit(a, b, w, begin, end, v_min);
  for (int iter = 0; iter < kIrlsIterations; ++iter) {
    for (size_t i = begin; i < end; ++i)
      w[i] = 1.0 / std::max(std::abs(r.lambda * a[i] + r.inv_bw * b[i] - 1.0), kIrlsFloor);
    r = weighted_segment_fit(a, b, w, begin, end, v_min);
  }
  return r;
}

struct Candidate {
  std::vector<Template> templates;
  std::vector<Regime> regimes;
  double objective = std::numeric_limits<double>::infinity();
};

class Fitter {
 public:
  Fitter(std::vector<Point> points, CollectiveKind kind, double plugin_s)
      : points_(std::move(points)), kind_(kind), plugin_s_(plugin_s) {}

  [[nodiscard]] double latency(Template t, size_t i) const {
    return algorithm_time_s(template_params(t, plugin_s_), kind_, 0.0, points_[i].group, 1.0);
  }

  // Tries every split of the size-sorted points into templates.size() contiguous segments.
  // A ring regime's bus bandwidth stays at or below `ring_max_bus_bw` (0: unbounded).
  Candidate fit(const std::vector<Template>& templates, double ring_max_bus_bw = 0.0) const {
    const size_t n = points_.size();
    const size_t k = std::min(templates.size(), std::max<size_t>(1, n / kMinSegment));
    Candidate best;
    best.templates.assign(templates.end() - static_cast<std::ptrdiff_t>(k), templates.end());
    std::vector<std::vector<double>> a(k, std::vector<double>(n));
    std::vector<double> b(n);
    for (size_t i = 0; i < n; ++i)
      b[i] = points_[i].x / points_[i].t;
    for (size_t r = 0; r < k; ++r) {
      for (size_t i = 0; i < n; ++i)
        a[r][i] = latency(best.templates[r], i) / points_[i].t;
    }
    std::vector<size_t> cuts(k + 1);  // segment r is [cuts[r], cuts[r+1])
    cuts[0] = 0;
    cuts[k] = n;
    std::vector<Regime> regimes(k);
    std::vector<double> weights(n, 1.0);
    // Enumerate cut positions recursively (n <= a few hundred, k <= 4).
    auto evaluate = [&]() {
      double v_min = 1e-15;  // bus bandwidth <= 1 PB/s
      for (size_t r = k; r-- > 0;) {
        if (ring_max_bus_bw > 0.0 && is_ring(best.templates[r]))
          v_min = std::max(v_min, 1.0 / ring_max_bus_bw);
        regimes[r] = fit_segment(a[r], b, cuts[r], cuts[r + 1], v_min, weights);
        v_min = regimes[r].inv_bw * 1.05;  // smaller messages: strictly lower bandwidth
      }
      double objective = 0.0;
      for (size_t i = 0; i < n; ++i) {
        double model = std::numeric_limits<double>::infinity();
        for (size_t r = 0; r < k; ++r) {
          model = std::min(model, regimes[r].lambda * a[r][i] + regimes[r].inv_bw * b[i]);
        }
        const double e = model - 1.0;
        objective += std::abs(e) * (points_[i].bytes >= kMiB ? 2.0 : 1.0);
      }
      if (objective < best.objective) {
        best.objective = objective;
        best.regimes = regimes;
      }
    };
    auto recurse = [&](auto&& self, size_t r) -> void {
      if (r == k) {
        evaluate();
        return;
      }
      // Every regime rests on at least kMinSegment points, so none is set by the prior alone.
      for (size_t c = cuts[r - 1] + kMinSegment; c + (k - r) * kMinSegment <= n; ++c) {
        cuts[r] = c;
        self(self, r + 1);
      }
    };
    if (k == 1) {
      evaluate();
    } else {
      recurse(recurse, 1);
    }
    return best;
  }

  [[nodiscard]] size_t size() const { return points_.size(); }

 private:
  std::vector<Point> points_;
  CollectiveKind kind_;
  double plugin_s_;
};

double mean_abs(const std::vector<double>& v) {
  if (v.empty())
    return 0.0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// For every regime, whether it is the fastest on at least one measured point.
std::vector<bool> regimes_winning(const std::vector<AlgorithmParams>& algorithms,
                                  CollectiveKind kind, const std::vector<Point>& points) {
  std::vector<bool> used(algorithms.size(), false);
  for (const auto& pt : points) {
    size_t best = 0;
    double best_t = std::numeric_limits<double>::infinity();
    for (size_t r = 0; r < algorithms.size(); ++r) {
      const double t = algorithm_time_s(algorithms[r], kind, pt.bytes, pt.group, 1.0);
      if (t < best_t) {
        best_t = t;
        best = r;
      }
    }
    used[best] = true;
  }
  return used;
}

// When NVLS takes the largest messages of a single-node fit, the ring's Simple protocol wins
// on no measured point and is missing from the fit, although NCCL runs it for the collectives
// NVLS serves poorly (all-gather and reduce-scatter get less than half its all-reduce
// bandwidth) and the bandwidth-bound messages NVLS does not serve. NCCL's model implies it
// from the fitted ring LL128 regime: LL128 carries 120 of every 128 bytes, so NCCL sets its
// bus bandwidth to 0.92 x the Simple one (docs/design/nccl-cost-model.md §3 step 3; the per-channel
// LL128 cap, 36.7 GB/s on Hopper, does not bind under NCCL's ring maximum). Its latency is
// NCCL's Simple formula at the LL128 regime's fitted scale, its bandwidth at most NCCL's ring
// maximum. The implied regime is kept only if it wins on no measured point, so the fit's own
// curve is unchanged. NVIDIA's NCCL team reports ~370 GB/s of bus bandwidth for non-all-reduce
// collectives on 8 x H100 (NVIDIA/nccl-tests#212), above the LL128 regime's ~320.
void add_implied_ring_simple(CollectiveFit& fit, const Candidate& chosen,
                             const std::vector<size_t>& kept_index, CollectiveKind kind,
                             const std::vector<Point>& points, double plugin_s) {
  if (kept_index.empty() || chosen.templates.back() != Template::kNvls ||
      kept_index.back() != chosen.templates.size() - 1) {
    return;
  }
  // The fastest kept LL128 ring regime (regimes are in size order).
  size_t ll128 = kept_index.size();
  for (size_t i = 0; i < kept_index.size(); ++i) {
    if (chosen.templates[kept_index[i]] == Template::kRingLl128)
      ll128 = i;
  }
  if (ll128 == kept_index.size())
    return;
  const double lambda = chosen.regimes[kept_index[ll128]].lambda;
  const double ll128_bw = fit.algorithms[ll128].bus_bandwidth_bytes_per_s;
  AlgorithmParams simple = template_params(Template::kRingSimple, plugin_s);
  simple.base_latency_s *= lambda;
  simple.intra_step_latency_s *= lambda;
  simple.inter_step_latency_s = 0.0;  // single-node fits only (NVLS relabelling)
  simple.bus_bandwidth_bytes_per_s = std::min(ll128_bw / kLl128PayloadShare, kHopperRingMaxBusBw);
  if (!(simple.bus_bandwidth_bytes_per_s > ll128_bw))
    return;
  // Inserted just below the NVLS regime, keeping the regimes in order of bandwidth.
  std::vector<AlgorithmParams> with = fit.algorithms;
  with.insert(with.end() - 1, simple);
  if (regimes_winning(with, kind, points)[with.size() - 2])
    return;
  fit.algorithms = with;
}

}  // namespace

GroupShape curve_shape(const CollectiveCurve& curve) {
  GroupShape g;
  g.ranks = curve.ranks;
  g.nodes = curve.nodes;
  g.ranks_per_node = curve.ranks_per_node;
  return g;
}

std::string curve_label(const CollectiveCurve& curve) {
  return std::string(io::collective_name(curve.kind)) + " " +
         (curve.nodes > 1 ? "inter_node " : "intra_node ") + std::to_string(curve.ranks) +
         " ranks / " + std::to_string(curve.nodes) + (curve.nodes == 1 ? " node" : " nodes");
}

CollectiveFit fit_collective(const std::vector<CollectiveCurve>& curves,
                             const CollectiveFitOptions& options) {
  const CollectiveKind kind = curves.front().kind;
  const bool inter = curves.front().nodes > 1;
  std::vector<Point> points;
  for (const auto& c : curves) {
    const GroupShape g = curve_shape(c);
    for (const auto& s : c.samples) {
      points.push_back(
          {s.bytes, s.bytes * bus_bandwidth_factor(kind, c.ranks), s.best_time_s(), g});
    }
  }
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& l, const Point& r) { return l.bytes < r.bytes; });
  const bool tree_allowed = kind == CollectiveKind::kAllReduce;
  Fitter fitter(points, kind, options.plugin_latency_s);

  // Candidate fits for 1..max regimes; more regimes must earn their place (>= 10% lower
  // absolute relative error), so short or smooth curves get few regimes.
  Candidate chosen;
  for (int k = 1; k <= std::max(1, options.max_regimes); ++k) {
    if (k > 1 && static_cast<size_t>(k) * kMinSegment > fitter.size())
      break;
    Candidate c = fitter.fit(templates_for(k, inter, tree_allowed, Template::kRingSimple));
    const double last_bw = 1.0 / c.regimes.back().inv_bw;
    // Relabel the fastest regime when a ring could not reach its bandwidth.
    if (!inter && options.gpu_has_nvls && last_bw > kHopperRingMaxBusBw) {
      // The smaller-message regimes stay rings, which cannot pass NCCL's ring maximum.
      c = fitter.fit(templates_for(k, inter, tree_allowed, Template::kNvls), kHopperRingMaxBusBw);
    } else if (inter && tree_allowed && options.node_nic_bandwidth_bytes_per_s > 0.0 &&
               last_bw > options.node_nic_bandwidth_bytes_per_s) {
      // The regimes below the tree stay rings, which cannot pass the NICs' line rate.
      c = fitter.fit(templates_for(k, inter, tree_allowed, Template::kTreeSimple),
                     options.node_nic_bandwidth_bytes_per_s);
    }
    if (c.objective < 0.9 * chosen.objective)
      chosen = c;
  }

  CollectiveFit fit;
  fit.kind = kind;
  fit.inter_node = inter;
  for (size_t r = 0; r < chosen.regimes.size(); ++r) {
    AlgorithmParams p = template_params(chosen.templates[r], options.plugin_latency_s);
    const double lambda = chosen.regimes[r].lambda;
    p.base_latency_s *= lambda;
    p.intra_step_latency_s *= lambda;
    p.inter_step_latency_s = inter ? p.inter_step_latency_s * lambda : 0.0;
    p.bus_bandwidth_bytes_per_s = 1.0 / chosen.regimes[r].inv_bw;
    fit.algorithms.push_back(p);
  }
  // Drop regimes that win on no measured point (they would only act outside the data).
  const std::vector<bool> used = regimes_winning(fit.algorithms, kind, points);
  std::vector<AlgorithmParams> kept;
  std::vector<size_t> kept_index;
  for (size_t r = 0; r < fit.algorithms.size(); ++r) {
    if (used[r]) {
      kept.push_back(fit.algorithms[r]);
      kept_index.push_back(r);
    }
  }
  fit.algorithms = kept;
  add_implied_ring_simple(fit, chosen, kept_index, kind, points, options.plugin_latency_s);

  std::vector<double> errors;
  for (const auto& c : curves) {
    const auto model = model_times(fit, c, inter ? options.node_nic_bandwidth_bytes_per_s : 0.0);
    for (size_t i = 0; i < model.size(); ++i) {
      errors.push_back(100.0 * std::abs(model[i] - c.samples[i].best_time_s()) /
                       c.samples[i].best_time_s());
    }
  }
  fit.mape_pct = mean_abs(errors);
  return fit;
}

std::vector<double> model_times(const CollectiveFit& fit, const CollectiveCurve& curve,
                                double reference_nic_bytes_per_s) {
  HardwareProfile profile;
  profile.collectives.push_back(fit);
  profile.reference_node_nic_bandwidth_bytes_per_s = reference_nic_bytes_per_s;
  const GroupShape group = curve_shape(curve);
  std::vector<double> out;
  out.reserve(curve.samples.size());
  for (const auto& s : curve.samples) {
    out.push_back(collective_time_s(profile, curve.kind, s.bytes, group));
  }
  return out;
}

FitRecord evaluate_fit(const CollectiveFit& fit, const CollectiveCurve& curve,
                       double reference_nic_bytes_per_s) {
  FitRecord rec;
  rec.curve = curve_label(curve);
  const size_t slash = curve.source.find_last_of('/');
  rec.source = slash == std::string::npos ? curve.source : curve.source.substr(slash + 1);
  const auto model = model_times(fit, curve, reference_nic_bytes_per_s);
  std::vector<double> all;
  std::vector<double> large;
  for (size_t i = 0; i < model.size(); ++i) {
    const double measured = curve.samples[i].best_time_s();
    const double err = 100.0 * std::abs(model[i] - measured) / measured;
    all.push_back(err);
    if (curve.samples[i].bytes >= kMiB)
      large.push_back(err);
    rec.max_abs_error_pct = std::max(rec.max_abs_error_pct, err);
  }
  rec.points = static_cast<int>(all.size());
  rec.points_large = static_cast<int>(large.size());
  rec.mape_pct = mean_abs(all);
  rec.mape_large_pct = mean_abs(large);
  return rec;
}

}  // namespace capsim::calibrate
