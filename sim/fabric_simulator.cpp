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

#include "estimate/analytic_estimator.hpp"

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
  int rail = 0;       // rail-optimized leaves: the rail switch
  int direction = 0;  // 0 up / out, 1 down / in
  std::string text;
  [[nodiscard]] auto key() const { return std::tie(kind, index, rail, direction); }
};

// Reads the names Platform gives its links ("up_<leaf>_<rail>", "nic_<key>") with the "_UP" /
// "_DOWN" suffix SimGrid adds to each direction of a split-duplex link.
std::optional<LinkName> name_link(const std::string& name, int nic_links_per_node, bool rails) {
  const bool up = name.ends_with("_UP");
  if (!up && !name.ends_with("_DOWN"))
    return std::nullopt;
  const std::string base = name.substr(0, name.size() - (up ? 3 : 5));
  LinkName out;
  out.direction = up ? 0 : 1;
  if (base.starts_with("up_")) {
    out.kind = 0;
    out.index = std::stoi(base.substr(3));
    out.rail = std::stoi(base.substr(base.rfind('_') + 1));
    out.text = "leaf " + std::to_string(out.index) +
               (rails ? " rail " + std::to_string(out.rail) : std::string()) + " uplinks (" +
               (up ? "up" : "down") + ")";
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
  std::map<std::tuple<int, int, int, int>, LinkLoad> loads;
  for (std::size_t j = 0; j < flows.size(); ++j) {
    for (const auto& [route, bytes] : flows[j]) {
      std::vector<sg4::Link*> links;
      platform.host(route.first)->route_to(platform.host(route.second), links, nullptr);
      for (const sg4::Link* link : links) {
        const auto named = name_link(link->get_name(), platform.spec().nic_links_per_node,
                                     platform.spec().rail_uplinks);
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

// Returns the mean of a job's measured iterations: its time and every part of its breakdown
// (the busiest stage is the last iteration's).
SimulationResult mean_of(const std::vector<SimulationResult>& iterations, const Sim& sim) {
  SimulationResult mean = iterations.back();
  const auto n = static_cast<double>(iterations.size());
  const auto average = [&](auto field) {
    double sum = 0.0;
    for (const SimulationResult& r : iterations)
      sum += field(r);
    return sum / n;
  };
  TimeBreakdown& b = mean.breakdown;
  mean.iteration_time_s = average([](const auto& r) { return r.iteration_time_s; });
  b.compute_s = average([](const auto& r) { return r.breakdown.compute_s; });
  b.tp_comm_exposed_s = average([](const auto& r) { return r.breakdown.tp_comm_exposed_s; });
  b.cp_comm_exposed_s = average([](const auto& r) { return r.breakdown.cp_comm_exposed_s; });
  b.ep_comm_exposed_s = average([](const auto& r) { return r.breakdown.ep_comm_exposed_s; });
  b.pp_comm_exposed_s = average([](const auto& r) { return r.breakdown.pp_comm_exposed_s; });
  b.dp_comm_exposed_s = average([](const auto& r) { return r.breakdown.dp_comm_exposed_s; });
  b.bubble_s = average([](const auto& r) { return r.breakdown.bubble_s; });
  b.optimizer_s = average([](const auto& r) { return r.breakdown.optimizer_s; });
  b.other_s = average([](const auto& r) { return r.breakdown.other_s; });
  for (std::size_t s = 0; s < b.stage_busy_s.size(); ++s)
    b.stage_busy_s[s] = average([s](const auto& r) { return r.breakdown.stage_busy_s.at(s); });
  estimate::finish_result(*sim.scenario, *sim.costs, mean);
  return mean;
}

// One job's iterations on the shared fabric: a driver actor starts each iteration once the
// previous one's actors all ended, and keeps the job iterating until every job ran its
// schedule, so that no measured iteration sees a neighbour that already stopped.
struct JobDriver {
  Sim* sim = nullptr;
  const PlatformPlan* plan = nullptr;
  const SimOptions* options = nullptr;
  double start_s = 0.0;
  int iterations_done = 0;
  std::vector<SimulationResult> measured;
};

void drive(JobDriver& job, const FabricSchedule& schedule, int& jobs_done, int jobs) {
  // The aligned single iteration is the worst case as it stands: a job that ends it stops.
  const bool keep_loading = !(schedule == FabricSchedule::aligned());
  sg4::this_actor::sleep_until(job.start_s);
  for (;;) {
    if (job.iterations_done == 0) {
      job.sim->iteration_start_s = sg4::Engine::get_clock();
      detail::launch_actors(*job.sim);
    } else {
      detail::relaunch_actors(*job.sim);
    }
    for (const detail::ActorPtr& actor : detail::rank_actors(*job.sim))
      actor->join();
    ++job.iterations_done;
    if (job.iterations_done > schedule.warmup_iterations &&
        job.iterations_done <= schedule.iterations())
      job.measured.push_back(detail::collect_result(*job.sim, *job.plan, *job.options));
    if (job.iterations_done == schedule.iterations())
      ++jobs_done;
    if (job.iterations_done >= schedule.iterations() && (!keep_loading || jobs_done == jobs))
      return;
  }
}

// As with one job (sim/iteration_simulator.cpp), the engine, the jobs' replay state and their
// actors live until the process ends, which frees them at once rather than one by one.
struct FabricProcess {
  explicit FabricProcess(const detail::EngineArguments& arguments)
      : engine(arguments.argc, arguments.argv) {}
  sg4::Engine engine;
  bool deadlock = false;
  std::vector<SimOptions> options;
  std::vector<std::unique_ptr<Sim>> sims;
  std::vector<PlatformPlan> plans;
  std::vector<std::map<std::pair<int, int>, double>> flows;
  std::vector<JobDriver> drivers;
  int jobs_done = 0;
};
FabricProcess* g_fabric = nullptr;

}  // namespace

FabricRun simulate_fabric(const ClusterSpec& fabric, const std::vector<FabricJobInput>& jobs,
                          const HardwareProfile& profile, const FabricSchedule& schedule,
                          SimStats* stats) {
  if (jobs.empty())
    throw std::invalid_argument("simulate_fabric: no jobs");
  if (schedule.measured_iterations < 1 || schedule.warmup_iterations < 0)
    throw std::invalid_argument("simulate_fabric: no measured iteration");
  detail::claim_engine();
  const auto wall0 = std::chrono::steady_clock::now();
  g_fabric = new FabricProcess(detail::engine_arguments());
  sg4::Engine& engine = g_fabric->engine;
  bool& deadlock = g_fabric->deadlock;
  detail::configure_engine(deadlock);

  // Every GPU simulated: a job's links are shared with jobs whose traffic differs from its own,
  // so no rank stands for another.
  std::vector<SimOptions>& options = g_fabric->options;
  options.resize(jobs.size());
  std::vector<std::unique_ptr<Sim>>& sims = g_fabric->sims;
  std::vector<PlatformPlan>& plans = g_fabric->plans;
  std::vector<std::map<std::pair<int, int>, double>>& flows = g_fabric->flows;
  flows.resize(jobs.size());
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
  detail::configure_actor_stacks(ranks + jobs.size());
  std::vector<JobDriver>& drivers = g_fabric->drivers;
  drivers.resize(jobs.size());
  int& jobs_done = g_fabric->jobs_done;
  const int job_count = static_cast<int>(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    detail::set_dp_route_latency(*sims[i]);
    drivers[i] = {sims[i].get(), &plans[i], &options[i], jobs[i].start_s, 0, {}};
    JobDriver* driver = &drivers[i];
    sg4::Actor::create("job" + std::to_string(i), platform->host(sims[i]->ranks.front()->gpu),
                       [driver, &schedule, &jobs_done, job_count] {
                         drive(*driver, schedule, jobs_done, job_count);
                       });
  }

  const auto wall1 = std::chrono::steady_clock::now();
  engine.run();
  const auto wall2 = std::chrono::steady_clock::now();
  if (deadlock)
    throw std::logic_error("event engine: the shared-fabric replay deadlocked (schedule bug)");

  FabricRun run;
  run.makespan_s = sg4::Engine::get_clock();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    run.jobs.push_back(drivers[i].measured.size() == 1 ? drivers[i].measured.front()
                                                       : mean_of(drivers[i].measured, *sims[i]));
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
