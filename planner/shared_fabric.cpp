#include "planner/shared_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "planner/plan.hpp"
#include "planner/planner.hpp"
#include "sim/forked_iterations.hpp"

#include "io/profile_io.hpp"
#include "io/rounding.hpp"
#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

nlohmann::json placement_json(const SharedFabricPlacement& p) {
  const auto g = [](double v) { return io::round_significant(v, 6); };
  return {{"nodes_per_leaf", p.nodes_per_leaf},
          {"slowdown", g(p.slowdown)},
          {"days", g(p.wall_time_s / 86400.0)},
          {"cost_usd", g(p.cost_usd)}};
}

std::string placement_text(const char* name, const SharedFabricPlacement& p) {
  return io::printf_string("%s (%d node(s) per leaf) %.3fx, %.1f days, $%.0f", name,
                           p.nodes_per_leaf, p.slowdown, p.wall_time_s / 86400.0, p.cost_usd);
}

}  // namespace

SharedFabric read_shared_fabric(io::JsonReader& r) {
  SharedFabric out;
  out.nodes_per_leaf = static_cast<int>(r.required_int("nodes_per_leaf", 1, 1 << 20));
  out.oversubscription = r.required_number("oversubscription", 1.0, 64.0);
  r.finish();
  return out;
}

std::optional<SharedFabricEffect> assess_shared_fabric(const PlanSpec& plan,
                                                       const PlanResult& result) {
  if (!plan.shared_fabric || result.ranked.empty() || !result.ranked.front().meets_target)
    return std::nullopt;
  const RankedEntry& best = result.ranked.front();
  const Scenario scenario = candidate_scenario(plan, result.candidates[best.candidate].candidate);
  const HardwareProfile profile = io::resolve_profile(scenario);
  const int nodes = scenario.cluster.num_nodes;
  const SharedFabric& fabric = *plan.shared_fabric;
  SharedFabricEffect effect;
  effect.packed.nodes_per_leaf = std::min(nodes, fabric.nodes_per_leaf);
  effect.fragmented.nodes_per_leaf = 1;
  const std::vector<double> times = sim::simulate_iteration_times(
      {{scenario, profile},
       {sim::on_leaf_share(scenario, effect.packed.nodes_per_leaf, fabric.oversubscription),
        profile},
       {sim::on_leaf_share(scenario, 1, fabric.oversubscription), profile}},
      2);
  for (auto [placement, time_s] :
       {std::pair{&effect.packed, times[1]}, std::pair{&effect.fragmented, times[2]}}) {
    // One node: no flow leaves it, whatever the fabric.
    placement->slowdown = nodes > 1 && times[0] > 0.0 ? time_s / times[0] : 1.0;
    // The run's length and its node-hours stretch with the iteration (the goodput model's
    // losses scale with the run's length to first order).
    placement->wall_time_s = best.wall_time_s * placement->slowdown;
    placement->cost_usd = best.cost_usd * placement->slowdown;
  }
  return effect;
}

nlohmann::json shared_fabric_json(const SharedFabric& fabric, const SharedFabricEffect& effect) {
  return {{"nodes_per_leaf", fabric.nodes_per_leaf},
          {"oversubscription", io::round_significant(fabric.oversubscription, 6)},
          {"packed", placement_json(effect.packed)},
          {"fragmented", placement_json(effect.fragmented)}};
}

std::string shared_fabric_line(const SharedFabric& fabric, const SharedFabricEffect& effect) {
  return io::printf_string("shared fabric (leaves of %d nodes, %.3g:1 oversubscribed): the winner ",
                           fabric.nodes_per_leaf, fabric.oversubscription) +
         placement_text("packed", effect.packed) + "; " +
         placement_text("fragmented", effect.fragmented) + "\n";
}

}  // namespace capsim::planner
