#pragma once

#include <cmath>
#include <string>

#include "planner/plan.hpp"

namespace capsim::planner {

// Published figures behind the goodput model's defaults (docs/planner.md, "Goodput").
// Llama 3 (Dubey et al. 2024, "The Llama 3 Herd of Models", §3.3.4): 16,384 H100 GPUs over a
// 54-day snapshot had 466 job interruptions, 419 unexpected and 47 planned.
inline constexpr double kLlama3GpuHours = 16384.0 * 54.0 * 24.0;
inline constexpr double kHopperInterruptionsPerGpuHour = 419.0 / kLlama3GpuHours;
inline constexpr double kPlannedInterruptionsPerGpuHour = 47.0 / kLlama3GpuHours;
// Kokolis et al. 2025, "Revisiting Reliability in Large-Scale Machine Learning Research
// Clusters" (HPCA): 6.50 job failures per 1,000 node-days on RSC-1's 8-GPU A100 nodes.
inline constexpr double kAmpereInterruptionsPerGpuHour = 6.50 / (1000.0 * 8.0 * 24.0);
// PyTorch's ProcessGroupNCCL aborts a hung collective after its default timeout, 10 minutes:
// the time a synchronous job takes to notice a dead rank.
inline constexpr double kDetectionS = 600.0;
// Relaunch (scheduling, container and process start, NCCL communicator set-up): no published
// figure for a general cluster; 5 minutes is an assumption, overridable as "restart".
inline constexpr double kRestartS = 300.0;
// Llama 3 §3.3.4: Tectonic sustained 2 TB/s of checkpoint I/O for 2,048 nodes of 8 H100.
inline constexpr double kStorageBytesPerSPerNode = 2e12 / 2048.0;
// bf16 weights (2 B), fp32 master weights (4 B) and Adam's two fp32 moments (8 B). BLOOM's
// checkpoint of 176B parameters with optimizer states was 2.3 TB, 13 B per parameter.
inline constexpr double kCheckpointBytesPerParameter = 14.0;
// Sinha et al. 2022, "Not All GPUs Are Created Equal" (SC22): identical GPUs of one cluster
// differ by 8% on average (fastest vs slowest). Read as the range of ~27,648 normal draws
// (Summit's GPUs), about 9 standard deviations: sigma = 0.08 / (2·sqrt(2·ln 27,648)).
inline const double kStragglerSigma = 0.08 / (2.0 * std::sqrt(2.0 * std::log(27648.0)));

// Returns the goodput model a plan gets when it says nothing: every part at its published
// default, with the per-instance fields (MTBF, checkpoint costs) left at 0 to be derived.
[[nodiscard]] FailureModel default_failure_model();

// Returns the per-GPU interruption rate (per hour) published for a GPU architecture: Ampere's
// from Kokolis et al., Hopper's (and newer, for which nothing is published) from Llama 3.
[[nodiscard]] double published_interruptions_per_gpu_hour(const std::string& architecture);

// Returns `model` with what it leaves at 0 derived for one cluster: the MTBF from the
// architecture, the checkpoint save from the state (parameters x bytes per parameter) over the
// nodes' storage bandwidth, the reload as long as the save.
[[nodiscard]] FailureModel resolve_failure_model(const FailureModel& model,
                                                 const std::string& architecture, double parameters,
                                                 int num_nodes);

// Returns the plan's model (REQUIRES: plan.failure) resolved for `num_nodes` nodes of the
// instance type `instance` (a name in plan.catalog), checkpointing the plan model's parameters.
[[nodiscard]] FailureModel resolve_for_plan(const PlanSpec& plan, const std::string& instance,
                                            int num_nodes);

// What one run is: its steady-state time and the layout facts the ramp needs.
struct GoodputRun {
  int num_gpus = 1;
  double steady_s = 0.0;          // whole iterations at the full batch, no losses
  double iteration_time_s = 0.0;  // at the full batch
  double tokens = 0.0;            // to train
  int pipeline = 1;
  int virtual_stages = 1;
  double micro_batches = 1.0;  // per data-parallel replica per iteration, at the full batch
};

// Where the all-in time goes (seconds); the parts sum to wall_s.
struct GoodputBreakdown {
  double steady_s = 0.0;
  double stragglers_s = 0.0;  // waiting for the slowest GPU every step
  double batch_ramp_s = 0.0;  // the ramp's smaller batches fill the pipeline less
  double startup_s = 0.0;     // first launch and warm-up iterations
  double evaluation_s = 0.0;  // evaluation pauses
  double checkpoint_s = 0.0;  // checkpoint writes
  double lost_work_s = 0.0;   // work since the last checkpoint, redone after a failure
  double restarts_s = 0.0;    // detection, relaunch and reload, unexpected and planned
  double wall_s = 0.0;
  double interruptions = 0.0;  // expected count, unexpected and planned
  double checkpoint_interval_s = 0.0;
  double checkpoint_save_s = 0.0;
  double cluster_mtbf_s = 0.0;
};

// Returns the slowdown of synchronous steps on `num_gpus` GPUs whose speeds spread with
// standard deviation `sigma`: each step waits for the slowest, about sigma·sqrt(2·ln G) behind
// (the expected maximum of G normal draws).
[[nodiscard]] double straggler_slowdown(double sigma, int num_gpus);

// Returns the expected all-in time of `run` under a resolved model (resolve_failure_model):
// the steady time stretched by stragglers, the batch ramp, start-up and evaluation, then by
// failures (Daly 2006's complete model, failure_model.hpp), then planned restarts.
[[nodiscard]] GoodputBreakdown goodput_breakdown(const FailureModel& model, const GoodputRun& run);

}  // namespace capsim::planner
