#pragma once

#include <string>
#include <vector>

#include "calibrate/nccl_log.hpp"
#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"

namespace capsim::calibrate {

// What the collective fitter needs to know about the hardware besides the measurements.
struct CollectiveFitOptions {
  bool gpu_has_nvls = false;
  // Aggregate NIC bandwidth per node of the measured nodes (bytes/s); 0 = unknown. A fitted
  // inter-node regime whose bus bandwidth exceeds it cannot be a ring: it is labelled tree.
  double node_nic_bandwidth_bytes_per_s = 0.0;
  // Net-plugin latency NCCL adds per network step (aws-ofi-nccl: 75 us on p4d/p4de/p5; IB: 0),
  // used only for the split of a fitted latency between base, intra and inter steps.
  double plugin_latency_s = 0.0;
  int max_regimes = 4;
};

// Returns the communicator shape of a curve (ranks, ranks per node, nodes; NIC share 0, i.e.
// the reference bandwidth).
[[nodiscard]] GroupShape curve_shape(const CollectiveCurve& curve);

// Fits one collective in one scope (every curve must share kind and intra/inter scope) to
// NCCL's structure: time = min over regimes of latency + bytes x busbw-factor / bus bandwidth,
// each regime's latency a fitted multiple of NCCL's own latency formula for its algorithm and
// protocol (docs/design/nccl-cost-model.md §2), so that other rank and node counts follow NCCL's
// ring 2(n-1) / tree 2 log2(nodes) step counts. Minimises relative error (docs/calibration.md).
// REQUIRES: curves non-empty, same kind and scope.
[[nodiscard]] CollectiveFit fit_collective(const std::vector<CollectiveCurve>& curves,
                                           const CollectiveFitOptions& options);

// Returns the fitted model's time for every sample of `curve`, through collective_time_s, in a
// profile whose reference NIC bandwidth per node is `reference_nic_bytes_per_s` (0: none), so
// that a tree fitted on 2 nodes is capped beyond 2 nodes exactly as simulate caps it.
[[nodiscard]] std::vector<double> model_times(const CollectiveFit& fit,
                                              const CollectiveCurve& curve,
                                              double reference_nic_bytes_per_s = 0.0);

// Returns the error record of `fit` on `curve` (MAPE over all sizes and over sizes >= 1 MiB),
// costed as model_times does.
[[nodiscard]] FitRecord evaluate_fit(const CollectiveFit& fit, const CollectiveCurve& curve,
                                     double reference_nic_bytes_per_s = 0.0);

// Returns the label of a curve used in reports and fit records.
[[nodiscard]] std::string curve_label(const CollectiveCurve& curve);

}  // namespace capsim::calibrate
