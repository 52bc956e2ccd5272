#include "planner/failure_model.hpp"

#include <cmath>

namespace capsim::planner {

double young_daly_interval_s(double checkpoint_save_s, double cluster_mtbf_s) {
  return std::sqrt(2.0 * checkpoint_save_s * cluster_mtbf_s);
}

double failure_slowdown(const FailureModel& model, int num_gpus) {
  const double m = model.gpu_mtbf_s / static_cast<double>(num_gpus);
  const double delta = model.checkpoint_save_s;
  const double tau = young_daly_interval_s(delta, m);
  // expm1 keeps precision when (τ+δ)/M is small (rare failures).
  return m * std::exp(model.checkpoint_restore_s / m) * std::expm1((tau + delta) / m) / tau;
}

FailureOverhead failure_overhead(const FailureModel& model, int num_gpus, double solve_s) {
  FailureOverhead out;
  out.cluster_mtbf_s = model.gpu_mtbf_s / static_cast<double>(num_gpus);
  out.checkpoint_interval_s = young_daly_interval_s(model.checkpoint_save_s, out.cluster_mtbf_s);
  out.expected_wall_s = failure_slowdown(model, num_gpus) * solve_s;
  out.overhead_fraction = out.expected_wall_s > 0.0 ? 1.0 - solve_s / out.expected_wall_s : 0.0;
  return out;
}

}  // namespace capsim::planner
