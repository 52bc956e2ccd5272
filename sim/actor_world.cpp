#include "sim/actor_world.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

namespace capsim::sim {

namespace sg4 = simgrid::s4u;

namespace {

// SimGrid's engine wants a command line: quiet logs and 256 KiB actor stacks.
std::unique_ptr<sg4::Engine> quiet_engine() {
  int argc = 3;
  std::string a0 = "capsim-whatif", a1 = "--log=root.thres:critical",
              a2 = "--cfg=contexts/stack-size:256";
  std::array<char*, 4> argv{a0.data(), a1.data(), a2.data(), nullptr};
  return std::make_unique<sg4::Engine>(&argc, argv.data());
}

}  // namespace

struct ActorWorld::Impl {
  std::unique_ptr<sg4::Engine> engine = quiet_engine();  // first: outlives the handles below
  std::vector<sg4::Host*> hosts;
  std::vector<sg4::ActorPtr> actors;  // by slot
  sg4::Host* control = nullptr;
  sg4::SemaphorePtr wake;

  [[nodiscard]] sg4::Host* host(int id) const { return hosts[static_cast<std::size_t>(id)]; }
};

ActorWorld::ActorWorld() : impl_(std::make_unique<Impl>()) {}

ActorWorld::~ActorWorld() = default;

void ActorWorld::build(const std::vector<HostSpec>& hosts, int actor_slots) {
  auto* zone = sg4::create_star_zone("cluster");
  for (const HostSpec& h : hosts)
    impl_->hosts.push_back(zone->create_host(h.name, 1.0)->set_core_count(h.cores)->seal());
  impl_->control = zone->create_host("control-plane", 1.0)->seal();
  zone->seal();
  impl_->wake = sg4::Semaphore::create(0);
  impl_->actors.resize(static_cast<std::size_t>(actor_slots));
}

void ActorWorld::run() {
  impl_->engine->run();
}

double ActorWorld::now() {
  return sg4::Engine::get_clock();
}

void ActorWorld::turn_on(int host) {
  impl_->host(host)->turn_on();
}

void ActorWorld::turn_off(int host) {
  sg4::Host* h = impl_->host(host);
  if (h->is_on())
    h->turn_off();
}

void ActorWorld::start_control_loop(std::function<void()> body) {
  sg4::Actor::create("control-loop", impl_->control, std::move(body));
}

void ActorWorld::start_actor(int slot, int host, std::function<void()> body) {
  impl_->actors[static_cast<std::size_t>(slot)] =
      sg4::Actor::create("job", impl_->host(host), std::move(body));
}

void ActorWorld::kill_actor(int slot) {
  sg4::ActorPtr& actor = impl_->actors[static_cast<std::size_t>(slot)];
  if (actor) {
    actor->kill();
    actor = nullptr;
  }
}

void ActorWorld::forget_actor(int slot) {
  impl_->actors[static_cast<std::size_t>(slot)] = nullptr;
}

void ActorWorld::sleep_for(double seconds) {
  sg4::this_actor::sleep_for(seconds);
}

void ActorWorld::move_current_actor_to(int host) {
  sg4::this_actor::set_host(impl_->host(host));
}

void ActorWorld::notify() {
  impl_->wake->release();
}

void ActorWorld::wait_for_notice(double timeout_s) {
  if (timeout_s > 0.0)
    (void)impl_->wake->acquire_timeout(timeout_s);
  while (!impl_->wake->would_block())
    impl_->wake->acquire();
}

}  // namespace capsim::sim
