#include "whatif/detail/sim_world.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

namespace capsim::whatif::detail {

namespace sg4 = simgrid::s4u;

struct SimWorld::Impl {
  std::vector<sg4::Host*> hosts;      // by node
  std::vector<sg4::ActorPtr> actors;  // by job: the running attempt's actor
  sg4::Host* control = nullptr;
  sg4::SemaphorePtr wake;

  [[nodiscard]] sg4::Host* host(int node) const { return hosts[static_cast<std::size_t>(node)]; }
};

SimWorld::SimWorld() : impl_(std::make_unique<Impl>()) {}

SimWorld::~SimWorld() = default;

void SimWorld::build(const WhatIf& whatif, Cluster& cluster) {
  auto* zone = sg4::create_star_zone("cluster");
  cluster.pools.resize(whatif.pools.size());
  for (std::size_t p = 0; p < whatif.pools.size(); ++p) {
    for (int i = 0; i < whatif.pools[p].max_nodes; ++i) {
      Node n;
      n.pool = static_cast<int>(p);
      impl_->hosts.push_back(zone->create_host(whatif.pools[p].name + "-" + std::to_string(i), 1.0)
                                 ->set_core_count(whatif.pools[p].gpus_per_node())
                                 ->seal());
      cluster.pools[p].nodes.push_back(static_cast<int>(cluster.nodes.size()));
      cluster.nodes.push_back(std::move(n));
    }
  }
  impl_->control = zone->create_host("control-plane", 1.0)->seal();
  zone->seal();
  impl_->wake = sg4::Semaphore::create(0);
  impl_->actors.resize(whatif.jobs.size());
}

double SimWorld::now() {
  return sg4::Engine::get_clock();
}

void SimWorld::turn_on(int node) {
  impl_->host(node)->turn_on();
}

void SimWorld::turn_off(int node) {
  sg4::Host* host = impl_->host(node);
  if (host->is_on())
    host->turn_off();
}

void SimWorld::start_control_loop(std::function<void()> body) {
  sg4::Actor::create("control-loop", impl_->control, std::move(body));
}

void SimWorld::start_job(int job, int node, std::function<void()> body) {
  impl_->actors[static_cast<std::size_t>(job)] =
      sg4::Actor::create("job", impl_->host(node), std::move(body));
}

void SimWorld::kill_job(int job) {
  sg4::ActorPtr& actor = impl_->actors[static_cast<std::size_t>(job)];
  if (actor) {
    actor->kill();
    actor = nullptr;
  }
}

void SimWorld::forget_job(int job) {
  impl_->actors[static_cast<std::size_t>(job)] = nullptr;
}

void SimWorld::sleep_for(double seconds) {
  sg4::this_actor::sleep_for(seconds);
}

void SimWorld::move_current_actor_to(int node) {
  sg4::this_actor::set_host(impl_->host(node));
}

void SimWorld::notify() {
  impl_->wake->release();
}

void SimWorld::wait_for_notice(double timeout_s) {
  if (timeout_s > 0.0)
    (void)impl_->wake->acquire_timeout(timeout_s);
  while (!impl_->wake->would_block())
    impl_->wake->acquire();
}

}  // namespace capsim::whatif::detail
