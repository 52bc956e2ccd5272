#include "whatif/karpenter_config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>
#include <utility>

#include "io/go_duration.hpp"
#include "io/json_reader.hpp"
#include "io/yaml_writer.hpp"
#include "whatif/manifest_object.hpp"

namespace capsim::whatif {
namespace {

constexpr const char* kNodePoolApi = "karpenter.sh/v1";
constexpr const char* kNodeClassApi = "karpenter.k8s.aws/v1";

// The label an instance requirement filters on, as Karpenter's well-known labels define it
// (karpenter.sh docs, concepts/scheduling "Well-Known Labels"); "" when it does not apply.
std::string instance_label(const InstanceSpec& spec, const std::string& key) {
  const std::string& name = spec.name;
  const auto dot = name.find('.');
  const std::string family = dot == std::string::npos ? "" : name.substr(0, dot);
  std::size_t letters = 0;
  while (letters < family.size() && std::isalpha(static_cast<unsigned char>(family[letters])))
    ++letters;
  std::size_t digits = letters;
  while (digits < family.size() && std::isdigit(static_cast<unsigned char>(family[digits])))
    ++digits;
  if (key == "node.kubernetes.io/instance-type")
    return name;
  if (key == "karpenter.k8s.aws/instance-family")
    return family;
  if (key == "karpenter.k8s.aws/instance-category")
    return family.substr(0, letters);
  if (key == "karpenter.k8s.aws/instance-generation")
    return family.substr(letters, digits - letters);
  if (key == "karpenter.k8s.aws/instance-gpu-count")
    return std::to_string(spec.gpus_per_node);
  if (key == "karpenter.k8s.aws/instance-gpu-name") {
    std::string gpu = spec.gpu.name.substr(0, spec.gpu.name.find('-'));
    std::transform(gpu.begin(), gpu.end(), gpu.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return gpu;
  }
  return "";
}

bool is_instance_key(const std::string& key) {
  return key == "node.kubernetes.io/instance-type" ||
         key.rfind("karpenter.k8s.aws/instance-", 0) == 0;
}

const std::vector<std::string>& instance_keys() {
  static const std::vector<std::string> kKeys{
      "node.kubernetes.io/instance-type",    "karpenter.k8s.aws/instance-family",
      "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-generation",
      "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-count"};
  return kKeys;
}

// Whether `label` satisfies a requirement (Kubernetes node selector operators).
bool satisfies(const std::string& label, const std::string& op,
               const std::vector<std::string>& values) {
  const bool in = std::find(values.begin(), values.end(), label) != values.end();
  if (op == "In")
    return in;
  if (op == "NotIn")
    return !in;
  if (op == "Exists")
    return !label.empty();
  if (op == "DoesNotExist")
    return label.empty();
  int have = 0;
  int bound = 0;
  const auto r1 = std::from_chars(label.data(), label.data() + label.size(), have);
  const auto r2 =
      std::from_chars(values.front().data(), values.front().data() + values.front().size(), bound);
  if (label.empty() || r1.ec != std::errc() || r2.ec != std::errc())
    return false;
  return op == "Gt" ? have > bound : have < bound;
}

// Karpenter's capacity types and the capsim pricings each stands for: "reserved" is a capacity
// reservation, an ODCR or an EC2 capacity block (Karpenter v1.3 capacity reservations).
std::vector<Pricing> pricings_of(const std::string& capacity_type) {
  if (capacity_type == "on-demand")
    return {Pricing::kOnDemand};
  if (capacity_type == "spot")
    return {Pricing::kSpot};
  return {Pricing::kCapacityBlock, Pricing::kReserved};
}

struct Requirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
};

Requirement read_requirement(const nlohmann::json& item, const std::string& file,
                             const std::string& ptr, ConfigReading& out) {
  ManifestObject r(item, file, ptr, out);
  Requirement req;
  req.key = r.string("key");
  req.op = r.string("operator");
  static const std::vector<std::string> kOps{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  if (std::find(kOps.begin(), kOps.end(), req.op) == kOps.end())
    throw r.error("operator",
                  "expected one of " + io::join_names(kOps) + ", got \"" + req.op + "\"");
  if (r.has("values")) {
    const auto values = r.array("values");
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_string()) {
        throw io::InputError(file, r.pointer_to("values") + "/" + std::to_string(i),
                             "expected a string, got " + io::describe_json(values[i]));
      }
      req.values.push_back(values[i].get<std::string>());
    }
  }
  const bool needs_values = req.op == "In" || req.op == "NotIn";
  const bool needs_one = req.op == "Gt" || req.op == "Lt";
  if ((needs_values && req.values.empty()) || (needs_one && req.values.size() != 1) ||
      (!needs_values && !needs_one && !req.values.empty())) {
    throw r.error("values", "operator " + req.op + " takes " +
                                (needs_values ? "one or more values"
                                 : needs_one  ? "exactly one value"
                                              : "no values"));
  }
  r.no_effect({"minValues"},
              "capsim launches one instance type per pool; minValues only keeps "
              "Karpenter's choice flexible");
  r.finish();
  return req;
}

// The group's instance types and pricings from template.spec.requirements.
void read_requirements(ManifestObject& spec, const Catalog& catalog, NodeGroup& group) {
  std::vector<std::string> instances = catalog.instance_names();
  std::optional<std::set<std::string>> capacity;  // none: Karpenter's default, on-demand
  if (!spec.has("requirements")) {
    group.instances = instances;
    group.pricings = {Pricing::kOnDemand};
    return;
  }
  const auto items = spec.array("requirements");
  auto& out = spec.out();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string ptr = spec.pointer_to("requirements") + "/" + std::to_string(i);
    const Requirement req = read_requirement(items[i], spec.file(), ptr, out);
    if (is_instance_key(req.key)) {
      if (std::find(instance_keys().begin(), instance_keys().end(), req.key) ==
          instance_keys().end()) {
        out.unmodelled.push_back({spec.file(), ptr,
                                  "not modelled: requirement on " + req.key +
                                      " (capsim filters instance types by " +
                                      io::join_names(instance_keys()) + ")"});
        continue;
      }
      std::erase_if(instances, [&](const std::string& name) {
        return !satisfies(instance_label(*catalog.find_instance(name), req.key), req.op,
                          req.values);
      });
    } else if (req.key == "karpenter.sh/capacity-type") {
      const std::set<std::string> all{"on-demand", "spot", "reserved"};
      for (std::size_t v = 0; v < req.values.size(); ++v) {
        if (all.count(req.values[v]) == 0) {
          throw io::InputError(
              spec.file(), ptr + "/values/" + std::to_string(v),
              "unknown capacity type \"" + req.values[v] + "\" (known: on-demand, spot, reserved)");
        }
      }
      std::set<std::string> next;
      for (const auto& t : all) {
        // Each requirement narrows the set left by the ones before it.
        if (satisfies(t, req.op, req.values) && (!capacity || capacity->count(t) > 0))
          next.insert(t);
      }
      capacity = next;
    } else if (req.key == "kubernetes.io/arch" || req.key == "kubernetes.io/os") {
      out.notes.push_back(
          {spec.file(), ptr,
           "not modelled: " + req.key + " (every catalog GPU node is linux/amd64)"});
    } else if (req.key == "topology.kubernetes.io/zone" ||
               req.key == "topology.kubernetes.io/region") {
      out.notes.push_back({spec.file(), ptr,
                           "not modelled: " + req.key +
                               " (no per-zone markets: the what-if pools' capacity and ICE stand "
                               "for the zones allowed)"});
    } else {
      out.notes.push_back({spec.file(), ptr,
                           "not modelled: requirement on label " + req.key +
                               " (capsim places any job on any node of a pool)"});
    }
  }
  group.instances = instances;
  group.pricings.clear();
  for (const auto& t : capacity.value_or(std::set<std::string>{"on-demand"})) {
    for (const Pricing p : pricings_of(t))
      group.pricings.push_back(p);
  }
  std::sort(group.pricings.begin(), group.pricings.end());
  if (group.instances.empty()) {
    throw spec.error("requirements",
                     "the requirements allow no instance type of the catalog (known: " +
                         io::join_names(catalog.instance_names()) + ")");
  }
  if (group.pricings.empty())
    throw spec.error("requirements", "the requirements allow no capacity type");
}

// A duration or "Never".
double duration_or_never(ManifestObject& r, const std::string& key) {
  if (r.has(key) && r.at(key) == "Never")
    return kNeverS;
  const double s = r.go_duration(key);
  if (s > kNeverS)
    throw r.error(key, "expected at most 8760h (365 days), or Never");
  return s;
}

// spec.disruption: the consolidation policy and delay, and one budget's node percentage.
nlohmann::json read_disruption(ManifestObject& d) {
  nlohmann::json knobs = nlohmann::json::object();
  const std::string policy =
      d.optional_string("consolidationPolicy").value_or("WhenEmptyOrUnderutilized");
  if (policy != "WhenEmpty" && policy != "WhenEmptyOrUnderutilized") {
    throw d.error(
        "consolidationPolicy",
        "expected WhenEmpty or WhenEmptyOrUnderutilized, got \"" + policy + "\"" +
            (policy == "WhenUnderutilized" ? " (WhenUnderutilized is karpenter.sh/v1beta1's name)"
                                           : ""));
  }
  knobs["consolidation_policy"] = policy;
  knobs["consolidate_after"] =
      duration_knob(d.has("consolidateAfter") ? duration_or_never(d, "consolidateAfter") : 0.0);
  double percent = 10.0;  // Karpenter's default budget: nodes "10%"
  if (d.has("budgets")) {
    const auto budgets = d.array("budgets");
    bool found = false;
    for (std::size_t i = 0; i < budgets.size(); ++i) {
      ManifestObject b(budgets[i], d.file(), d.pointer_to("budgets") + "/" + std::to_string(i),
                       d.out());
      const std::string nodes = b.string("nodes");
      const bool scheduled = b.has("schedule");
      b.unmodelled({"schedule", "duration"},
                   "capsim applies one budget at all times; a scheduled budget changes when "
                   "nodes may be disrupted");
      b.unmodelled({"reasons"}, "capsim's budget covers every disruption reason");
      b.finish();
      if (scheduled)
        continue;
      if (nodes.empty() || nodes.back() != '%') {
        d.out().unmodelled.push_back({d.file(), b.pointer_to("nodes"),
                                      "not modelled: a budget of a node count (capsim's budget "
                                      "is a percentage of the nodes)"});
        continue;
      }
      double p = -1.0;
      const auto res = std::from_chars(nodes.data(), nodes.data() + nodes.size() - 1, p);
      if (res.ec != std::errc() || res.ptr != nodes.data() + nodes.size() - 1 || p < 0 || p > 100)
        throw b.error("nodes", "expected a percentage like \"10%\", got \"" + nodes + "\"");
      if (found) {
        d.out().unmodelled.push_back(
            {d.file(), b.pointer(), "not modelled: a second budget (capsim applies the first)"});
        continue;
      }
      found = true;
      percent = p;
    }
  }
  knobs["budget_nodes_percent"] = percent;
  d.finish();
  return knobs;
}

// A limit's value: a Kubernetes quantity of whole units ("64", 64).
int read_gpu_limit(ManifestObject& limits) {
  return static_cast<int>(limits.integer("nvidia.com/gpu", 0, 10000000));
}

struct NodePoolReading {
  NodeGroup group;
  nlohmann::json knobs;
  std::string pointer;
};

NodePoolReading read_nodepool(ManifestObject& doc, const Catalog& catalog) {
  NodePoolReading np;
  np.pointer = doc.pointer();
  auto meta = doc.object("metadata");
  np.group.name = meta.string("name");
  meta.rest_no_effect("labels and annotations do not change a what-if");
  auto spec = doc.object("spec");
  auto tmpl = spec.object("template");
  if (auto tm = tmpl.optional_object("metadata"))
    tm->rest_no_effect("node labels and annotations do not change a what-if");
  auto ts = tmpl.object("spec");
  read_requirements(ts, catalog, np.group);
  if (auto ref = ts.optional_object("nodeClassRef")) {
    np.group.node_class = ref->string("name");
    (void)ref->optional_string("group");
    (void)ref->optional_string("kind");
    ref->finish();
  }
  np.knobs = nlohmann::json::object();
  np.knobs["expire_after"] =
      duration_knob(ts.has("expireAfter") ? duration_or_never(ts, "expireAfter") : 720.0 * 3600.0);
  ts.no_effect({"taints", "startupTaints"},
               "capsim's jobs tolerate every node of their pool; taints only steer pods");
  ts.no_effect({"terminationGracePeriod"},
               "capsim evicts a disrupted node's jobs at once (with an emergency checkpoint when "
               "the notice covers it)");
  ts.unmodelled({"kubelet"},
                "kubelet settings (max pods, reserved resources) change what fits "
                "a node; capsim packs GPUs only");
  ts.finish();
  tmpl.finish();
  if (auto d = spec.optional_object("disruption")) {
    const nlohmann::json disruption = read_disruption(*d);
    for (const auto& [k, v] : disruption.items())
      np.knobs[k] = v;
  } else {
    np.knobs["consolidation_policy"] = "WhenEmptyOrUnderutilized";
    np.knobs["consolidate_after"] = duration_knob(0.0);
    np.knobs["budget_nodes_percent"] = 10.0;
  }
  if (auto limits = spec.optional_object("limits")) {
    if (limits->has("nvidia.com/gpu"))
      np.group.max_gpus = read_gpu_limit(*limits);
    for (const auto& [k, v] : limits->json().items()) {
      if (k != "nvidia.com/gpu")
        limits->unmodelled(
            {k}, "capsim's instances carry GPUs only; a " + k + " limit can stop launches");
    }
    limits->finish();
  }
  np.group.weight = static_cast<int>(spec.optional_integer("weight", 1, 100).value_or(0));
  spec.unmodelled({"replicas"}, "a static NodePool keeps a node count regardless of demand");
  spec.finish();
  return np;
}

void read_nodeclass(ManifestObject& doc, std::set<std::string>& names) {
  auto meta = doc.object("metadata");
  names.insert(meta.string("name"));
  meta.rest_no_effect("labels and annotations do not change a what-if");
  if (doc.has("spec")) {
    auto spec = doc.object("spec");
    spec.rest_no_effect(
        "AMI, subnets, security groups, role, tags, block devices, user data and "
        "kubelet settings of an EC2NodeClass do not change a what-if (the "
        "what-if's pools give the provisioning delays)");
  }
  doc.rest_no_effect("status is written by Karpenter");
}

}  // namespace

ConfigReading read_karpenter(const std::vector<ConfigFile>& files, const Catalog& catalog) {
  ConfigReading out;
  out.policy.format = ConfigFormat::kKarpenter;
  out.policy.preset = "karpenter";
  std::vector<NodePoolReading> pools;
  std::set<std::string> node_classes;
  std::string first_file;
  for (const auto& f : files) {
    const bool stream = f.json.is_array();
    const std::size_t n = stream ? f.json.size() : 1;
    for (std::size_t i = 0; i < n; ++i) {
      const nlohmann::json& value = stream ? f.json[i] : f.json;
      if (value.is_null())
        continue;  // an empty document of a stream
      ManifestObject doc(value, f.path, stream ? "/" + std::to_string(i) : "", out);
      const std::string api = doc.string("apiVersion");
      const std::string kind = doc.string("kind");
      if (kind == "NodePool") {
        if (api == "karpenter.sh/v1beta1") {
          throw doc.error("apiVersion",
                          "karpenter.sh/v1beta1 is not read: this reader reads karpenter.sh/v1 "
                          "(Karpenter 1.0 and later). In v1, consolidationPolicy "
                          "WhenUnderutilized is WhenEmptyOrUnderutilized, expireAfter moved "
                          "from spec.disruption to spec.template.spec, and consolidateAfter is "
                          "required; see Karpenter's v1 migration guide");
        }
        if (api != kNodePoolApi)
          throw doc.error("apiVersion", "expected \"" + std::string(kNodePoolApi) +
                                            "\" for a NodePool, got \"" + api + "\"");
        pools.push_back(read_nodepool(doc, catalog));
        doc.no_effect({"status"}, "status is written by Karpenter");
        if (first_file.empty())
          first_file = f.path;
      } else if (kind == "EC2NodeClass") {
        if (api != kNodeClassApi)
          throw doc.error("apiVersion", "expected \"" + std::string(kNodeClassApi) +
                                            "\" for an EC2NodeClass, got \"" + api + "\"");
        read_nodeclass(doc, node_classes);
      } else {
        doc.rest_no_effect("a " + kind + " document is not part of a Karpenter policy");
        continue;
      }
      doc.finish();
    }
  }
  if (pools.empty()) {
    throw io::InputError(files.empty() ? "" : files.front().path, "",
                         "no NodePool (apiVersion karpenter.sh/v1, kind NodePool) found");
  }
  // One control loop per policy: every NodePool must agree on the disruption settings.
  out.policy.knobs = pools.front().knobs;
  out.policy.name = pools.front().group.name;
  std::set<std::string> names;
  for (const auto& np : pools) {
    if (!names.insert(np.group.name).second)
      throw io::InputError(first_file, np.pointer + "/metadata/name",
                           "duplicate NodePool \"" + np.group.name + "\"");
    if (np.knobs != out.policy.knobs) {
      out.unmodelled.push_back({first_file, np.pointer + "/spec/disruption",
                                "not modelled: disruption settings differing from NodePool \"" +
                                    pools.front().group.name +
                                    "\"'s (capsim runs one loop per policy; it uses the first)"});
    }
    if (!node_classes.empty() && !np.group.node_class.empty() &&
        node_classes.count(np.group.node_class) == 0) {
      throw io::InputError(first_file, np.pointer + "/spec/template/spec/nodeClassRef/name",
                           "no EC2NodeClass named \"" + np.group.node_class + "\" among the files");
    }
    out.policy.groups.push_back(np.group);
  }
  // Karpenter tries NodePools by weight, highest first (concepts/scheduling, "Weighted NodePools").
  std::stable_sort(out.policy.groups.begin(), out.policy.groups.end(),
                   [](const NodeGroup& a, const NodeGroup& b) { return a.weight > b.weight; });
  if (out.policy.groups.front().weight != out.policy.groups.back().weight) {
    out.unmodelled.push_back({first_file, "",
                              "not modelled: NodePool weights (capsim's Karpenter "
                              "loop launches the cheapest pool per GPU-hour)"});
  }
  return out;
}

std::string write_karpenter(const ImportedPolicy& policy) {
  nlohmann::json docs = nlohmann::json::array();
  const auto& k = policy.knobs;
  const auto never = [](double s) -> nlohmann::json {
    return s >= kNeverS ? nlohmann::json("Never") : nlohmann::json(io::format_go_duration(s));
  };
  for (const auto& g : policy.groups) {
    nlohmann::json np;
    np["apiVersion"] = kNodePoolApi;
    np["kind"] = "NodePool";
    np["metadata"]["name"] = g.name;
    auto& spec = np["spec"];
    nlohmann::json reqs = nlohmann::json::array();
    reqs.push_back(
        {{"key", "node.kubernetes.io/instance-type"}, {"operator", "In"}, {"values", g.instances}});
    std::vector<std::string> types;
    for (const Pricing p : g.pricings) {
      const std::string t = p == Pricing::kOnDemand ? "on-demand"
                            : p == Pricing::kSpot   ? "spot"
                                                    : "reserved";
      if (std::find(types.begin(), types.end(), t) == types.end())
        types.push_back(t);
    }
    reqs.push_back({{"key", "karpenter.sh/capacity-type"}, {"operator", "In"}, {"values", types}});
    spec["template"]["spec"]["requirements"] = reqs;
    if (!g.node_class.empty()) {
      spec["template"]["spec"]["nodeClassRef"] = {
          {"group", "karpenter.k8s.aws"}, {"kind", "EC2NodeClass"}, {"name", g.node_class}};
    }
    spec["template"]["spec"]["expireAfter"] = never(knob_seconds(k.at("expire_after")));
    spec["disruption"]["consolidationPolicy"] = k.at("consolidation_policy");
    spec["disruption"]["consolidateAfter"] = never(knob_seconds(k.at("consolidate_after")));
    const double percent = k.at("budget_nodes_percent").get<double>();
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, percent);
    spec["disruption"]["budgets"] = {{{"nodes", std::string(buf, res.ptr) + "%"}}};
    if (g.max_gpus)
      spec["limits"]["nvidia.com/gpu"] = *g.max_gpus;
    if (g.weight > 0)
      spec["weight"] = g.weight;
    docs.push_back(np);
  }
  return io::write_yaml(docs, true,
                        "Karpenter NodePools (karpenter.sh/v1) written by capsim whatif --emit "
                        "for policy \"" +
                            policy.name +
                            "\".\nnodeClassRef names an EC2NodeClass "
                            "of your cluster; min_nodes and max_nodes of a pool have no NodePool "
                            "field (limits cap GPUs).");
}

}  // namespace capsim::whatif
