#include "whatif/fabric_slowdown.hpp"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/forked_iterations.hpp"

#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "whatif/throughput.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

WhatIfFabric read_whatif_fabric(io::JsonReader& r) {
  WhatIfFabric out;
  out.nodes_per_leaf = static_cast<int>(r.required_int("nodes_per_leaf", 1, 1 << 20));
  out.oversubscription = r.optional_number("oversubscription", 1.0, 1.0, 64.0);
  out.placement = *placement_policy_from_string(
      r.optional_enum("placement", "packed", {"packed", "spread", "leaf-aligned"}));
  r.finish();
  return out;
}

int nodes_per_leaf_of(int nodes, int leaves) {
  leaves = std::clamp(leaves, 1, std::max(nodes, 1));
  return (nodes + leaves - 1) / leaves;
}

void fill_fabric_slowdowns(WhatIf& whatif) {
  if (!whatif.fabric)
    throw std::logic_error("fill_fabric_slowdowns: the what-if has no fabric");
  const WhatIfFabric& fabric = *whatif.fabric;
  // Per run: the shape whose time it gives, none for the non-blocking baseline of the shapes
  // after it.
  std::vector<sim::ScenarioRun> runs;
  std::vector<std::optional<FabricShape>> shapes;
  for (const auto& [path, model] : whatif.scenario_models) {
    const Scenario base = io::load_scenario(path);
    for (const NodePool& pool : whatif.pools) {
      const auto rates = model.tokens_per_s.find(pool.instance.name);
      if (rates == model.tokens_per_s.end())
        continue;
      const int gpn = pool.gpus_per_node();
      for (const auto& entry : rates->second) {
        const int gpus = entry.first;
        const int nodes = gpus / gpn;
        if (nodes < 2)
          continue;  // one node: no flow leaves it
        const Scenario scaled = scale_scenario(base, pool.instance, gpus);
        // A job of n nodes over s leaves holds at most ceil(n / s) of one leaf's nodes; shapes
        // with the same count load the uplinks alike and run once.
        std::set<int> per_leaf;
        for (int leaves = 1; leaves <= nodes; ++leaves)
          per_leaf.insert(std::min(nodes_per_leaf_of(nodes, leaves), fabric.nodes_per_leaf));
        const HardwareProfile profile = io::resolve_profile(scaled);
        runs.push_back({scaled, profile});
        shapes.emplace_back();
        for (const int held : per_leaf) {
          runs.push_back({sim::on_leaf_share(scaled, held, fabric.oversubscription), profile});
          shapes.emplace_back(FabricShape{path, pool.instance.name, gpus, held});
        }
      }
    }
  }
  const std::vector<double> times = sim::simulate_iteration_times(runs, 2);
  double baseline_s = 0.0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!shapes[i]) {
      baseline_s = times[i];
      continue;
    }
    whatif.fabric_slowdowns[*shapes[i]] = baseline_s > 0.0 ? times[i] / baseline_s : 1.0;
  }
}

}  // namespace capsim::whatif
