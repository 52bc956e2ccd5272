#pragma once

#include <string>

#include "models/catalog.hpp"

#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// Reads a Ray autoscaler cluster YAML (`ray up`'s cluster config) into the `ray-v1` preset:
// upscaling_speed and idle_timeout_minutes become knobs; each available_node_types entry but the
// head is a node group (min_workers, max_workers, resources GPU; node_config InstanceType against
// `catalog` and InstanceMarketOptions MarketType spot on AWS). Mapping table: docs/whatif.md.
// Throws InputError naming the file and JSON pointer.
[[nodiscard]] ConfigReading read_ray_cluster(const ConfigFile& file, const Catalog& catalog);

// Writes `policy` as a Ray cluster YAML that read_ray_cluster reads back to `policy`.
[[nodiscard]] std::string write_ray_cluster(const ImportedPolicy& policy);

}  // namespace capsim::whatif
