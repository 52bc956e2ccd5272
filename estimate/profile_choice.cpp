#include "estimate/profile_choice.hpp"

#include <algorithm>
#include <string>

namespace capsim::estimate {

std::string shipped_profile_file(const std::string& architecture, const std::string& fabric,
                                 const std::vector<std::string>& shipped_files) {
  std::string family;
  if (architecture == "ampere")
    family = "a100";
  if (architecture == "hopper")
    family = "h100";
  std::string suffix;
  if (fabric == "infiniband")
    suffix = "ib";
  if (fabric == "roce")
    suffix = "roce";
  if (fabric == "efa")
    suffix = "efa";
  if (family.empty() || suffix.empty())
    return "";
  const std::string file = family + "-" + suffix + ".json";
  const bool shipped =
      std::find(shipped_files.begin(), shipped_files.end(), file) != shipped_files.end();
  return shipped ? file : "";
}

ProfileChoice choose_profile(const Scenario& scenario, bool gpu_is_builtin,
                             const std::vector<std::string>& shipped_files) {
  if (!scenario.profile_path.empty())
    return {ProfileSource::kNamedFile, ""};
  // Shipped profiles are fitted to the catalog's GPUs; defined hardware starts from its own
  // datasheet until a profile fitted to it is named.
  if (!gpu_is_builtin)
    return {ProfileSource::kDatasheet, ""};
  // A single node's intra-node fits come from the same single-node logs in every profile of a
  // GPU family: the InfiniBand one serves it.
  const ClusterSpec& cluster = scenario.cluster;
  const GpuSpec& gpu = cluster.gpu;
  const std::string fabric =
      cluster.has_inter_node ? to_string(cluster.inter_node_fabric) : std::string("infiniband");
  std::string file = shipped_profile_file(gpu.architecture, fabric, shipped_files);
  if (!file.empty())
    return {ProfileSource::kShipped, file};
  // A fabric no log of the family was measured on: the family's kernels, the datasheet network.
  file = shipped_profile_file(gpu.architecture, "infiniband", shipped_files);
  if (!file.empty())
    return {ProfileSource::kShippedDatasheetNetwork, file};
  return {ProfileSource::kDatasheet, ""};
}

std::optional<ProfileMismatch> named_profile_mismatch(const HardwareProfile& profile,
                                                      const Scenario& scenario) {
  const ClusterSpec& cluster = scenario.cluster;
  if (profile.gpu.architecture != cluster.gpu.architecture) {
    return ProfileMismatch{"/gpu", "profile \"" + profile.name + "\" is for " + profile.gpu.name +
                                       ", the scenario's GPUs are " + cluster.gpu.name};
  }
  if (cluster.num_nodes > 1 && std::none_of(profile.collectives.begin(), profile.collectives.end(),
                                            [](const CollectiveFit& f) { return f.inter_node; })) {
    return ProfileMismatch{"/collectives", "profile \"" + profile.name +
                                               "\" has no inter_node fit, but scenario \"" +
                                               scenario.name + "\" runs on " +
                                               std::to_string(cluster.num_nodes) + " nodes"};
  }
  return std::nullopt;
}

}  // namespace capsim::estimate
