#include "whatif/policy_emit.hpp"

#include "whatif/policy_source.hpp"

namespace capsim::whatif {

std::pair<std::string, std::string> emitted_file(const WhatIf& whatif, const PolicySpec& policy) {
  if (policy.imported) {
    ImportedPolicy p = *policy.imported;
    p.name = policy.name;
    for (const auto& [k, v] : policy.knobs.items())
      p.knobs[k] = v;
    return write_config(p);
  }
  return write_config(as_karpenter(policy, policy.pools.empty() ? whatif.pools : policy.pools));
}

}  // namespace capsim::whatif
