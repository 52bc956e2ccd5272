#include "planner/failure_model.hpp"

#include <cmath>

namespace capsim::planner {

double young_daly_interval_s(double checkpoint_save_s, double cluster_mtbf_s) {
  return std::sqrt(2.0 * checkpoint_save_s * cluster_mtbf_s);
}

FailureOverhead failure_overhead(const FailureModel& model, int num_gpus, double solve_s) {
  FailureOverhead out;
  const double m = model.gpu_mtbf_s / static_cast<double>(num_gpus);
  const double delta = model.checkpoint_save_s;
  const double r = model.checkpoint_restore_s;
  out.cluster_mtbf_s = m;
  out.checkpoint_interval_s = young_daly_interval_s(delta, m);
  const double tau = out.checkpoint_interval_s;
  // expm1 keeps precision when (τ+δ)/M is small (rare failures).
  out.expected_wall_s = m * std::exp(r / m) * std::expm1((tau + delta) / m) * solve_s / tau;
  out.overhead_fraction = out.expected_wall_s > 0.0 ? 1.0 - solve_s / out.expected_wall_s : 0.0;
  return out;
}

}  // namespace capsim::planner
