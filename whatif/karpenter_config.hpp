#pragma once

#include <string>
#include <vector>

#include "models/catalog.hpp"

#include "whatif/imported_policy.hpp"

namespace capsim::whatif {

// Reads Karpenter `NodePool`s (karpenter.sh/v1) and their `EC2NodeClass`es
// (karpenter.k8s.aws/v1), from one YAML stream or several files, into the `karpenter` preset:
// disruption.consolidationPolicy and consolidateAfter ("Never": 365d, the knob's longest),
// one budget's node percentage, template.spec.expireAfter, and one node group per NodePool
// (instance types from the requirements on node.kubernetes.io/instance-type and
// karpenter.k8s.aws/instance-{family,category,generation,gpu-name,gpu-count} against `catalog`,
// karpenter.sh/capacity-type (default on-demand), limits nvidia.com/gpu, weight; groups by
// weight, highest first). Mapping table: docs/whatif.md. Throws InputError naming the file and
// JSON pointer; karpenter.sh/v1beta1 is refused with what changed in v1.
[[nodiscard]] ConfigReading read_karpenter(const std::vector<ConfigFile>& files,
                                           const Catalog& catalog);

// Writes `policy` (preset karpenter, or any preset's loop expressed as Karpenter's disruption
// settings by the caller) as a stream of NodePools, one per group, that read_karpenter reads
// back to `policy`.
[[nodiscard]] std::string write_karpenter(const ImportedPolicy& policy);

}  // namespace capsim::whatif
