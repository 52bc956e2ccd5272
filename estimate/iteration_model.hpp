#pragma once

#include <memory>

#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"

namespace capsim::estimate {

// Remembers what one layer, the embedding and the head cost (the workload lowered and costed,
// with its TP and CP collectives) across layouts that differ only in what those costs never
// read: the pipeline schedule and depth, data parallelism, the ZeRO stage beyond the gradient
// precision it implies, the batch size, the gradient buckets and the optimizer's storage. The
// planner's screen keeps one memo per thread: most layouts repeat an earlier one's layer costs.
// It forgets everything when the model, the cluster or the profile (by address: a profile
// changed in place at the same address is not noticed) changes.
class PartCostMemo {
 public:
  PartCostMemo();
  ~PartCostMemo();
  PartCostMemo(const PartCostMemo&) = delete;
  PartCostMemo& operator=(const PartCostMemo&) = delete;
  PartCostMemo(PartCostMemo&&) = delete;
  PartCostMemo& operator=(PartCostMemo&&) = delete;

  struct Entries;  // estimate/iteration_model.cpp
  [[nodiscard]] Entries& entries() { return *entries_; }

 private:
  std::unique_ptr<Entries> entries_;
};

// Returns the per-stage, per-chunk costs of one iteration: the workload lowered to GEMMs,
// attention and memory-bound ops, costed with the profile, plus the communicator shapes.
// Both engines (analytic and event) start from this. With `memo`, layer costs an earlier call
// computed for an equivalent layout are taken from it (bit-identical to computing them).
// REQUIRES: the scenario breaks no layout rule (estimate/layout_rules.hpp).
[[nodiscard]] IterationCosts compute_iteration_costs(const Scenario& scenario,
                                                     const HardwareProfile& profile,
                                                     PartCostMemo* memo = nullptr);

// Same, into `out`, whose vectors keep their storage: the planner's screen prices thousands of
// layouts per thread.
void compute_iteration_costs(const Scenario& scenario, const HardwareProfile& profile,
                             PartCostMemo* memo, IterationCosts& out);

}  // namespace capsim::estimate
