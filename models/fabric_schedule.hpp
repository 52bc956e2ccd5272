#pragma once

namespace capsim {

// How the jobs of a shared-fabric run are measured (docs/cluster.md, "Steady state"): each job
// runs `warmup_iterations` that are not measured, then `measured_iterations` whose mean is its
// shared figure, and keeps iterating (loading the links) until every job has run both. With
// `staggered`, job j of J starts j/J of its alone iteration time late, so that jobs' phases are
// spread over an iteration instead of all starting their iterations together.
struct FabricSchedule {
  int warmup_iterations = 1;
  int measured_iterations = 2;
  bool staggered = true;

  // Returns one measured iteration per job, all starting at time 0, each job stopping when its
  // iteration ends: the jobs' phases aligned, the worst case of their communication phases
  // coinciding.
  [[nodiscard]] static FabricSchedule aligned() { return {0, 1, false}; }
  [[nodiscard]] int iterations() const { return warmup_iterations + measured_iterations; }
  [[nodiscard]] bool operator==(const FabricSchedule& other) const = default;
};

}  // namespace capsim
