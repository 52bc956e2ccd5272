#include "sim/fabric_simulator.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <simgrid/s4u.hpp>

#include "sim/detail/job_replay.hpp"

namespace capsim::sim {
namespace sg4 = simgrid::s4u;
namespace {

using detail::PlatformPlan;
using detail::Sim;

// A fabric link as the report names and orders it: leaf uplinks, then NICs; by index, then
// direction. Returns nullopt for links inside a node (NVLink ports, which no two jobs share).
struct LinkName {
  int kind = 0;  // 0 leaf uplinks, 1 NIC
  int index = 0;
  int direction = 0;  // 0 up / out, 1 down / in
  std::string text;
  [[nodiscard]] auto key() const { return std::tie(kind, index, direction); }
};

// Reads the names Platform gives its links ("up_<leaf>_0", "nic_<key>") with the "_UP" /
// "_DOWN" suffix SimGrid adds to each direction of a split-duplex link.
std::optional<LinkName> name_link(const std::string& name, int nic_links_per_node) {
  const bool up = name.ends_with("_UP");
  if (!up && !name.ends_with("_DOWN"))
    return std::nullopt;
  const std::string base = name.substr(0, name.size() - (up ? 3 : 5));
  LinkName out;
  out.direction = up ? 0 : 1;
  if (base.starts_with("up_")) {
    out.kind = 0;
    out.index = std::stoi(base.substr(3));
    out.text = "leaf " + std::to_string(out.index) + " uplinks (" + (up ? "up" : "down") + ")";
    return out;
  }
  if (base.starts_with("nic_")) {
    out.kind = 1;
    out.index = std::stoi(base.substr(4));
    const int links = std::max(nic_links_per_node, 1);
    out.text = "node " + std::to_string(out.index / links) + " NIC " +
               std::to_string(out.index % links) + " (" + (up ? "out" : "in") + ")";
    return out;
  }
  return std::nullopt;
}

// Sums, per inter-node link, the bytes each job's flows put on it (the flows' routes, as the
// platform built them).
std::vector<LinkLoad> link_loads(const detail::Platform& platform,
                                 const std::vector<std::map<std::pair<int, int>, double>>& flows,
                                 double makespan_s) {
  std::map<std::tuple<int, int, int>, LinkLoad> loads;
  for (std::size_t j = 0; j < flows.size(); ++j) {
    for (const auto& [route, bytes] : flows[j]) {
      std::vector<sg4::Link*> links;
      platform.host(route.first)->route_to(platform.host(route.second), links, nullptr);
      for (const sg4::Link* link : links) {
        const auto named = name_link(link->get_name(), platform.spec().nic_links_per_node);
        if (!named)
          continue;
        LinkLoad& load = loads[named->key()];
        if (load.name.empty()) {
          load.name = named->text;
          load.capacity_bytes_per_s = link->get_bandwidth();
          load.job_bytes.assign(flows.size(), 0.0);
        }
        load.bytes += bytes;
        load.job_bytes[j] += bytes;
      }
    }
  }
  std::vector<LinkLoad> out;
  for (auto& [key, load] : loads) {
    load.utilization = makespan_s > 0.0 && load.capacity_bytes_per_s > 0.0
                           ? load.bytes / (load.capacity_bytes_per_s * makespan_s)
                           : 0.0;
    out.push_back(std::move(load));
  }
  return out;
}

// The platform every job shares: the links of the first job that leaves its node (all jobs
// see the same fabric; a one-node job's plan has no NICs).
detail::PlatformSpec shared_spec(const std::vector<PlatformPlan>& plans) {
  for (const PlatformPlan& plan : plans) {
    if (plan.spec.nic_links_per_node > 0)
      return plan.spec;
  }
  return plans.front().spec;
}

}  // namespace

FabricRun simulate_fabric(const ClusterSpec& fabric, const std::vector<FabricJobInput>& jobs,
                          const HardwareProfile& profile, SimStats* stats) {
  if (jobs.empty())
    throw std::invalid_argument("simulate_fabric: no jobs");
  detail::claim_engine();
  const auto wall0 = std::chrono::steady_clock::now();
  const detail::EngineArguments arguments = detail::engine_arguments();
  sg4::Engine engine(arguments.argc, arguments.argv);
  bool deadlock = false;
  detail::configure_engine(deadlock);

  // Every GPU simulated: a job's links are shared with jobs whose traffic differs from its own,
  // so no rank stands for another.
  std::vector<SimOptions> options(jobs.size());
  std::vector<std::unique_ptr<Sim>> sims;
  std::vector<PlatformPlan> plans;
  std::vector<std::map<std::pair<int, int>, double>> flows(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const FabricJob& job = *jobs[i].job;
    if (job.scenario.cluster.gpus_per_node != fabric.gpus_per_node)
      throw std::invalid_argument("simulate_fabric: job \"" + job.name + "\" has other nodes");
    options[i].exploit_symmetry = false;
    options[i].trace = jobs[i].trace;
    auto sim = std::make_unique<Sim>();
    detail::set_up_replay(*sim, job.scenario, *jobs[i].costs, profile, options[i]);
    sim->fabric_nodes = job.nodes;
    sim->flow_bytes = &flows[i];
    plans.push_back(detail::build_platform_spec(*sim, options[i]));
    sims.push_back(std::move(sim));
  }
  auto platform = std::make_shared<detail::Platform>(shared_spec(plans));
  std::size_t ranks = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    sims[i]->platform = platform;
    detail::create_ranks(*sims[i], options[i]);
    detail::wire_ranks(*sims[i], plans[i], options[i]);
    ranks += sims[i]->ranks.size();
  }
  platform->build();
  detail::configure_actor_stacks(ranks);
  for (auto& sim : sims) {
    detail::set_dp_route_latency(*sim);
    detail::launch_actors(*sim);
  }

  const auto wall1 = std::chrono::steady_clock::now();
  engine.run();
  const auto wall2 = std::chrono::steady_clock::now();
  if (deadlock)
    throw std::logic_error("event engine: the shared-fabric replay deadlocked (schedule bug)");

  FabricRun run;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    run.jobs.push_back(detail::collect_result(*sims[i], plans[i], options[i]));
    run.makespan_s = std::max(run.makespan_s, run.jobs.back().iteration_time_s);
    if (jobs[i].trace != nullptr)
      detail::sort_trace(*jobs[i].trace);
  }
  run.links = link_loads(*platform, flows, run.makespan_s);
  if (stats != nullptr) {
    stats->simulated_gpus = static_cast<int>(ranks);
    stats->activities = 0;
    for (const auto& sim : sims)
      stats->activities += sim->activities;
    stats->build_wall_s = std::chrono::duration<double>(wall1 - wall0).count();
    stats->run_wall_s = std::chrono::duration<double>(wall2 - wall1).count();
  }
  return run;
}

}  // namespace capsim::sim
