#include "whatif/kuberay_config.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "io/json_reader.hpp"
#include "io/yaml_writer.hpp"
#include "whatif/manifest_object.hpp"
#include "whatif/policy.hpp"

namespace capsim::whatif {
namespace {

constexpr const char* kApi = "ray.io/v1";
constexpr const char* kInstanceLabel = "node.kubernetes.io/instance-type";

// The pod template's node selector and GPU limit: what decides the node a worker pod lands on.
void read_pod_template(ManifestObject& group, const Catalog& catalog, NodeGroup& g,
                       int& gpu_limit) {
  auto tmpl = group.object("template");
  auto spec = tmpl.object("spec");
  if (auto sel = spec.optional_object("nodeSelector")) {
    if (sel->has(kInstanceLabel)) {
      const std::string type = sel->string(kInstanceLabel);
      if (catalog.find_instance(type) == nullptr) {
        throw sel->error(kInstanceLabel, "unknown instance \"" + type + "\" (known: " +
                                             io::join_names(catalog.instance_names()) + ")");
      }
      g.instances = {type};
    }
    for (const char* key : {"karpenter.sh/capacity-type", "eks.amazonaws.com/capacityType"}) {
      if (!sel->has(key))
        continue;
      const std::string t = sel->string(key);
      if (t == "spot" || t == "SPOT")
        g.pricings = {Pricing::kSpot};
      else if (t == "on-demand" || t == "ON_DEMAND")
        g.pricings = {Pricing::kOnDemand};
      else
        throw sel->error(key, "expected spot or on-demand (SPOT, ON_DEMAND), got \"" + t + "\"");
    }
    sel->rest_no_effect(
        "capsim places any job on any node of a pool; other labels only steer pods");
  }
  if (spec.has("containers")) {
    const auto containers = spec.array("containers");
    for (std::size_t c = 0; c < containers.size(); ++c) {
      const auto ptr = nlohmann::json::json_pointer("/resources/limits/nvidia.com~1gpu");
      if (containers[c].is_object() && containers[c].contains(ptr)) {
        ManifestObject limits(
            containers[c].at("resources").at("limits"), spec.file(),
            spec.pointer_to("containers") + "/" + std::to_string(c) + "/resources/limits",
            spec.out());
        gpu_limit += static_cast<int>(limits.integer("nvidia.com/gpu", 0, 1024));
      }
    }
  }
  spec.rest_no_effect("the pod's image, volumes, tolerations and the like do not change a what-if");
  tmpl.rest_no_effect("pod labels and annotations do not change a what-if");
}

NodeGroup read_worker_group(ManifestObject& w, const Catalog& catalog) {
  NodeGroup g;
  g.name = w.string("groupName");
  g.min_nodes = static_cast<int>(w.optional_integer("minReplicas", 0, 100000).value_or(0));
  // KubeRay's default maxReplicas is 2^31-1: without one, the what-if pool's max_nodes binds.
  if (const auto max = w.optional_integer("maxReplicas", 0, 2147483647))
    g.max_nodes = static_cast<int>(std::min<std::int64_t>(*max, 100000));
  if (g.max_nodes && g.min_nodes > *g.max_nodes)
    throw w.error("minReplicas", "minReplicas (" + std::to_string(g.min_nodes) +
                                     ") exceeds maxReplicas (" + std::to_string(*g.max_nodes) +
                                     ")");
  w.no_effect({"replicas"},
              "the initial worker count; the autoscaler then keeps "
              "minReplicas..maxReplicas");
  w.no_effect({"scaleStrategy", "suspend"}, "manual scaling does not change a what-if");
  w.unmodelled({"idleTimeoutSeconds"}, "a per-group idle timeout (capsim's loop has one)");
  if (w.has("numOfHosts") && w.integer("numOfHosts", 1, 100000) != 1) {
    w.out().unmodelled.push_back({w.file(), w.pointer_to("numOfHosts"),
                                  "not modelled: multi-host worker replicas (capsim scales single "
                                  "nodes)"});
  }
  if (auto params = w.optional_object("rayStartParams")) {
    if (params->has("num-gpus"))
      g.gpus_per_node = static_cast<int>(params->number("num-gpus", 0, 1024));
    params->rest_no_effect("ray start parameters other than num-gpus do not change a what-if");
  }
  int gpu_limit = 0;
  read_pod_template(w, catalog, g, gpu_limit);
  if (g.gpus_per_node == 0)
    g.gpus_per_node = gpu_limit;
  if (g.gpus_per_node == 0) {
    throw w.error("rayStartParams", "worker group \"" + g.name +
                                        "\" has no GPUs (rayStartParams num-gpus or a container's "
                                        "nvidia.com/gpu limit); capsim scales GPU nodes");
  }
  w.finish();
  return g;
}

// The RayCluster document of a file: the file's one document or the stream's only RayCluster.
std::pair<const nlohmann::json*, std::string> find_raycluster(const ConfigFile& f,
                                                              ConfigReading& out) {
  if (!f.json.is_array())
    return {&f.json, ""};
  const nlohmann::json* found = nullptr;
  std::string ptr;
  for (std::size_t i = 0; i < f.json.size(); ++i) {
    const auto& d = f.json[i];
    if (d.is_object() && d.contains("kind") && d.at("kind") == "RayCluster") {
      if (found != nullptr)
        throw io::InputError(f.path, "/" + std::to_string(i),
                             "a second RayCluster; give one per file");
      found = &d;
      ptr = "/" + std::to_string(i);
    } else if (!d.is_null()) {
      out.notes.push_back(
          {f.path, "/" + std::to_string(i), "not modelled: a document that is not a RayCluster"});
    }
  }
  if (found == nullptr)
    throw io::InputError(f.path, "", "no RayCluster (apiVersion ray.io/v1) found");
  return {found, ptr};
}

}  // namespace

ConfigReading read_kuberay(const ConfigFile& file, const Catalog& catalog) {
  ConfigReading out;
  out.policy.format = ConfigFormat::kKubeRay;
  out.policy.preset = "kuberay-v2";
  const auto [json, ptr] = find_raycluster(file, out);
  ManifestObject doc(*json, file.path, ptr, out);
  const std::string api = doc.string("apiVersion");
  const std::string kind = doc.string("kind");
  if (kind != "RayCluster")
    throw doc.error("kind", "expected RayCluster, got \"" + kind + "\"");
  if (api != kApi) {
    throw doc.error("apiVersion",
                    "expected \"ray.io/v1\" (KubeRay 1.0 and later), got \"" + api + "\"");
  }
  auto meta = doc.object("metadata");
  out.policy.name = meta.string("name");
  meta.rest_no_effect("labels and annotations do not change a what-if");
  auto spec = doc.object("spec");
  nlohmann::json knobs = nlohmann::json::object();
  if (spec.optional_bool("enableInTreeAutoscaling") != std::optional<bool>(true)) {
    throw spec.error("enableInTreeAutoscaling",
                     "the RayCluster does not autoscale (enableInTreeAutoscaling is not true); "
                     "use the static preset for fixed worker counts");
  }
  if (auto opts = spec.optional_object("autoscalerOptions")) {
    if (opts->has("upscalingMode")) {
      const std::string mode = opts->string("upscalingMode");
      if (mode != "Default" && mode != "Aggressive" && mode != "Conservative")
        throw opts->error("upscalingMode",
                          "expected Default, Aggressive or Conservative, got \"" + mode + "\"");
      knobs["upscaling_mode"] = mode;
    }
    if (opts->has("idleTimeoutSeconds"))
      knobs["idle_timeout"] =
          duration_knob(static_cast<double>(opts->integer("idleTimeoutSeconds", 0, 365 * 86400)));
    opts->no_effect({"version"},
                    "capsim's kuberay-v2 loop stands for the autoscaler of either version");
    opts->rest_no_effect(
        "the autoscaler container's image, resources and environment do not change a what-if");
  }
  spec.no_effect(
      {"rayVersion", "headServiceAnnotations", "suspend", "managedBy", "gcsFaultToleranceOptions"},
      "does not change a what-if");
  if (auto head = spec.optional_object("headGroupSpec")) {
    const auto gp = nlohmann::json::json_pointer("/rayStartParams/num-gpus");
    if (head->json().contains(gp) && head->json().at(gp) != "0" && head->json().at(gp) != 0) {
      out.unmodelled.push_back(
          {file.path, head->pointer() + "/rayStartParams/num-gpus",
           "not modelled: GPUs on the head node (capsim scales worker nodes)"});
    }
    head->rest_no_effect("the head node runs no training work in a what-if");
  }
  std::set<std::string> names;
  const auto groups = spec.array("workerGroupSpecs");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    ManifestObject w(groups[i], file.path,
                     spec.pointer_to("workerGroupSpecs") + "/" + std::to_string(i), out);
    NodeGroup g = read_worker_group(w, catalog);
    if (!names.insert(g.name).second)
      throw w.error("groupName", "duplicate groupName \"" + g.name + "\"");
    out.policy.groups.push_back(std::move(g));
  }
  if (out.policy.groups.empty())
    throw spec.error("workerGroupSpecs", "no worker group");
  spec.finish();
  doc.no_effect({"status"}, "status is written by KubeRay");
  doc.finish();
  out.policy.knobs = complete_knobs("kuberay-v2", knobs);
  return out;
}

std::string write_kuberay(const ImportedPolicy& policy) {
  nlohmann::json rc;
  rc["apiVersion"] = kApi;
  rc["kind"] = "RayCluster";
  rc["metadata"]["name"] = policy.name;
  auto& spec = rc["spec"];
  spec["enableInTreeAutoscaling"] = true;
  spec["autoscalerOptions"]["upscalingMode"] = policy.knobs.at("upscaling_mode");
  spec["autoscalerOptions"]["idleTimeoutSeconds"] =
      static_cast<std::int64_t>(std::llround(knob_seconds(policy.knobs.at("idle_timeout"))));
  spec["headGroupSpec"]["rayStartParams"]["num-gpus"] = "0";
  spec["headGroupSpec"]["template"]["spec"]["containers"] = {
      {{"name", "ray-head"}, {"image", "rayproject/ray:2.9.0"}}};
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : policy.groups) {
    nlohmann::json w;
    w["groupName"] = g.name;
    w["minReplicas"] = g.min_nodes;
    if (g.max_nodes)
      w["maxReplicas"] = *g.max_nodes;
    w["replicas"] = g.min_nodes;
    w["rayStartParams"]["num-gpus"] = std::to_string(g.gpus_per_node);
    auto& pod = w["template"]["spec"];
    if (!g.instances.empty())
      pod["nodeSelector"][kInstanceLabel] = g.instances.front();
    if (g.pricings.size() == 1 &&
        (g.pricings.front() == Pricing::kSpot || g.pricings.front() == Pricing::kOnDemand))
      pod["nodeSelector"]["karpenter.sh/capacity-type"] = to_string(g.pricings.front());
    pod["containers"] = {{{"name", "ray-worker"},
                          {"image", "rayproject/ray:2.9.0-gpu"},
                          {"resources", {{"limits", {{"nvidia.com/gpu", g.gpus_per_node}}}}}}};
    groups.push_back(w);
  }
  spec["workerGroupSpecs"] = groups;
  return io::write_yaml(rc, false,
                        "KubeRay RayCluster (ray.io/v1) written by capsim whatif --emit for "
                        "policy \"" +
                            policy.name +
                            "\".\nSet the images to your own; "
                            "one worker pod fills one node.");
}

}  // namespace capsim::whatif
