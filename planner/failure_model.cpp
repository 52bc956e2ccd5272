#include "planner/failure_model.hpp"

#include <cmath>

namespace capsim::planner {

FailureModel daly_failure_model(double gpu_mtbf_s, double checkpoint_save_s,
                                double checkpoint_restore_s) {
  FailureModel m;
  m.gpu_mtbf_s = gpu_mtbf_s;
  m.checkpoint_save_s = checkpoint_save_s;
  m.checkpoint_restore_s = checkpoint_restore_s;
  return m;
}

double young_daly_interval_s(double checkpoint_save_s, double cluster_mtbf_s) {
  return std::sqrt(2.0 * checkpoint_save_s * cluster_mtbf_s);
}

double restart_cost_s(const FailureModel& model) {
  return model.detection_s + model.restart_s + model.checkpoint_restore_s;
}

double checkpoint_interval_s(const FailureModel& model, int num_gpus) {
  if (model.checkpoint_interval_s > 0.0)
    return model.checkpoint_interval_s;
  return young_daly_interval_s(model.checkpoint_save_s,
                               model.gpu_mtbf_s / static_cast<double>(num_gpus));
}

double failure_slowdown(const FailureModel& model, int num_gpus) {
  const double m = model.gpu_mtbf_s / static_cast<double>(num_gpus);
  const double delta = model.checkpoint_save_s;
  const double tau = checkpoint_interval_s(model, num_gpus);
  // expm1 keeps precision when (τ+δ)/M is small (rare failures).
  return m * std::exp(restart_cost_s(model) / m) * std::expm1((tau + delta) / m) / tau;
}

FailureOverhead failure_overhead(const FailureModel& model, int num_gpus, double solve_s) {
  FailureOverhead out;
  out.cluster_mtbf_s = model.gpu_mtbf_s / static_cast<double>(num_gpus);
  out.checkpoint_interval_s = checkpoint_interval_s(model, num_gpus);
  out.expected_wall_s = failure_slowdown(model, num_gpus) * solve_s;
  out.overhead_fraction = out.expected_wall_s > 0.0 ? 1.0 - solve_s / out.expected_wall_s : 0.0;
  return out;
}

}  // namespace capsim::planner
