#pragma once

#include <string>

#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// Reads Kubernetes cluster-autoscaler flags into the `cluster-autoscaler` preset: from a
// Deployment manifest (the container whose command or args run cluster-autoscaler; a YAML
// stream's other documents are noted) or from a flags file (one or more `--flag=value` per line,
// `#` comments; `line N` in messages). --scan-interval, --scale-down-unneeded-time,
// --scale-down-delay-after-{add,delete,failure}, --scale-down-gpu-utilization-threshold,
// --max-node-provision-time, the node-group backoff flags, --max-empty-bulk-delete and
// --expander (priority, price) become knobs; --scale-down-enabled=false sets the unneeded time
// to 365d (the knob's longest); each --nodes=MIN:MAX:NAME is a node group taking the what-if
// pool named NAME. Mapping table: docs/whatif.md. Throws InputError naming the file and the
// pointer or line.
[[nodiscard]] ConfigReading read_cluster_autoscaler(const ConfigFile& file);

// Writes `policy` as a flags file read_cluster_autoscaler reads back to `policy`.
[[nodiscard]] std::string write_cluster_autoscaler(const ImportedPolicy& policy);

}  // namespace capsim::whatif
