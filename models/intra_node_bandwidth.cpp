#include "models/intra_node_bandwidth.hpp"

namespace capsim {

HardwareProfile with_intra_node_bandwidth(HardwareProfile profile, double bandwidth_bytes_per_s,
                                          double reference_bytes_per_s) {
  if (!(bandwidth_bytes_per_s > 0.0) || !(reference_bytes_per_s > 0.0) ||
      bandwidth_bytes_per_s == reference_bytes_per_s) {
    return profile;
  }
  const double scale = bandwidth_bytes_per_s / reference_bytes_per_s;
  for (CollectiveFit& fit : profile.collectives) {
    if (fit.inter_node)
      continue;
    for (AlgorithmParams& a : fit.algorithms)
      a.bus_bandwidth_bytes_per_s *= scale;
  }
  return profile;
}

}  // namespace capsim
