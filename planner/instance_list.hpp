#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

namespace capsim::planner {

// The instance types a plan may name (`capsim plan --list-instances`): each one's GPU, node,
// NVLink domain, NICs and hourly prices with their source, in catalog order.
[[nodiscard]] std::string instance_list_table(const Catalog& catalog);
// The same as {"instances": [{"name", "gpu", "gpus_per_node", "nvlink_domain", "fabric",
// "nics_per_node", "nic_bandwidth", "on_demand_usd_per_hour", "capacity_block_usd_per_hour",
// "reserved_usd_per_hour", "price_source"}]}; a price of 0 is not offered.
[[nodiscard]] nlohmann::json instance_list_json(const Catalog& catalog);

}  // namespace capsim::planner
