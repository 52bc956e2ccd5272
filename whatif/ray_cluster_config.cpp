#include "whatif/ray_cluster_config.hpp"

#include <cmath>

#include "io/json_reader.hpp"
#include "io/yaml_writer.hpp"
#include "whatif/manifest_object.hpp"
#include "whatif/policy.hpp"

namespace capsim::whatif {
namespace {

NodeGroup read_node_type(ManifestObject& t, const std::string& name, const std::string& provider,
                         const Catalog& catalog) {
  NodeGroup g;
  g.name = name;
  g.min_nodes = static_cast<int>(t.optional_integer("min_workers", 0, 100000).value_or(0));
  if (const auto max = t.optional_integer("max_workers", 0, 100000))
    g.max_nodes = static_cast<int>(*max);
  if (g.max_nodes && g.min_nodes > *g.max_nodes)
    throw t.error("min_workers", "min_workers exceeds max_workers");
  if (auto res = t.optional_object("resources")) {
    if (res->has("GPU"))
      g.gpus_per_node = static_cast<int>(res->number("GPU", 0, 1024));
    res->rest_no_effect(
        "CPU, memory and custom resources do not change a what-if (capsim packs GPUs)");
  }
  if (g.gpus_per_node == 0)
    throw t.error("resources",
                  "node type \"" + name + "\" has no GPU resource; capsim scales GPU nodes");
  if (auto nc = t.optional_object("node_config")) {
    if (provider == "aws" && nc->has("InstanceType")) {
      const std::string type = nc->string("InstanceType");
      if (catalog.find_instance(type) == nullptr) {
        throw nc->error("InstanceType", "unknown instance \"" + type + "\" (known: " +
                                            io::join_names(catalog.instance_names()) + ")");
      }
      g.instances = {type};
    }
    g.pricings = {Pricing::kOnDemand};
    if (auto market = nc->optional_object("InstanceMarketOptions")) {
      const std::string type = market->string("MarketType");
      if (type != "spot")
        throw market->error("MarketType", "expected spot, got \"" + type + "\"");
      g.pricings = {Pricing::kSpot};
      market->rest_no_effect(
          "spot options (max price, interruption behaviour) are the what-if pool's");
    }
    nc->rest_no_effect("image, subnets, disks and tags do not change a what-if");
  }
  t.unmodelled({"worker_setup_commands", "docker"},
               "per-node setup adds to the launch time; the what-if pool's provisioning delays "
               "stand for it");
  t.no_effect({"labels"}, "node labels do not change a what-if");
  t.finish();
  return g;
}

}  // namespace

ConfigReading read_ray_cluster(const ConfigFile& file, const Catalog& catalog) {
  ConfigReading out;
  out.policy.format = ConfigFormat::kRay;
  out.policy.preset = "ray-v1";
  if (file.json.is_array())
    throw io::InputError(file.path, "", "expected one Ray cluster YAML document, got a stream");
  ManifestObject doc(file.json, file.path, "", out);
  out.policy.name = doc.string("cluster_name");
  nlohmann::json knobs = nlohmann::json::object();
  if (doc.has("upscaling_speed"))
    knobs["upscaling_speed"] = doc.number("upscaling_speed", 0.0, 1e6);
  if (doc.has("idle_timeout_minutes"))
    knobs["idle_timeout"] =
        duration_knob(doc.number("idle_timeout_minutes", 0.0, 365.0 * 1440.0) * 60.0);
  auto provider = doc.object("provider");
  const std::string type = provider.string("type");
  provider.unmodelled(
      {"cache_stopped_nodes"},
      "stopped nodes restart faster than new ones launch; capsim launches new ones");
  provider.rest_no_effect("region, zones and credentials do not change a what-if");
  const std::string head = doc.string("head_node_type");
  auto types = doc.object("available_node_types");
  if (!types.json().contains(head))
    throw doc.error("head_node_type", "\"" + head + "\" is not one of available_node_types");
  int total_max = 0;
  for (const auto& [name, value] : types.json().items()) {
    if (name == head) {
      (void)types.at(name);
      out.notes.push_back({file.path, types.pointer_to(name),
                           "not modelled: the head node type (it runs no training work)"});
      continue;
    }
    ManifestObject t(types.at(name), file.path, types.pointer_to(name), out);
    out.policy.groups.push_back(read_node_type(t, name, type, catalog));
    total_max += out.policy.groups.back().max_nodes.value_or(0);
  }
  types.finish();
  if (out.policy.groups.empty())
    throw doc.error("available_node_types", "no worker node type");
  if (doc.has("max_workers")) {
    const auto cap = doc.integer("max_workers", 0, 100000);
    if (cap < total_max) {
      out.unmodelled.push_back({file.path, "/max_workers",
                                "not modelled: a cluster-wide max_workers below the node types' "
                                "sum (capsim caps each node type)"});
    }
  }
  doc.no_effect({"auth", "docker", "file_mounts", "cluster_synced_files", "rsync_exclude",
                 "rsync_filter", "file_mounts_sync_continuously", "initialization_commands",
                 "setup_commands", "head_setup_commands", "head_start_ray_commands",
                 "worker_start_ray_commands", "idle_timeout_s"},
                "does not change a what-if");
  doc.unmodelled({"worker_setup_commands"},
                 "per-node setup adds to the launch time; the what-if pool's provisioning delays "
                 "stand for it");
  doc.finish();
  out.policy.knobs = complete_knobs("ray-v1", knobs);
  return out;
}

std::string write_ray_cluster(const ImportedPolicy& policy) {
  nlohmann::json c;
  c["cluster_name"] = policy.name;
  c["upscaling_speed"] = policy.knobs.at("upscaling_speed");
  c["idle_timeout_minutes"] = knob_seconds(policy.knobs.at("idle_timeout")) / 60.0;
  c["provider"] = {{"type", "aws"}, {"region", "us-east-1"}};
  c["head_node_type"] = "head";
  c["available_node_types"]["head"] = {{"resources", nlohmann::json::object()},
                                       {"node_config", {{"InstanceType", "m5.2xlarge"}}}};
  int total = 0;
  for (const auto& g : policy.groups) {
    nlohmann::json t;
    t["min_workers"] = g.min_nodes;
    if (g.max_nodes) {
      t["max_workers"] = *g.max_nodes;
      total += *g.max_nodes;
    }
    t["resources"]["GPU"] = g.gpus_per_node;
    if (!g.instances.empty() || !g.pricings.empty())
      t["node_config"] = nlohmann::json::object();
    if (!g.instances.empty())
      t["node_config"]["InstanceType"] = g.instances.front();
    if (g.pricings == std::vector<Pricing>{Pricing::kSpot})
      t["node_config"]["InstanceMarketOptions"]["MarketType"] = "spot";
    c["available_node_types"][g.name] = t;
  }
  c["max_workers"] = total;
  return io::write_yaml(c, false,
                        "Ray cluster YAML written by capsim whatif --emit for policy \"" +
                            policy.name + "\".\nSet provider.region and the head node to yours.");
}

}  // namespace capsim::whatif
