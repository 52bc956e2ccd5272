#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/pricing.hpp"

#include "io/input_error.hpp"
#include "io/yaml_document.hpp"

namespace capsim::whatif {

// "Never" (no consolidation, no expiry, no suspend) maps to the longest duration a knob takes.
inline constexpr double kNeverS = 365.0 * 86400.0;

// The autoscaler configurations a what-if policy may come from, and `--emit` writes back.
enum class ConfigFormat { kKarpenter, kKubeRay, kRay, kClusterAutoscaler, kSlurm };

// "karpenter", "kuberay", "ray", "cluster-autoscaler", "slurm".
[[nodiscard]] const char* to_string(ConfigFormat format);
[[nodiscard]] std::optional<ConfigFormat> config_format_from_string(std::string_view name);
[[nodiscard]] std::vector<std::string> config_format_names();

// One node group of a configuration (a Karpenter NodePool, a Ray worker group, a
// cluster-autoscaler --nodes group, a Slurm partition), in capsim's terms. It launches the
// what-if pools whose instance is in `instances` (empty: the pool named `name`) and whose
// pricing is in `pricings` (empty: any).
struct NodeGroup {
  std::string name;
  std::vector<std::string> instances;
  std::vector<Pricing> pricings;
  int min_nodes = 0;
  std::optional<int> max_nodes;  // none: the what-if pool's
  std::optional<int> max_gpus;   // Karpenter's nvidia.com/gpu limit
  int weight = 0;                // Karpenter NodePool weight, Slurm node Weight
  int gpus_per_node = 0;         // Ray num-gpus / Slurm Gres=gpu:N; 0: not stated
  std::string node_class;        // Karpenter nodeClassRef name

  [[nodiscard]] bool operator==(const NodeGroup& other) const = default;
};

// A policy read from a configuration: the capsim preset and knobs it maps to and its node
// groups in preference order.
struct ImportedPolicy {
  ConfigFormat format = ConfigFormat::kKarpenter;
  std::string name;  // the configuration's own name (NodePool, RayCluster, cluster_name, ...)
  std::string preset;
  nlohmann::json knobs = nlohmann::json::object();
  std::vector<NodeGroup> groups;

  [[nodiscard]] bool operator==(const ImportedPolicy& other) const = default;
};

// One file of a configuration, parsed (a YAML stream is an array of its documents).
struct ConfigFile {
  std::string path;
  nlohmann::json json;               // YAML formats
  std::string text;                  // line formats (cluster-autoscaler flags files, slurm.conf)
  std::string raw;                   // the file's bytes as read, either way
  io::ScalarOffsets scalar_offsets;  // YAML formats: where each scalar starts in `raw`
};

// A configuration as read: the policy, the keys capsim does not model that cannot change a
// what-if (`notes`) and those that could (`unmodelled`), each with its file and pointer, and
// the files themselves.
struct ConfigReading {
  ImportedPolicy policy;
  std::vector<io::InputProblem> notes;
  std::vector<io::InputProblem> unmodelled;
  std::vector<ConfigFile> files;
};

// The files a what-if policy was read from, for `--emit` to write them back with the knobs the
// recommended run changed: the knobs as the files state them, and the catalog they were read
// against (to read the written text back).
struct ImportedSource {
  std::vector<ConfigFile> files;
  nlohmann::json knobs;
  Catalog catalog;
};

}  // namespace capsim::whatif

namespace capsim::whatif {

// A duration knob's JSON value for `seconds`: "600s" (the shortest text that reads back exactly).
[[nodiscard]] nlohmann::json duration_knob(double seconds);
// The seconds of a duration knob's value ("10min", "600s"). REQUIRES: a valid duration string.
[[nodiscard]] double knob_seconds(const nlohmann::json& value);

}  // namespace capsim::whatif
