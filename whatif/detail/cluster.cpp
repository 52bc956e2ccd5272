#include "whatif/detail/cluster.hpp"

namespace capsim::whatif::detail {

int Cluster::count(int pool, bool include_draining) const {
  int c = 0;
  for (int id : this->pool(pool).nodes) {
    const auto s = node(id).state;
    if (s == NodeState::kBooting || s == NodeState::kReady ||
        (include_draining && (s == NodeState::kDraining || s == NodeState::kShutdown))) {
      ++c;
    }
  }
  return c;
}

int Cluster::booting(int pool) const {
  int c = 0;
  for (int id : this->pool(pool).nodes)
    c += node(id).state == NodeState::kBooting ? 1 : 0;
  return c;
}

int Cluster::off_slots(int pool) const {
  int c = 0;
  for (int id : this->pool(pool).nodes)
    c += node(id).state == NodeState::kOff ? 1 : 0;
  return c;
}

int Cluster::off_slot(int pool) const {
  for (int id : this->pool(pool).nodes) {
    if (node(id).state == NodeState::kOff)
      return id;
  }
  return -1;
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
