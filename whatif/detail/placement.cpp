#include "whatif/detail/placement.hpp"

#include <algorithm>
#include <cstddef>
#include <set>

namespace capsim::whatif::detail {
namespace {

// Returns the tokens/s table of a scenario job on the pool's instance type.
const std::map<int, double>& scenario_rates(const Cluster& c, const Job& job, int pool) {
  return c.w.scenario_models.at(job.rec->scenario_path).tokens_per_s.at(c.spec(pool).instance.name);
}

// Returns the sizes above the job's current one it could grow to, largest first.
std::vector<int> grow_sizes(const Cluster& c, const Job& job) {
  std::vector<int> out;
  const auto& r = *job.rec;
  const int gpn = c.spec(job.pool).gpus_per_node();
  if (r.scenario_path.empty()) {
    for (int g = r.max_gpus; g > job.gpus; --g) {
      if (g <= gpn || g % gpn == 0)
        out.push_back(g);
    }
  } else {
    for (auto it = job.rates->rbegin(); it != job.rates->rend(); ++it) {
      if (it->first > job.gpus)
        out.push_back(it->first);
    }
  }
  return out;
}

// The what-if fabric's choice of `need` whole free nodes (their positions in the pool, leaf =
// position / nodes_per_leaf): the shared-fabric placement policies (models/fabric_placement.hpp).
std::vector<int> fabric_choice(const WhatIfFabric& fabric, const std::vector<int>& free_positions,
                               int need) {
  PlacementRequest request;
  request.policy = fabric.placement;
  return choose_free_units(request, free_positions, static_cast<std::size_t>(need), 1,
                           fabric.nodes_per_leaf);
}

// The job's placement slowdown on the what-if fabric: its shape's (fabric_slowdown.hpp).
double placement_slowdown(const Cluster& c, const Job& job, int pool) {
  if (!c.w.fabric || job.rec->scenario_path.empty() || job.pieces.size() < 2)
    return 1.0;
  std::set<int> leaves;
  for (const Piece& p : job.pieces)
    leaves.insert(c.node(p.node).slot / c.w.fabric->nodes_per_leaf);
  const int count = static_cast<int>(job.pieces.size());
  const int held = std::min(nodes_per_leaf_of(count, static_cast<int>(leaves.size())),
                            c.w.fabric->nodes_per_leaf);
  return c.w.fabric_slowdowns.at(
      {job.rec->scenario_path, c.spec(pool).instance.name, job.gpus, held});
}

// Places a gang of `gpus` GPUs on whole free nodes of `pool`, given the slots of its ready
// nodes with every GPU free, ascending (all of them on a what-if fabric, whose placement policy
// chooses among them; otherwise at least the first ones needed, which are taken in order).
bool place_on_whole_nodes(const Cluster& c, int pool, int gpus, const std::vector<int>& free_slots,
                          std::vector<Piece>& out) {
  const auto& nodes = c.pool(pool).nodes;
  const int gpn = c.spec(pool).gpus_per_node();
  const int need = (gpus + gpn - 1) / gpn;
  if (need > static_cast<int>(free_slots.size()))
    return false;
  const std::vector<int> chosen =
      c.w.fabric ? fabric_choice(*c.w.fabric, free_slots, need)
                 : std::vector<int>(free_slots.begin(), free_slots.begin() + need);
  int rest = gpus;
  for (const int k : chosen) {
    out.push_back({nodes[static_cast<std::size_t>(k)], std::min(gpn, rest), 0});
    rest -= gpn;
  }
  return true;
}

}  // namespace

std::vector<int> sizes(const Cluster& c, const Job& job, int pool) {
  const auto& r = *job.rec;
  const int gpn = c.spec(pool).gpus_per_node();
  const int cap = c.spec(pool).max_nodes * gpn;
  std::vector<int> out;
  if (r.scenario_path.empty()) {
    if (!r.is_elastic()) {
      if (r.gpus <= cap)
        out.push_back(r.gpus);
      return out;
    }
    for (int g = std::min(r.gpus, cap); g >= r.min_gpus; --g) {
      if (g <= gpn || g % gpn == 0)
        out.push_back(g);
    }
  } else {
    const auto& rates = scenario_rates(c, job, pool);
    for (auto it = rates.rbegin(); it != rates.rend(); ++it) {
      if (it->first <= r.gpus && it->first >= r.min_gpus)
        out.push_back(it->first);
    }
  }
  return out;
}

bool find_place(const Cluster& c, int pool, int gpus, const std::vector<int>& free,
                std::vector<Piece>& out) {
  const auto& nodes = c.pool(pool).nodes;
  const int gpn = c.spec(pool).gpus_per_node();
  out.clear();
  if (gpus <= gpn) {
    int best = -1;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      if (!usable(c.node(nodes[k])) || free[k] < gpus)
        continue;
      if (best < 0 || free[k] < free[static_cast<std::size_t>(best)])
        best = static_cast<int>(k);
    }
    if (best < 0)
      return false;
    out.push_back({nodes[static_cast<std::size_t>(best)], gpus, 0});
    return true;
  }
  std::vector<int> free_slots;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (usable(c.node(nodes[k])) && free[k] == gpn)
      free_slots.push_back(static_cast<int>(k));
  }
  return place_on_whole_nodes(c, pool, gpus, free_slots, out);
}

bool find_ready_place(const Cluster& c, int pool, int gpus, std::vector<Piece>& out) {
  const PoolRuntime& runtime = c.pool(pool);
  const int gpn = c.spec(pool).gpus_per_node();
  out.clear();
  if (gpus <= gpn) {
    // Ordered by free GPUs, then slot: the first with room is find_place's best fit.
    const auto best = runtime.ready_by_free.lower_bound({gpus, -1});
    if (best == runtime.ready_by_free.end())
      return false;
    out.push_back({runtime.nodes[static_cast<std::size_t>(best->second)], gpus, 0});
    return true;
  }
  const int need = (gpus + gpn - 1) / gpn;
  std::vector<int> free_slots;  // ascending: the index orders equal free counts by slot
  for (auto it = runtime.ready_by_free.lower_bound({gpn, -1});
       it != runtime.ready_by_free.end() && it->first == gpn &&
       (c.w.fabric || static_cast<int>(free_slots.size()) < need);
       ++it) {
    free_slots.push_back(it->second);
  }
  return place_on_whole_nodes(c, pool, gpus, free_slots, out);
}

void take(Cluster& c, int j, int pool, const std::vector<Piece>& pieces, double now) {
  Job& job = c.job(j);
  job.pool = pool;
  job.gpus = 0;
  job.pieces.clear();
  for (auto p : pieces) {
    Node& n = c.node(p.node);
    c.set_free_gpus(p.node, n.free_gpus - p.gpus);
    n.jobs.push_back(j);
    n.unneeded_since = -1.0;
    p.gen = n.gen;
    job.pieces.push_back(p);
    job.gpus += p.gpus;
  }
  job.alloc_since = now;
  job.rates = nullptr;
  if (!job.rec->scenario_path.empty())
    job.rates = &scenario_rates(c, job, pool);
  job.fabric_slowdown = placement_slowdown(c, job, pool);
}

void release_pieces(Cluster& c, int j) {
  Job& job = c.job(j);
  for (const auto& p : job.pieces) {
    Node& n = c.node(p.node);
    if (n.gen != p.gen)
      continue;  // the node went away meanwhile
    c.set_free_gpus(p.node, n.free_gpus + p.gpus);
    n.jobs.erase(std::find(n.jobs.begin(), n.jobs.end(), j));
  }
  job.pieces.clear();
  job.gpus = 0;
}

bool find_resize(const Cluster& c, const Job& job, bool others_wait, std::vector<Piece>& place) {
  const int pool = job.pool;
  // Free GPUs of the pool plus the job's own (on nodes still usable: a cordoned node's GPUs
  // cannot be reused).
  auto free = c.free_vector(pool);
  const auto& nodes = c.pool(pool).nodes;
  for (const auto& p : job.pieces) {
    const auto k =
        static_cast<std::size_t>(std::find(nodes.begin(), nodes.end(), p.node) - nodes.begin());
    free[k] += p.gpus;
  }
  std::vector<int> candidates;
  if (others_wait) {
    const auto options = sizes(c, job, pool);
    if (!options.empty() && options.back() < job.gpus)
      candidates.push_back(options.back());
  } else {
    candidates = grow_sizes(c, job);
    // Growing pays a restart; only worth it when the job has well over that left to run.
    if (job.remaining / rate(job) < 4 * c.w.failures.restart_cost_s)
      candidates.clear();
  }
  for (int g : candidates) {
    if (find_place(c, pool, g, free, place))
      return true;
  }
  return false;
}

}  // namespace capsim::whatif::detail
