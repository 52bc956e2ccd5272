#pragma once

#include "planner/plan.hpp"

namespace capsim::planner {

// Expected cost of failures for one training run (seconds; fraction of wall time).
struct FailureOverhead {
  double cluster_mtbf_s = 0.0;         // gpu MTBF / GPUs (independent exponential failures)
  double checkpoint_interval_s = 0.0;  // compute time between checkpoints
  double expected_wall_s = 0.0;        // failure-free time + checkpoints + rework + restarts
  double overhead_fraction = 0.0;      // 1 - solve / expected_wall
};

// Returns the model of failures and checkpoints alone (no detection, relaunch, stragglers or
// other goodput losses): per-GPU MTBF, checkpoint save and reload. REQUIRES: all > 0.
[[nodiscard]] FailureModel daly_failure_model(double gpu_mtbf_s, double checkpoint_save_s,
                                              double checkpoint_restore_s);

// Returns the Young-Daly checkpoint interval sqrt(2·δ·M) for save cost δ and cluster MTBF M
// (Young 1974, "A first order approximation to the optimum checkpoint interval", CACM 17(9);
// the leading term of Daly 2006, "A higher order estimate of the optimum checkpoint interval
// for restart dumps", FGCS 22(3)). REQUIRES: both > 0.
[[nodiscard]] double young_daly_interval_s(double checkpoint_save_s, double cluster_mtbf_s);

// Returns the time one unexpected interruption costs besides the lost work: detection, restart
// and checkpoint reload.
[[nodiscard]] double restart_cost_s(const FailureModel& model);

// Returns the checkpoint interval: the model's when it gives one, else Young-Daly's for the
// cluster MTBF of `num_gpus` GPUs. REQUIRES: num_gpus >= 1, a positive MTBF and save cost.
[[nodiscard]] double checkpoint_interval_s(const FailureModel& model, int num_gpus);

// Returns T_wall / T_solve of failure_overhead for `num_gpus` GPUs: the factor by which failures,
// checkpoints and restarts stretch training. It depends on the cluster, not on the layout's speed.
// REQUIRES: num_gpus >= 1.
[[nodiscard]] double failure_slowdown(const FailureModel& model, int num_gpus);

// Above this slowdown the expected run is over a million times its failure-free time: the cluster
// fails faster than it checkpoints and restarts, and no layout on it finishes (the planner prunes
// it; beyond about e^700 the factor is not even a finite double).
inline constexpr double kMaxFailureSlowdown = 1e6;

// Returns the expected wall time of `solve_s` seconds of failure-free training on `num_gpus`
// GPUs, checkpointing every checkpoint_interval_s, from Daly 2006's complete model for
// exponential failures: T_wall = M·e^{R/M}·(e^{(τ+δ)/M} − 1)·T_solve/τ, restart cost R
// (restart_cost_s).
// REQUIRES: num_gpus >= 1, solve_s >= 0.
[[nodiscard]] FailureOverhead failure_overhead(const FailureModel& model, int num_gpus,
                                               double solve_s);

}  // namespace capsim::planner
