#pragma once

#include <string>
#include <vector>

namespace capsim {

// One purchasable node type: its GPUs, NICs and hourly prices (USD per node-hour; 0 = not
// offered). On-premises entries carry an amortised price the user overrides in plans.
struct InstanceSpec {
  std::string name;
  std::string gpu;  // GpuSpec::name
  int gpus_per_node;
  std::string fabric;  // "efa", "infiniband", "roce"
  int nics_per_node;
  double nic_bandwidth_bytes_per_s;  // per NIC, per direction
  double on_demand_usd_per_hour;
  double capacity_block_usd_per_hour;
  double reserved_usd_per_hour;
  std::string price_source;  // provenance of the prices, with date
};

// Returns the catalog entry or nullptr when `name` is unknown.
[[nodiscard]] const InstanceSpec* find_instance(const std::string& name);
// Returns every catalog name in catalog order, for error messages.
[[nodiscard]] std::vector<std::string> instance_names();

}  // namespace capsim
