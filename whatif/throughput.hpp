#pragma once

#include <functional>

#include "models/instance_catalog.hpp"
#include "models/scenario.hpp"

#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// Returns the training throughput (tokens/s) of a scenario as laid out; the what-if calls it
// once per (scenario, instance, GPU count) and memoises the answers.
using ThroughputFn = std::function<double(const Scenario&)>;

// Returns the throughput function the what-if uses by default: the analytical estimator with
// the scenario's resolved profile.
[[nodiscard]] ThroughputFn default_throughput();

// Returns `base` re-laid out on `gpus` GPUs of `instance`: same model, tensor, pipeline and
// context degrees, data-parallel degree gpus / (tp * pp * cp), global batch kept (rounded up to
// a multiple of micro-batch x data). REQUIRES: gpus is a multiple of tp * pp * cp.
[[nodiscard]] Scenario scale_scenario(const Scenario& base, const InstanceSpec& instance, int gpus);

// Loads every scenario the jobs name and fills whatif.scenario_models with the throughput of
// each job's admissible allocations on each pool's instance. Throws InputError naming the
// trace and the scenario file when a job's GPU counts do not fit the scenario's layout.
void fill_scenario_models(WhatIf& whatif, const ThroughputFn& throughput);

}  // namespace capsim::whatif
