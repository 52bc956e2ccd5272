#pragma once

#include <span>
#include <string>

#include "models/gpu_catalog.hpp"

namespace capsim {

// One purchasable node type: its GPUs, NICs and hourly prices (USD per node-hour; 0 = not
// offered). On-premises entries carry an amortised price the user overrides in plans.
struct InstanceSpec {
  std::string name;
  GpuSpec gpu;
  int gpus_per_node;
  std::string fabric;  // "efa", "infiniband", "roce"
  int nics_per_node;
  double nic_bandwidth_bytes_per_s;  // per NIC, per direction
  double on_demand_usd_per_hour;
  double capacity_block_usd_per_hour;
  double reserved_usd_per_hour;
  std::string price_source;  // provenance of the prices, with date
  // GPUs that share one NVLink domain across nodes (cluster.nvlink_domain); 0: one node's.
  // Rack-scale systems (GB200/GB300 NVL72) are 18 trays of 4 GPUs: gpus_per_node 4 (a tray and
  // its NICs, priced per tray) and nvlink_domain 72.
  int nvlink_domain = 0;

  [[nodiscard]] bool operator==(const InstanceSpec& other) const = default;
};

// Returns the built-in instance types, in catalog order (capsim::Catalog adds the ones inputs
// define).
[[nodiscard]] std::span<const InstanceSpec> builtin_instances();
// Whether `name` is a built-in instance type.
[[nodiscard]] bool is_builtin_instance(const std::string& name);

}  // namespace capsim
