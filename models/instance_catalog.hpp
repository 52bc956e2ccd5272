#pragma once

#include <cstddef>
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

  [[nodiscard]] bool operator==(const InstanceSpec& other) const = default;
};

// Returns the catalog entry or nullptr when `name` is unknown.
[[nodiscard]] const InstanceSpec* find_instance(const std::string& name);
// Returns every catalog name in catalog order, then the defined ones, for error messages.
[[nodiscard]] std::vector<std::string> instance_names();

// The most instance types one process may define beside the built-in ones.
inline constexpr size_t kMaxDefinedInstances = 64;

// Adds an instance type the catalog lacks (a plan's own node, new hardware or another cloud)
// for the rest of the process, as define_gpu does for GPUs: its GPU must be known. Returns an
// empty string on success, else why not. Thread-safe.
[[nodiscard]] std::string define_instance(const InstanceSpec& instance);
// Whether `name` is a built-in catalog entry.
[[nodiscard]] bool is_builtin_instance(const std::string& name);

}  // namespace capsim
