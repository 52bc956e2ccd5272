#include "whatif/policy_emit.hpp"

#include "whatif/config_patch.hpp"
#include "whatif/policy_source.hpp"

namespace capsim::whatif {

std::pair<std::string, std::string> emitted_file(const WhatIf& whatif, const PolicySpec& policy) {
  if (policy.imported) {
    ImportedPolicy p = *policy.imported;
    p.name = policy.name;
    for (const auto& [k, v] : policy.knobs.items())
      p.knobs[k] = v;
    auto written = write_config(p);
    if (policy.source == nullptr)
      return written;
    if (auto text = patched_config(*policy.source, p)) {
      // A cluster-autoscaler Deployment stays a manifest.
      const auto& first = policy.source->files.front();
      if (p.format == ConfigFormat::kClusterAutoscaler && !first.json.is_null())
        written.first = "cluster-autoscaler.yaml";
      written.second = std::move(*text);
    }
    return written;
  }
  return write_config(as_karpenter(policy, policy.pools.empty() ? whatif.pools : policy.pools));
}

}  // namespace capsim::whatif
