#include "whatif/detail/cluster.hpp"

namespace capsim::whatif::detail {

int Cluster::add_node(int pool) {
  const int id = static_cast<int>(nodes.size());
  PoolRuntime& runtime = this->pool(pool);
  Node n;
  n.pool = pool;
  n.slot = static_cast<int>(runtime.nodes.size());
  runtime.nodes.push_back(id);
  runtime.off_slots.insert(n.slot);
  ++runtime.in_state[static_cast<std::size_t>(NodeState::kOff)];
  nodes.push_back(std::move(n));
  return id;
}

void Cluster::set_state(int id, NodeState state) {
  Node& n = node(id);
  if (n.state == state)
    return;
  PoolRuntime& runtime = pool(n.pool);
  if (n.state == NodeState::kReady) {
    runtime.ready_by_free.erase({n.free_gpus, n.slot});
    runtime.ready_free_gpus -= n.free_gpus;
  }
  if (n.state == NodeState::kOff)
    runtime.off_slots.erase(n.slot);
  --runtime.in_state[static_cast<std::size_t>(n.state)];
  n.state = state;
  ++runtime.in_state[static_cast<std::size_t>(state)];
  if (state == NodeState::kOff)
    runtime.off_slots.insert(n.slot);
  if (state == NodeState::kReady) {
    runtime.ready_by_free.insert({n.free_gpus, n.slot});
    runtime.ready_free_gpus += n.free_gpus;
  }
}

void Cluster::set_free_gpus(int id, int free_gpus) {
  Node& n = node(id);
  if (n.state == NodeState::kReady) {
    PoolRuntime& runtime = pool(n.pool);
    runtime.ready_by_free.erase({n.free_gpus, n.slot});
    runtime.ready_by_free.insert({free_gpus, n.slot});
    runtime.ready_free_gpus += free_gpus - n.free_gpus;
  }
  n.free_gpus = free_gpus;
}

void Cluster::nominate(int id) {
  Node& n = node(id);
  if (!n.nominated)
    nominated_nodes.push_back(id);
  n.nominated = true;
}

void Cluster::clear_nominations() {
  for (int id : nominated_nodes)
    node(id).nominated = false;
  nominated_nodes.clear();
}

int Cluster::count(int pool, bool include_draining) const {
  const auto& in = this->pool(pool).in_state;
  const auto of = [&in](NodeState s) { return in[static_cast<std::size_t>(s)]; };
  return of(NodeState::kBooting) + of(NodeState::kReady) +
         (include_draining ? of(NodeState::kDraining) + of(NodeState::kShutdown) : 0);
}

int Cluster::booting(int pool) const {
  return this->pool(pool).in_state[static_cast<std::size_t>(NodeState::kBooting)];
}

int Cluster::off_slots(int pool) const {
  return this->pool(pool).in_state[static_cast<std::size_t>(NodeState::kOff)];
}

int Cluster::off_slot(int pool) const {
  const PoolRuntime& runtime = this->pool(pool);
  if (runtime.off_slots.empty())
    return -1;
  return runtime.nodes[static_cast<std::size_t>(*runtime.off_slots.begin())];
}

std::vector<int> Cluster::free_vector(int pool) const {
  std::vector<int> f;
  for (int id : this->pool(pool).nodes)
    f.push_back(node(id).free_gpus);
  return f;
}

int Cluster::live_gpus(const Job& job) const {
  int g = 0;
  for (const auto& p : job.pieces) {
    if (node(p.node).gen == p.gen)
      g += p.gpus;
  }
  return g;
}

}  // namespace capsim::whatif::detail
