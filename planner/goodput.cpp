#include "planner/goodput.hpp"

#include <algorithm>

#include "models/parameter_count.hpp"
#include "planner/failure_model.hpp"

namespace capsim::planner {

FailureModel default_failure_model() {
  FailureModel m;
  m.detection_s = kDetectionS;
  m.restart_s = kRestartS;
  m.planned_per_gpu_hour = kPlannedInterruptionsPerGpuHour;
  m.straggler_sigma = kStragglerSigma;
  m.storage_bytes_per_s_per_node = kStorageBytesPerSPerNode;
  m.checkpoint_bytes_per_parameter = kCheckpointBytesPerParameter;
  return m;
}

double published_interruptions_per_gpu_hour(const std::string& architecture) {
  if (architecture == "ampere")
    return kAmpereInterruptionsPerGpuHour;
  return kHopperInterruptionsPerGpuHour;
}

FailureModel resolve_failure_model(const FailureModel& model, const std::string& architecture,
                                   double parameters, int num_nodes) {
  FailureModel out = model;
  if (out.gpu_mtbf_s <= 0.0)
    out.gpu_mtbf_s = 3600.0 / published_interruptions_per_gpu_hour(architecture);
  if (out.checkpoint_save_s <= 0.0) {
    out.checkpoint_save_s = parameters * out.checkpoint_bytes_per_parameter /
                            (out.storage_bytes_per_s_per_node * static_cast<double>(num_nodes));
  }
  if (out.checkpoint_restore_s <= 0.0)
    out.checkpoint_restore_s = out.checkpoint_save_s;
  return out;
}

FailureModel resolve_for_plan(const PlanSpec& plan, const std::string& instance, int num_nodes) {
  const InstanceSpec& inst = *plan.catalog.find_instance(instance);
  return resolve_failure_model(*plan.failure, inst.gpu.architecture, total_parameters(plan.model),
                               num_nodes);
}

double straggler_slowdown(double sigma, int num_gpus) {
  if (num_gpus < 2 || sigma <= 0.0)
    return 1.0;
  return 1.0 + sigma * std::sqrt(2.0 * std::log(static_cast<double>(num_gpus)));
}

namespace {

// Returns the time per token at `fraction` of the global batch over the time per token at the
// full batch: Megatron's ramp keeps the layout and runs fewer micro-batches per replica, so
// the pipeline's (p − 1)/v fill-and-drain slots weigh more (at least one micro-batch runs).
double ramp_time_ratio(const GoodputRun& run, double fraction) {
  const double bubble =
      static_cast<double>(run.pipeline - 1) / static_cast<double>(run.virtual_stages);
  const double m = run.micro_batches;
  const double m_ramp = std::max(1.0, m * fraction);
  return ((m_ramp + bubble) / (m * fraction)) / ((m + bubble) / m);
}

}  // namespace

GoodputBreakdown goodput_breakdown(const FailureModel& model, const GoodputRun& run) {
  GoodputBreakdown b;
  b.steady_s = run.steady_s;
  const double slowdown = straggler_slowdown(model.straggler_sigma, run.num_gpus);
  b.stragglers_s = run.steady_s * (slowdown - 1.0);
  const double s_per_token = run.tokens > 0.0 ? run.steady_s * slowdown / run.tokens : 0.0;
  double trained = 0.0;
  for (const BatchRampStep& step : model.batch_ramp) {
    const double until = std::min(step.until_tokens, run.tokens);
    if (until <= trained)
      continue;
    b.batch_ramp_s +=
        (until - trained) * s_per_token * (ramp_time_ratio(run, step.batch_fraction) - 1.0);
    trained = until;
  }
  b.startup_s = model.restart_s + model.warmup_iterations * run.iteration_time_s;
  const double training_s = b.steady_s + b.stragglers_s + b.batch_ramp_s;
  if (model.evaluation_every_s > 0.0)
    b.evaluation_s = std::floor(training_s / model.evaluation_every_s) * model.evaluation_s;
  const double solve_s = training_s + b.startup_s + b.evaluation_s;
  const FailureOverhead f = failure_overhead(model, run.num_gpus, solve_s);
  b.cluster_mtbf_s = f.cluster_mtbf_s;
  b.checkpoint_interval_s = f.checkpoint_interval_s;
  b.checkpoint_save_s = model.checkpoint_save_s;
  b.checkpoint_s = solve_s / f.checkpoint_interval_s * model.checkpoint_save_s;
  const double failures = f.expected_wall_s / f.cluster_mtbf_s;
  // Daly's total, less the writes, is restarts and redone work; an approximation's rounding
  // must not make the redone work negative.
  const double lost = std::max(0.0, f.expected_wall_s - solve_s - b.checkpoint_s);
  b.restarts_s = std::min(lost, failures * restart_cost_s(model));
  b.lost_work_s = lost - b.restarts_s;
  // Planned stops checkpoint first: a relaunch and a reload each, nothing redone.
  const double planned = model.planned_per_gpu_hour * run.num_gpus * f.expected_wall_s / 3600.0;
  const double planned_s = planned * (model.restart_s + model.checkpoint_restore_s);
  b.restarts_s += planned_s;
  b.interruptions = failures + planned;
  b.wall_s = std::max(f.expected_wall_s, solve_s + b.checkpoint_s) + planned_s;
  return b;
}

}  // namespace capsim::planner
