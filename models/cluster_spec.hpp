#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu_catalog.hpp"

namespace capsim {

// Inter-node fabrics: Intel Omni-Path, HPE Slingshot-11, and Google's GPUDirect-TCPX (A3) and
// GPUDirect-TCPXO (A3 Mega) besides InfiniBand, RoCE, EFA and plain Ethernet.
enum class Fabric {
  kNvSwitch,
  kInfiniband,
  kRoce,
  kEfa,
  kEthernet,
  kOmniPath,
  kSlingshot,
  kTcpx,
  kTcpxo
};
enum class Topology { kFatTree, kRailOptimized, kOversubscribed };

// The most GPUs one NVLink domain ("node") may hold: rack-scale domains put 72 (GB200 NVL72) and
// more behind one set of NVSwitches; beyond 576 a value is a slip.
inline constexpr int kMaxGpusPerNode = 576;
// The most GPUs an NVLink domain spanning several nodes may hold: a GB200/GB300 NVL72 rack's
// NVLink switch trays join its 72 GPUs into one domain (NVIDIA GB200 NVL72 datasheet), the
// largest NVLink domain NVIDIA ships.
inline constexpr int kMaxNvlinkDomain = 72;

// Nodes, GPUs and links. Bandwidths per direction in bytes/s, latencies in s. A node is a
// server with its NICs; it is also the NVLink/NVSwitch domain (8 GPUs on HGX/DGX) unless
// nvlink_domain joins several nodes into one.
struct ClusterSpec {
  GpuSpec gpu{};
  std::string instance;  // empty unless the scenario named a catalog instance
  int gpus_per_node = 8;
  int num_nodes = 1;
  double intra_node_bandwidth_bytes_per_s = 0.0;  // per GPU into the NVSwitch
  bool has_inter_node = false;
  Fabric inter_node_fabric = Fabric::kInfiniband;
  int nics_per_node = 0;
  double nic_bandwidth_bytes_per_s = 0.0;
  Topology topology = Topology::kRailOptimized;
  double oversubscription = 1.0;
  int nodes_per_leaf = 1;  // oversubscribed fabrics: nodes under one leaf switch
  // GPUs sharing one NVLink domain when it spans several nodes (GB200 NVL72: trays of 4 GPUs
  // behind one rack's NVLink switches); 0: the node is the domain.
  int nvlink_domain = 0;

  [[nodiscard]] int num_gpus() const { return gpus_per_node * num_nodes; }
  // GPUs that reach each other over NVLink: consecutive ranks [k*D, (k+1)*D).
  [[nodiscard]] int nvlink_domain_gpus() const {
    return nvlink_domain > 0 ? nvlink_domain : gpus_per_node;
  }
  [[nodiscard]] double node_nic_bandwidth_bytes_per_s() const {
    return nics_per_node * nic_bandwidth_bytes_per_s;
  }

  [[nodiscard]] bool operator==(const ClusterSpec& other) const = default;
};

// Canonical names used in JSON and tables, and their inverses (nullopt for an unknown name).
[[nodiscard]] const char* to_string(Fabric fabric);
[[nodiscard]] const char* to_string(Topology topology);
[[nodiscard]] std::optional<Fabric> fabric_from_string(std::string_view name);
[[nodiscard]] std::optional<Topology> topology_from_string(std::string_view name);
// Every fabric's name, nvswitch (a node's own, for profiles of intra-node logs) first.
[[nodiscard]] const std::vector<std::string>& fabric_names();

}  // namespace capsim
