#include "sim/detail/platform.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>

namespace capsim::sim::detail {
namespace sg4 = simgrid::s4u;

namespace {

// A flat SimGrid zone of explicit host-to-host routes that keeps only the routes added. SimGrid's
// FullZone holds an n x n table of route pointers, zeroed at the first route: 2 GiB at 16,384
// GPUs, though each rank talks to a few peers. A lookup here is one table probe and returns the
// same links and latency sum, in the same order, as FullZone's (a symmetrical route's way back
// takes the links in reverse, each in its other direction). No gateways: hosts only.
class SparseRouteZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  // A new zone's s4u handle; SimGrid owns the zone and frees it with the platform.
  static simgrid::s4u::NetZone* create(const std::string& name) {
    return (new SparseRouteZone(name))->get_iface();
  }

  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override {
    const Slot& slot = slot_of(key(src, dst));
    if (slot.key == kEmpty)
      throw std::logic_error("platform: no route from " + src->get_name() + " to " +
                             dst->get_name());
    const HopSpan span = slot.span;
    into->link_list_.reserve(into->link_list_.size() + span.count);
    for (const Hop& hop : std::span(hops_).subspan(span.first, span.count)) {
      into->link_list_.push_back(hop.link);
      if (latency != nullptr)
        *latency += hop.latency_s;
    }
  }

  void add_route(simgrid::kernel::routing::NetPoint* src, simgrid::kernel::routing::NetPoint* dst,
                 simgrid::kernel::routing::NetPoint* gw_src,
                 simgrid::kernel::routing::NetPoint* gw_dst,
                 const std::vector<simgrid::s4u::LinkInRoute>& links, bool symmetrical) override {
    if (gw_src != nullptr || gw_dst != nullptr)
      throw std::logic_error("platform: a sparse route zone holds no gateway routes");
    std::vector<double> latencies;
    latencies.reserve(links.size());
    for (const simgrid::s4u::LinkInRoute& link : links)
      latencies.push_back(link.get_link()->get_latency());
    if (symmetrical && src != dst) {
      std::vector<simgrid::kernel::resource::StandardLinkImpl*> back =
          get_link_list_impl(links, true);
      std::reverse(back.begin(), back.end());
      store(key(dst, src), back, {latencies.rbegin(), latencies.rend()});
    }
    store(key(src, dst), get_link_list_impl(links, false), latencies);
  }

 private:
  explicit SparseRouteZone(const std::string& name) : NetZoneImpl(name) { grow(); }

  // One link of a route and its latency; every route's hops lie in one array, in route order,
  // so a lookup touches one table slot and one run of hops.
  struct Hop {
    simgrid::kernel::resource::StandardLinkImpl* link;
    double latency_s;
  };
  struct HopSpan {
    std::size_t first;
    std::size_t count;
  };

  static std::uint64_t key(const simgrid::kernel::routing::NetPoint* src,
                           const simgrid::kernel::routing::NetPoint* dst) {
    return (static_cast<std::uint64_t>(src->id()) << 32) | static_cast<std::uint64_t>(dst->id());
  }

  // An open-addressing table (linear probing, a power-of-two size at most half full): a lookup
  // reads one slot, with no division and no node to follow.
  struct Slot {
    std::uint64_t key;
    HopSpan span;
  };
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // ids are 32-bit: no key is this

  Slot& slot_of(std::uint64_t route_key) {
    const std::size_t mask = slots_.size() - 1;
    // Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): the product's upper half picks the slot.
    std::size_t i = static_cast<std::size_t>((route_key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
    while (slots_[i].key != route_key && slots_[i].key != kEmpty)
      i = (i + 1) & mask;
    return slots_[i];
  }

  void store(std::uint64_t route_key,
             const std::vector<simgrid::kernel::resource::StandardLinkImpl*>& links,
             const std::vector<double>& latencies_s) {
    if (2 * (stored_routes_ + 1) > slots_.size())
      grow();
    Slot& slot = slot_of(route_key);
    if (slot.key == kEmpty)
      ++stored_routes_;
    slot = {route_key, {hops_.size(), links.size()}};
    for (std::size_t i = 0; i < links.size(); ++i)
      hops_.push_back({links[i], latencies_s[i]});
  }

  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(64, 2 * slots_.size()), Slot{kEmpty, {0, 0}});
    old.swap(slots_);
    for (const Slot& slot : old) {
      if (slot.key != kEmpty)
        slot_of(slot.key) = slot;
    }
  }

  std::vector<Slot> slots_;
  std::size_t stored_routes_ = 0;
  std::vector<Hop> hops_;
};

}  // namespace
namespace {

sg4::LinkInRoute up(sg4::Link* l) {
  return {l, sg4::LinkInRoute::Direction::UP};
}
sg4::LinkInRoute down(sg4::Link* l) {
  return {l, sg4::LinkInRoute::Direction::DOWN};
}

}  // namespace

void Platform::add_route(int from, int to, bool via_uplinks) {
  if (to >= 0 && from > to)
    std::swap(from, to);
  bool& crossing = routes_[{from, to}];
  crossing = crossing || via_uplinks;
}

sg4::Link* Platform::nic_link(int gpu) {
  auto* zone = zone_of(gpu);
  const int g = spec_.gpus_per_node;
  const int links = spec_.nic_links_per_node;
  // NIC link l serves GPUs [l*g/links, (l+1)*g/links) when NICs are fewer than GPUs (p4d: one
  // NIC per two GPUs); with more NICs than GPUs they are aggregated per GPU (p5: 4 x 100G each).
  const int key = spec_.reduced ? gpu : node_of(gpu) * links + (gpu % g) * links / g;
  auto it = nics_.find(key);
  if (it != nics_.end())
    return it->second;
  double bw = spec_.nic_link_bytes_per_s;
  if (spec_.reduced)
    bw *= static_cast<double>(links) / g;  // this GPU's share of its NIC
  auto* l = zone->create_split_duplex_link("nic_" + std::to_string(key), bw);
  l->set_latency(spec_.nic_latency_s)->seal();
  nics_.emplace(key, l);
  return l;
}

sg4::Link* Platform::uplink_link(sg4::NetZone* zone, std::pair<int, int> key, double bytes_per_s) {
  auto it = uplinks_.find(key);
  if (it != uplinks_.end())
    return it->second;
  auto* l = zone->create_split_duplex_link(
      "up_" + std::to_string(key.first) + "_" + std::to_string(key.second), bytes_per_s);
  l->set_latency(0.0)->seal();
  uplinks_.emplace(key, l);
  return l;
}

sg4::Link* Platform::uplink(int gpu, bool dp_ring) {
  if (spec_.uplink_bytes_per_s_per_node <= 0.0)
    return nullptr;
  // A leaf's uplinks do not depend on how many of its ports are populated.
  const double leaf_bw = spec_.uplink_bytes_per_s_per_node * std::max(spec_.nodes_per_leaf, 1);
  const int leaf = node_of(gpu) / std::max(spec_.nodes_per_leaf, 1);
  if (!spec_.reduced && spec_.rail_uplinks) {
    // A flow leaves on its GPU's rail: the rail switch its NIC link is cabled to.
    const int links = std::max(spec_.nic_links_per_node, 1);
    const int rail = (gpu % spec_.gpus_per_node) * links / spec_.gpus_per_node;
    return uplink_link(zone_of(gpu), {leaf, rail}, leaf_bw / links);
  }
  if (!spec_.reduced)
    return uplink_link(zone_of(gpu), {leaf, 0}, leaf_bw);
  // Reduced run: the simulated GPU stands for the GPUs of its leaf whose flows of its class
  // leave the leaf (PP sends: Cp of them; DP ring flows: Cd), so each class gets leaf / C. When
  // the same GPUs send both classes (e.g. one node per leaf) the two share one link, exactly as
  // in the full run; otherwise each class has its own, exact while the classes take turns and
  // optimistic while they overlap (docs/simulator.md).
  const bool shared = spec_.classes_leave_from_the_same_gpus;
  const int crossing = dp_ring ? spec_.dp_crossing_gpus_per_leaf : spec_.pp_crossing_gpus_per_leaf;
  return uplink_link(zone_of(gpu), {gpu, shared || !dp_ring ? 0 : 1},
                     leaf_bw / std::max(crossing, 1));
}

void Platform::create_gpu_hosts() {
  for (const int gpu : gpus_) {
    auto* zone = zone_of(gpu);
    sg4::Host* h = zone->create_host("gpu" + std::to_string(gpu), kGpuWorkPerSecond);
    h->seal();
    hosts_.emplace(gpu, h);
    auto* l =
        zone->create_split_duplex_link("nvl_" + std::to_string(gpu), spec_.nvlink_bytes_per_s);
    l->set_latency(spec_.nvlink_latency_s)->seal();
    nvlinks_.emplace(gpu, l);
  }
}

// The NVLink mirror `mirror` of GPU `gpu`: up and down the GPU's own NVSwitch port.
void Platform::add_nvlink_mirror_route(int gpu, int mirror) {
  auto* zone = zone_of(gpu);
  if (kNvlinkMirrorBase - mirror != gpu)
    throw std::logic_error("platform: an NVLink mirror serves only its own GPU");
  sg4::Host* m = zone->create_host("nvmirror" + std::to_string(gpu), 1.0);
  m->seal();
  hosts_.emplace(mirror, m);
  const std::vector<sg4::LinkInRoute> links{up(nvlinks_.at(gpu)), down(nvlinks_.at(gpu))};
  zone->add_route(hosts_.at(gpu)->get_netpoint(), m->get_netpoint(), nullptr, nullptr, links,
                  false);
}

// The NIC mirror `mirror` of GPU `gpu`: up its NIC, through the leaf's uplinks when the ring
// leaves the leaf, and down its NIC.
void Platform::add_nic_mirror_route(int gpu, int mirror, bool via_uplinks) {
  auto* zone = zone_of(gpu);
  if (-1 - mirror != gpu)
    throw std::logic_error("platform: a mirror serves only its own GPU");
  sg4::Host* m = zone->create_host("mirror" + std::to_string(gpu), 1.0);
  m->seal();
  hosts_.emplace(mirror, m);
  std::vector<sg4::LinkInRoute> links{up(nic_link(gpu))};
  if (auto* u = via_uplinks ? uplink(gpu, true) : nullptr) {
    links.push_back(up(u));
    links.push_back(down(u));
  }
  links.push_back(down(nic_link(gpu)));
  zone->add_route(hosts_.at(gpu)->get_netpoint(), m->get_netpoint(), nullptr, nullptr, links,
                  false);
}

// A route between two GPUs, both directions: over NVLink inside an NVLink domain, else NIC to
// NIC (through the leaves' uplinks when it leaves its leaf).
void Platform::add_gpu_route(int a, int b, bool via_uplinks) {
  if (!hosts_.contains(b))
    throw std::logic_error("platform: route to unknown GPU");
  if (group_gpus_ > 0 && a / group_gpus_ != b / group_gpus_) {
    add_gateway_route(a);
    add_gateway_route(b);
    return;
  }
  auto* zone = zone_of(a);
  std::vector<sg4::LinkInRoute> links;
  if (domain_of(a) == domain_of(b)) {
    links = {up(nvlinks_.at(a)), down(nvlinks_.at(b))};
  } else {
    if (spec_.nic_links_per_node <= 0)
      throw std::logic_error("platform: no inter-node fabric");
    links.push_back(up(nic_link(a)));
    if (via_uplinks) {
      if (auto* u = uplink(a, false))
        links.push_back(up(u));
      if (auto* u = uplink(b, false))
        links.push_back(down(u));
    }
    links.push_back(down(nic_link(b)));
  }
  zone->add_route(hosts_.at(a)->get_netpoint(), hosts_.at(b)->get_netpoint(), nullptr, nullptr,
                  links, true);
}

int Platform::group_gpus() const {
  if (spec_.reduced || gpus_.size() <= spec_.one_zone_max_gpus)
    return 0;
  const bool oversubscribed = spec_.uplink_bytes_per_s_per_node > 0.0;
  const int group = oversubscribed ? std::max(spec_.nodes_per_leaf, 1) * spec_.gpus_per_node
                                   : spec_.gpus_per_domain;
  if (group <= 0 || spec_.gpus_per_domain <= 0 || group % spec_.gpus_per_domain != 0)
    return 0;
  // Between groups a route takes the uplinks exactly when it leaves its group (its leaf).
  for (const auto& [route, via_uplinks] : routes_) {
    const auto [a, b] = route;
    if (b >= 0 && via_uplinks != (oversubscribed && a / group != b / group))
      return 0;
  }
  return group;
}

void Platform::create_group_zones(int group_gpus) {
  group_gpus_ = group_gpus;
  for (const int gpu : gpus_) {
    const int g = gpu / group_gpus;
    if (groups_.contains(g))
      continue;
    auto* zone = sg4::create_full_zone("group" + std::to_string(g));
    zone->set_parent(zone_);
    groups_.emplace(g, zone);
    auto* gateway = zone->create_router("gateway" + std::to_string(g));
    gateways_.emplace(g, gateway);
    // Between groups the star adds no link of its own: the gateway routes hold them all.
    zone_->add_route(zone->get_netpoint(), nullptr, gateway, nullptr, {}, true);
  }
}

sg4::NetZone* Platform::zone_of(int gpu) const {
  return group_gpus_ > 0 ? groups_.at(gpu / group_gpus_) : zone_;
}

// The route from `gpu` to its group's gateway, both directions: up its NIC, and up its leaf's
// uplink when the fabric is oversubscribed (a route between groups leaves the leaf).
void Platform::add_gateway_route(int gpu) {
  if (!routed_to_gateway_.insert(gpu).second)
    return;
  if (spec_.nic_links_per_node <= 0)
    throw std::logic_error("platform: no inter-node fabric");
  std::vector<sg4::LinkInRoute> links{up(nic_link(gpu))};
  if (auto* u = uplink(gpu, false))
    links.push_back(up(u));
  zone_of(gpu)->add_route(hosts_.at(gpu)->get_netpoint(), gateways_.at(gpu / group_gpus_), nullptr,
                          nullptr, links, true);
}

void Platform::build() {
  if (const int group = group_gpus(); group > 0) {
    zone_ = sg4::create_star_zone("cluster");
    create_group_zones(group);
  } else {
    zone_ = SparseRouteZone::create("cluster");
  }
  create_gpu_hosts();
  for (const auto& [route, via_uplinks] : routes_) {
    const auto [a, b] = route;
    if (!hosts_.contains(a))
      throw std::logic_error("platform: route from unknown GPU");
    if (b <= kNvlinkMirrorBase)
      add_nvlink_mirror_route(a, b);
    else if (b < 0)
      add_nic_mirror_route(a, b, via_uplinks);
    else
      add_gpu_route(a, b, via_uplinks);
  }
  for (auto& [g, zone] : groups_)
    zone->seal();
  zone_->seal();
}

double Platform::route_latency_s(int from, int to) const {
  std::vector<sg4::Link*> links;
  double latency = 0.0;
  hosts_.at(from)->route_to(hosts_.at(to), links, &latency);
  return latency;
}

}  // namespace capsim::sim::detail
