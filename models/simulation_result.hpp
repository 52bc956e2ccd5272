#pragma once

#include <string>
#include <vector>

#include "models/hardware_profile.hpp"
#include "models/memory_model.hpp"

namespace capsim {

// Where one iteration's wall time goes on the critical path (seconds). The parts sum to the
// iteration time: compute + exposed communication + bubble + optimizer (+ other).
struct TimeBreakdown {
  double compute_s = 0.0;
  double tp_comm_exposed_s = 0.0;
  double cp_comm_exposed_s = 0.0;
  double ep_comm_exposed_s = 0.0;  // expert-parallel token exchanges (MoE models)
  double pp_comm_exposed_s = 0.0;
  double dp_comm_exposed_s = 0.0;
  double bubble_s = 0.0;
  double optimizer_s = 0.0;
  double other_s = 0.0;  // per-micro-batch framework overhead
  // The pipeline stage whose GPU's time the parts are: the busiest (most compute and exposed
  // TP/CP communication), in both engines, so its bubble is the pipeline's fill and drain.
  int stage = 0;
  // Per pipeline stage, its GPU's busy time over the iteration (compute, overhead, exposed
  // TP/CP): how evenly the layers are split. Empty when only the time was asked for.
  std::vector<double> stage_busy_s;
  // The busiest stage's busy time over the stages' mean (1 when even or unpipelined): at most
  // how much faster a split that evened the stages' work could run.
  double busiest_over_mean_busy = 1.0;
};

// The outcome of simulating (or estimating) one iteration of a scenario.
struct SimulationResult {
  std::string engine;  // "analytic" or "event"
  std::string scenario_name;
  std::string profile_name;
  double software_efficiency = 1.0;  // the profile's in-situ factor the kernel times include
  double iteration_time_s = 0.0;
  double tokens_per_s = 0.0;
  double tokens_per_s_per_gpu = 0.0;
  double model_tflops_per_gpu = 0.0;
  double mfu = 0.0;  // model FLOPs / (time x GPUs x peak)
  double hfu = 0.0;  // hardware FLOPs (with recompute) / (time x GPUs x peak)
  int num_gpus = 0;
  int micro_batches = 0;
  MemoryEstimate memory;
  TimeBreakdown breakdown;
  std::vector<std::string> notes;  // what the engine could not see (e.g. contention)

  // Names the profile the result was costed with and the in-situ factor its kernels include.
  void set_profile(const HardwareProfile& profile) {
    profile_name = profile.name;
    software_efficiency = profile.software_efficiency;
  }
};

}  // namespace capsim
