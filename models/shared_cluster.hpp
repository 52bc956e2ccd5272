#pragma once

#include <string>
#include <vector>

#include "models/cluster_spec.hpp"
#include "models/fabric_placement.hpp"
#include "models/fabric_schedule.hpp"
#include "models/scenario.hpp"

namespace capsim {

// One training job of a shared fabric: its scenario (the fabric's hardware with the job's node
// count as its cluster) and the fabric nodes it runs on, node k of the job on nodes[k].
struct FabricJob {
  std::string name;
  Scenario scenario;
  PlacementPolicy policy = PlacementPolicy::kExplicit;  // how `nodes` were chosen
  std::vector<int> nodes;
};

// The input of `capsim simulate CLUSTER.json`: several jobs on one cluster's network
// (docs/cluster.md). Every job's scenario shares `fabric`'s GPU, links and profile.
struct SharedCluster {
  std::string name;
  ClusterSpec fabric;
  std::string profile_path;  // resolved; empty: the fabric's default profile
  std::vector<FabricJob> jobs;
  FabricSchedule schedule;  // how the shared run measures each job
};

}  // namespace capsim
