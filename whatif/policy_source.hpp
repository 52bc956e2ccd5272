#pragma once

#include <string>
#include <utility>
#include <vector>

#include "models/catalog.hpp"

#include "whatif/imported_policy.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif {

// Reads a configuration in `format` from `paths` (YAML for Karpenter, KubeRay, Ray and a
// cluster-autoscaler Deployment — a path ending in .yaml or .yml —, text for a
// cluster-autoscaler flags file and slurm.conf), with instance types checked against `catalog`.
// Throws InputError naming the file and pointer (or line).
[[nodiscard]] ConfigReading read_config(ConfigFormat format, const std::vector<std::string>& paths,
                                        const Catalog& catalog);

// Reads a configuration from text attributed to `name` (fuzzing, tests).
[[nodiscard]] ConfigReading read_config_text(ConfigFormat format, const std::string& text,
                                             const std::string& name, const Catalog& catalog);

// Writes `policy` back in its format: {file name, text}; read_config reads the text back to
// `policy`.
[[nodiscard]] std::pair<std::string, std::string> write_config(const ImportedPolicy& policy);

// The what-if pools `policy`'s node groups launch, in group order: each group takes every pool
// of `market` (the what-if's pools: instance, pricing, price, provisioning and market) whose
// instance it allows (or, listing none, the pool of its name) and whose pricing it allows, with
// the group's min_nodes (on its first pool) and max_nodes (and GPU limit) capping the pool's.
// A node or GPU limit shared by several pools is reported in `unmodelled`. Throws InputError (at
// `file`, `pointer`) for a group that matches no pool.
[[nodiscard]] std::vector<NodePool> pools_for_groups(const ImportedPolicy& policy,
                                                     const std::vector<NodePool>& market,
                                                     const std::string& file,
                                                     const std::string& pointer,
                                                     std::vector<io::InputProblem>& unmodelled);

// `policy` (of any preset) as a Karpenter NodePool policy on `pools`: consolidation from its
// scale-down predicate and dwell, budget and expiry from its loop, one NodePool per pool.
[[nodiscard]] ImportedPolicy as_karpenter(const PolicySpec& policy,
                                          const std::vector<NodePool>& pools);

}  // namespace capsim::whatif
