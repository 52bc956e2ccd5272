#pragma once

#include <string>

#include "models/catalog.hpp"

#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// Reads a KubeRay `RayCluster` (ray.io/v1) into the `kuberay-v2` preset:
// autoscalerOptions.upscalingMode and idleTimeoutSeconds become knobs; each workerGroupSpec is a
// node group (minReplicas, maxReplicas; one worker pod per node, its GPUs from rayStartParams
// num-gpus or the container's nvidia.com/gpu limit; instance type and capacity type from the pod
// template's nodeSelector on node.kubernetes.io/instance-type and karpenter.sh/capacity-type or
// eks.amazonaws.com/capacityType, against `catalog`). Mapping table: docs/whatif.md. Throws
// InputError naming the file and JSON pointer.
[[nodiscard]] ConfigReading read_kuberay(const ConfigFile& file, const Catalog& catalog);

// Writes `policy` as a RayCluster that read_kuberay reads back to `policy`.
[[nodiscard]] std::string write_kuberay(const ImportedPolicy& policy);

}  // namespace capsim::whatif
