#pragma once

#include <string>
#include <vector>

#include "models/fabric_schedule.hpp"
#include "models/simulation_result.hpp"

namespace capsim {

// The traffic one link of a shared fabric carried during the jobs' iterations, one direction.
// Bytes and bytes/s; utilisation is carried bytes over capacity x the run's makespan.
struct LinkLoad {
  std::string name;  // "leaf 0 uplinks (up)", "node 3 NIC 1 (out)"
  double capacity_bytes_per_s = 0.0;
  double bytes = 0.0;
  double utilization = 0.0;
  // Per job (in the cluster file's order): the bytes its flows put on the link.
  std::vector<double> job_bytes;
};

// One job of a shared fabric: its iteration simulated alone (the same placement, the other
// jobs' nodes idle) and together with every other job (the mean of its measured iterations).
struct JobContention {
  std::string name;
  std::vector<int> nodes;
  SimulationResult alone;
  SimulationResult shared;
  // Returns shared over alone iteration time (1: unaffected by its neighbours).
  [[nodiscard]] double slowdown() const {
    return alone.iteration_time_s > 0.0 ? shared.iteration_time_s / alone.iteration_time_s : 1.0;
  }
};

// The outcome of `capsim simulate CLUSTER.json`: per job alone and shared, and the inter-node
// links (NICs and leaf uplinks) of the shared run that carried traffic, by name.
struct FabricContention {
  std::string name;
  std::vector<JobContention> jobs;
  std::vector<LinkLoad> links;
  double makespan_s = 0.0;  // the shared run: when its last iteration ends
  FabricSchedule schedule;  // how the shared run measured each job
};

}  // namespace capsim
