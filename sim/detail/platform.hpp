#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

// SimGrid types are only forward-declared here: SimGrid headers stay in sim/*.cpp.
namespace simgrid::s4u {
class Host;
class Link;
class NetZone;
}  // namespace simgrid::s4u
namespace simgrid::kernel::routing {
class NetPoint;
}  // namespace simgrid::kernel::routing

namespace capsim::sim::detail {

// The links of a training cluster, per direction, in bytes/s and seconds.
struct PlatformSpec {
  int gpus_per_node = 8;
  int gpus_per_domain = 8;          // GPUs behind one NVLink switch fabric (a node or a rack)
  double nvlink_bytes_per_s = 0.0;  // per GPU into the NVSwitch
  double nvlink_latency_s = 0.0;
  int nic_links_per_node = 0;  // 0: single node, no fabric
  double nic_link_bytes_per_s = 0.0;
  double nic_latency_s = 0.0;
  // Oversubscribed fabric: each node's share of its leaf switch's uplinks (0: non-blocking),
  // and the nodes under one leaf; a leaf's uplinks carry nodes_per_leaf x this share.
  double uplink_bytes_per_s_per_node = 0.0;
  int nodes_per_leaf = 1;
  // Rail-optimized leaves (rail groups): NIC link l of every node of a leaf reaches rail switch
  // l, whose uplinks carry 1 / nic_links_per_node of the leaf's; else one bundle per leaf.
  bool rail_uplinks = false;
  // Reduced (symmetric) platform: every simulated GPU gets its own share of the links it would
  // share with GPUs that are not simulated (a NIC serving k GPUs; a leaf's uplinks, shared by
  // the GPUs of the full cluster whose PP sends, respectively DP ring flows, leave the leaf;
  // see Platform::uplink). PP flows take GPU-to-GPU routes and DP ring flows the mirror routes.
  bool reduced = false;
  int pp_crossing_gpus_per_leaf = 0;
  int dp_crossing_gpus_per_leaf = 0;
  bool classes_leave_from_the_same_gpus = true;
  // Most GPUs in one zone, which looks routes up faster than routes through groups (half the
  // user time at 32,768 GPUs) and keeps only the routes it is given: by default, every size.
  std::size_t one_zone_max_gpus = std::numeric_limits<std::size_t>::max();
};

// A SimGrid platform built in C++: one host per simulated GPU, one split-duplex NVLink port per
// GPU into its NVLink domain's switches (the node's NVSwitch, or a rack's NVLink switch trays), NIC
// links per GPU as the node's NICs dictate, an optional uplink per leaf switch for oversubscribed
// fabrics, "mirror" hosts (a GPU's ring peer folded back onto itself, for the reduced DP ring
// through the NICs) and "NVLink mirrors" (the same for DP rings inside a node, through the GPU's
// NVSwitch port). Routes are explicit, only for the pairs that communicate: in one zone that keeps
// just those (one flat table, sim/platform.cpp), or, when more GPUs are simulated than
// one_zone_max_gpus, in one full zone per group of GPUs (a leaf of an oversubscribed fabric, else
// an NVLink domain) under a star zone of the groups. A route between two groups is the sender's
// links to its group's gateway (its NIC, and its leaf's uplink when the fabric is oversubscribed)
// and the receiver's from its own: the same links as the one-zone route. Build once per process,
// inside a live simgrid::s4u::Engine.
class Platform {
 public:
  explicit Platform(const PlatformSpec& spec) : spec_(spec) {}
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;
  Platform(Platform&&) = delete;
  Platform& operator=(Platform&&) = delete;
  ~Platform() = default;

  // Work units a GPU host executes per second: compute ops are execs of seconds x this, so
  // communication kernels running beside them can take a share of the host (SimGrid's maxmin
  // precision, 1e-5 units, is then 1e-14 s).
  static constexpr double kGpuWorkPerSecond = 1e9;

  // Returns the id naming the mirror host of `gpu`: its ring peer for DP flows through the NICs.
  [[nodiscard]] static int mirror_id(int gpu) { return -1 - gpu; }
  // Returns the id naming the NVLink mirror of `gpu`: the peer of its intra-node DP flows,
  // reached through the GPU's own NVSwitch port (sending up it, receiving down it).
  [[nodiscard]] static int nvlink_mirror_id(int gpu) { return kNvlinkMirrorBase - gpu; }

  void add_gpu(int gpu) { gpus_.insert(gpu); }
  // Declares that `from` sends to `to` (GPU ids or mirror ids); both directions get a route
  // unless `to` is a mirror. `via_uplinks`: the route leaves its leaf switch (oversubscribed
  // fabrics; the caller decides, since in the reduced run a GPU stands for others).
  void add_route(int from, int to, bool via_uplinks = false);
  // Creates the zone, hosts, links and routes, and seals the platform.
  void build();

  [[nodiscard]] simgrid::s4u::Host* host(int id) const { return hosts_.at(id); }
  // Returns the latency (s) of the route from `from` to `to`.
  [[nodiscard]] double route_latency_s(int from, int to) const;
  [[nodiscard]] int node_of(int gpu) const { return gpu / spec_.gpus_per_node; }
  [[nodiscard]] int domain_of(int gpu) const { return gpu / spec_.gpus_per_domain; }
  [[nodiscard]] const PlatformSpec& spec() const { return spec_; }

 private:
  // The GPUs per group zone (a leaf, else an NVLink domain), or 0 for one zone: when a group
  // would split an NVLink domain, or a route's leaf crossing differs from its groups'.
  [[nodiscard]] int group_gpus() const;
  void create_group_zones(int group_gpus);
  // The zone that holds `gpu`, its mirrors, its links and its routes.
  [[nodiscard]] simgrid::s4u::NetZone* zone_of(int gpu) const;
  void add_gateway_route(int gpu);
  void create_gpu_hosts();
  void add_nvlink_mirror_route(int gpu, int mirror);
  void add_nic_mirror_route(int gpu, int mirror, bool via_uplinks);
  void add_gpu_route(int a, int b, bool via_uplinks);
  simgrid::s4u::Link* nic_link(int gpu);
  // Returns the uplink link a flow of `gpu` crosses to leave its leaf (null if the fabric is not
  // oversubscribed): the leaf's bundle, or in the reduced run the GPU's share of it.
  simgrid::s4u::Link* uplink(int gpu, bool dp_ring);
  simgrid::s4u::Link* uplink_link(simgrid::s4u::NetZone* zone, std::pair<int, int> key,
                                  double bytes_per_s);

  static constexpr int kNvlinkMirrorBase = -(1 << 30);

  PlatformSpec spec_;
  std::set<int> gpus_;
  std::map<std::pair<int, int>, bool> routes_;  // value: via the leaf uplinks
  std::map<int, simgrid::s4u::Host*> hosts_;
  std::map<int, simgrid::s4u::Link*> nvlinks_;
  std::map<int, simgrid::s4u::Link*> nics_;  // key: node * links + link (full) or gpu (reduced)
  // Key: (leaf, 0), or (leaf, rail) with rail_uplinks, in the full run; (gpu, 0 PP or both /
  // 1 DP ring) in the reduced run.
  std::map<std::pair<int, int>, simgrid::s4u::Link*> uplinks_;
  simgrid::s4u::NetZone* zone_ = nullptr;  // the cluster's zone
  int group_gpus_ = 0;                     // 0: one zone
  std::map<int, simgrid::s4u::NetZone*> groups_;
  std::map<int, simgrid::kernel::routing::NetPoint*> gateways_;  // by group
  std::set<int> routed_to_gateway_;                              // GPUs with a gateway route
};

}  // namespace capsim::sim::detail
