#include "whatif/policy_source.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/input_file.hpp"
#include "io/json_reader.hpp"
#include "io/yaml_document.hpp"
#include "whatif/cluster_autoscaler_flags.hpp"
#include "whatif/karpenter_config.hpp"
#include "whatif/kuberay_config.hpp"
#include "whatif/policy.hpp"
#include "whatif/ray_cluster_config.hpp"
#include "whatif/slurm_power_save.hpp"

namespace capsim::whatif {
namespace {

bool is_yaml_path(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

// Whether the format's file at `path` is YAML (else a line format).
bool reads_yaml(ConfigFormat format, const std::string& path) {
  switch (format) {
    case ConfigFormat::kSlurm:
      return false;
    case ConfigFormat::kClusterAutoscaler:
      return is_yaml_path(path);
    default:
      return true;
  }
}

ConfigReading dispatch(ConfigFormat format, const std::vector<ConfigFile>& files,
                       const Catalog& catalog) {
  switch (format) {
    case ConfigFormat::kKarpenter:
      return read_karpenter(files, catalog);
    case ConfigFormat::kKubeRay:
      return read_kuberay(files.front(), catalog);
    case ConfigFormat::kRay:
      return read_ray_cluster(files.front(), catalog);
    case ConfigFormat::kClusterAutoscaler:
      return read_cluster_autoscaler(files.front());
    case ConfigFormat::kSlurm:
      return read_slurm_conf(files.front(), catalog);
  }
  return read_karpenter(files, catalog);
}

std::string pricing_list(const std::vector<Pricing>& pricings) {
  std::vector<std::string> names;
  for (const Pricing p : pricings)
    names.emplace_back(to_string(p));
  return names.empty() ? "any" : io::join_names(names);
}

}  // namespace

ConfigReading read_config(ConfigFormat format, const std::vector<std::string>& paths,
                          const Catalog& catalog) {
  std::vector<ConfigFile> files;
  for (const auto& path : paths) {
    ConfigFile f;
    f.path = path;
    f.raw = io::read_input_file(path, io::InputKind::kJson);
    if (reads_yaml(format, path))
      f.json = io::parse_yaml_text(f.raw, path, &f.scalar_offsets);
    else
      f.text = f.raw;
    files.push_back(std::move(f));
  }
  ConfigReading reading = dispatch(format, files, catalog);
  reading.files = std::move(files);
  return reading;
}

ConfigReading read_config_text(ConfigFormat format, const std::string& text,
                               const std::string& name, const Catalog& catalog) {
  ConfigFile f;
  f.path = name;
  f.raw = text;
  if (reads_yaml(format, name))
    f.json = io::parse_yaml_text(text, name, &f.scalar_offsets);
  else
    f.text = text;
  ConfigReading reading = dispatch(format, {f}, catalog);
  reading.files.push_back(std::move(f));
  return reading;
}

std::pair<std::string, std::string> write_config(const ImportedPolicy& policy) {
  switch (policy.format) {
    case ConfigFormat::kKarpenter:
      return {"nodepool.yaml", write_karpenter(policy)};
    case ConfigFormat::kKubeRay:
      return {"raycluster.yaml", write_kuberay(policy)};
    case ConfigFormat::kRay:
      return {"ray-cluster.yaml", write_ray_cluster(policy)};
    case ConfigFormat::kClusterAutoscaler:
      return {"cluster-autoscaler.flags", write_cluster_autoscaler(policy)};
    case ConfigFormat::kSlurm:
      return {"slurm.conf", write_slurm_conf(policy)};
  }
  return {"nodepool.yaml", write_karpenter(policy)};
}

std::vector<NodePool> pools_for_groups(const ImportedPolicy& policy,
                                       const std::vector<NodePool>& market, const std::string& file,
                                       const std::string& pointer,
                                       std::vector<io::InputProblem>& unmodelled) {
  std::vector<NodePool> out;
  for (const auto& g : policy.groups) {
    std::vector<const NodePool*> matched;
    for (const auto& pool : market) {
      const bool instance_ok = g.instances.empty()
                                   ? pool.name == g.name
                                   : std::find(g.instances.begin(), g.instances.end(),
                                               pool.instance.name) != g.instances.end();
      const bool pricing_ok = g.pricings.empty() || std::find(g.pricings.begin(), g.pricings.end(),
                                                              pool.pricing) != g.pricings.end();
      const bool gpus_ok = g.gpus_per_node == 0 || g.gpus_per_node == pool.gpus_per_node();
      if (instance_ok && pricing_ok && gpus_ok)
        matched.push_back(&pool);
    }
    // A pool named as the group (a Slurm partition, a cluster-autoscaler node group) is the one.
    const auto same_name = std::find_if(matched.begin(), matched.end(),
                                        [&](const NodePool* p) { return p->name == g.name; });
    if (same_name != matched.end())
      matched = {*same_name};
    if (matched.empty()) {
      std::vector<std::string> pools;
      for (const auto& p : market) {
        pools.push_back(p.name + " (" + p.instance.name + ", " + to_string(p.pricing) + ", " +
                        std::to_string(p.gpus_per_node()) + " GPUs)");
      }
      const std::string wants = g.instances.empty() ? "a pool named \"" + g.name + "\""
                                                    : "instance " + io::join_names(g.instances);
      throw io::InputError(
          file, pointer,
          "node group \"" + g.name + "\" of " + to_string(policy.format) + " policy \"" +
              policy.name + "\" matches no pool of the what-if (it takes " + wants + ", pricing " +
              pricing_list(g.pricings) +
              (g.gpus_per_node > 0 ? ", " + std::to_string(g.gpus_per_node) + " GPUs per node"
                                   : "") +
              "; the what-if's pools, which give prices, delays and markets: " +
              io::join_names(pools) + ")");
    }
    if ((g.max_gpus || g.max_nodes) && matched.size() > 1) {
      unmodelled.push_back({file, pointer,
                            "not modelled: node group \"" + g.name +
                                "\"'s node or GPU limit is shared by its " +
                                std::to_string(matched.size()) +
                                " pools; capsim caps each pool at the whole limit"});
    }
    bool first = true;
    for (const NodePool* m : matched) {
      NodePool pool = *m;
      pool.name = pool.name == g.name ? pool.name : g.name + "/" + pool.name;
      if (g.max_nodes)
        pool.max_nodes = std::min(pool.max_nodes, *g.max_nodes);
      if (g.max_gpus)
        pool.max_nodes = std::min(pool.max_nodes, *g.max_gpus / pool.gpus_per_node());
      pool.min_nodes = first ? std::min(g.min_nodes, pool.max_nodes) : 0;
      if (first && g.min_nodes > pool.max_nodes) {
        throw io::InputError(file, pointer,
                             "node group \"" + g.name + "\" keeps " + std::to_string(g.min_nodes) +
                                 " nodes but its pool " + m->name + " holds at most " +
                                 std::to_string(pool.max_nodes));
      }
      first = false;
      if (pool.max_nodes < 1)
        continue;  // a limit below one node: Karpenter launches nothing there
      out.push_back(std::move(pool));
    }
  }
  if (out.empty()) {
    throw io::InputError(file, pointer,
                         "the node groups of " + std::string(to_string(policy.format)) +
                             " policy \"" + policy.name +
                             "\" allow no node (limits below one node)");
  }
  return out;
}

ImportedPolicy as_karpenter(const PolicySpec& policy, const std::vector<NodePool>& pools) {
  ImportedPolicy out;
  out.format = ConfigFormat::kKarpenter;
  out.name = policy.name;
  out.preset = "karpenter";
  const ControlLoop& l = policy.loop;
  const bool never = l.scale_down == ScaleDownPredicate::kNever;
  out.knobs["consolidation_policy"] =
      l.scale_down == ScaleDownPredicate::kUnderutilized ? "WhenEmptyOrUnderutilized" : "WhenEmpty";
  out.knobs["consolidate_after"] = duration_knob(never ? kNeverS : std::min(l.dwell_s, kNeverS));
  out.knobs["budget_nodes_percent"] = std::min(100.0, std::round(l.budget_fraction * 100.0));
  out.knobs["expire_after"] = duration_knob(l.expire_after_s > 0 ? l.expire_after_s : kNeverS);
  for (const auto& p : pools) {
    NodeGroup g;
    g.name = p.name;
    g.instances = {p.instance.name};
    g.pricings = p.pricing == Pricing::kOnDemand ? std::vector<Pricing>{Pricing::kOnDemand}
                 : p.pricing == Pricing::kSpot
                     ? std::vector<Pricing>{Pricing::kSpot}
                     : std::vector<Pricing>{Pricing::kCapacityBlock, Pricing::kReserved};
    g.max_gpus = p.max_nodes * p.gpus_per_node();
    g.node_class = "default";  // Karpenter's getting-started EC2NodeClass
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace capsim::whatif
