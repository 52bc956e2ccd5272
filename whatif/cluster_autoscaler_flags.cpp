#include "whatif/cluster_autoscaler_flags.hpp"

#include <charconv>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "io/go_duration.hpp"
#include "io/json_reader.hpp"
#include "whatif/manifest_object.hpp"
#include "whatif/policy.hpp"

namespace capsim::whatif {
namespace {

// A flag as written, with where it was written.
struct Flag {
  std::string name;  // without the dashes
  std::string value;
  bool has_value = false;
  std::string pointer;  // "line N" or a JSON pointer
};

// Duration flags and the knob each sets (kubernetes/autoscaler cluster-autoscaler/FAQ.md,
// "What are the parameters to CA?").
const std::map<std::string, std::string>& duration_flags() {
  static const std::map<std::string, std::string> kFlags{
      {"scan-interval", "scan_interval"},
      {"scale-down-unneeded-time", "scale_down_unneeded_time"},
      {"scale-down-delay-after-add", "scale_down_delay_after_add"},
      {"scale-down-delay-after-delete", "scale_down_delay_after_delete"},
      {"scale-down-delay-after-failure", "scale_down_delay_after_failure"},
      {"max-node-provision-time", "max_node_provision_time"},
      {"initial-node-group-backoff-duration", "initial_node_group_backoff_duration"},
      {"max-node-group-backoff-duration", "max_node_group_backoff_duration"},
      {"node-group-backoff-reset-timeout", "node_group_backoff_reset_timeout"},
  };
  return kFlags;
}

// Flags that cannot change a what-if: where CA runs, how it logs, how it finds the cloud.
const std::set<std::string>& no_effect_flags() {
  static const std::set<std::string> kFlags{"v",
                                            "logtostderr",
                                            "stderrthreshold",
                                            "alsologtostderr",
                                            "log-dir",
                                            "log-file",
                                            "cloud-provider",
                                            "cloud-config",
                                            "kubeconfig",
                                            "namespace",
                                            "cluster-name",
                                            "leader-elect",
                                            "leader-elect-lease-duration",
                                            "leader-elect-renew-deadline",
                                            "leader-elect-retry-period",
                                            "leader-elect-resource-lock",
                                            "leader-elect-resource-name",
                                            "leader-elect-resource-namespace",
                                            "address",
                                            "profiling",
                                            "write-status-configmap",
                                            "status-config-map-name",
                                            "aws-use-static-instance-list",
                                            "kube-api-content-type",
                                            "kube-client-qps",
                                            "kube-client-burst",
                                            "feature-gates",
                                            "emit-per-nodegroup-metrics",
                                            "record-duplicated-events",
                                            "skip-nodes-with-system-pods",
                                            "skip-nodes-with-local-storage",
                                            "skip-nodes-with-custom-controller-pods",
                                            "max-graceful-termination-sec",
                                            "scale-down-utilization-threshold",
                                            "node-group-auto-discovery",
                                            "regional",
                                            "ignore-daemonsets-utilization",
                                            "daemonset-eviction-for-empty-nodes",
                                            "daemonset-eviction-for-occupied-nodes"};
  return kFlags;
}

std::string why_no_effect(const std::string& flag) {
  if (flag == "scale-down-utilization-threshold")
    return "CPU and memory utilization; GPU nodes are judged by "
           "--scale-down-gpu-utilization-threshold";
  if (flag == "node-group-auto-discovery")
    return "node groups are discovered from the cloud; the what-if's pools stand for them";
  if (flag.rfind("skip-nodes-with-", 0) == 0 || flag.rfind("daemonset-", 0) == 0 ||
      flag == "ignore-daemonsets-utilization" || flag == "max-graceful-termination-sec")
    return "capsim's nodes run training jobs only (no system, local-storage or DaemonSet pods)";
  return "how cluster-autoscaler runs, logs or reaches the cloud does not change a what-if";
}

// Splits text into flags, one or more a line, `#` starting a comment.
std::vector<Flag> flags_of_text(const std::string& file, const std::string& text) {
  std::vector<Flag> out;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const auto hash = line.find('#');
    if (hash != std::string::npos)
      line.erase(hash);
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      const std::string where = "line " + std::to_string(line_no);
      if (w.size() < 3 || w.rfind("--", 0) != 0) {
        throw io::InputError(
            file, where, "expected a flag like --scale-down-unneeded-time=10m, got \"" + w + "\"");
      }
      Flag f;
      f.pointer = where;
      const auto eq = w.find('=');
      f.name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) {
        f.value = w.substr(eq + 1);
        f.has_value = true;
      }
      out.push_back(std::move(f));
    }
  }
  return out;
}

// The flags of the cluster-autoscaler container of a Deployment in a YAML stream.
std::vector<Flag> flags_of_manifest(const ConfigFile& f, ConfigReading& out) {
  const bool stream = f.json.is_array();
  const std::size_t n = stream ? f.json.size() : 1;
  std::vector<Flag> flags;
  bool found = false;
  for (std::size_t i = 0; i < n; ++i) {
    const nlohmann::json& doc = stream ? f.json[i] : f.json;
    const std::string ptr = stream ? "/" + std::to_string(i) : "";
    if (doc.is_null())
      continue;
    if (!doc.is_object()) {
      throw io::InputError(f.path, ptr,
                           "expected a Kubernetes object, got " + io::describe_json(doc));
    }
    const std::string kind =
        doc.contains("kind") && doc.at("kind").is_string() ? doc.at("kind").get<std::string>() : "";
    const nlohmann::json* containers = nullptr;
    const std::string cptr = ptr + "/spec/template/spec/containers";
    if (kind == "Deployment") {
      const auto cp = nlohmann::json::json_pointer("/spec/template/spec/containers");
      if (doc.contains(cp) && doc.at(cp).is_array())
        containers = &doc.at(cp);
    }
    bool used = false;
    for (std::size_t c = 0; containers != nullptr && c < containers->size(); ++c) {
      const auto& con = (*containers)[c];
      if (!con.is_object())
        continue;
      std::vector<std::pair<std::string, const nlohmann::json*>> lists;
      for (const char* key : {"command", "args"}) {
        if (con.contains(key)) {
          if (!con.at(key).is_array()) {
            throw io::InputError(f.path, cptr + "/" + std::to_string(c) + "/" + key,
                                 "expected an array of strings");
          }
          lists.emplace_back(key, &con.at(key));
        }
      }
      bool runs_ca = false;
      for (const auto& [key, list] : lists) {
        for (const auto& w : *list) {
          if (w.is_string() &&
              w.get<std::string>().find("cluster-autoscaler") != std::string::npos &&
              w.get<std::string>().rfind("--", 0) != 0)
            runs_ca = true;
        }
      }
      if (!runs_ca)
        continue;
      if (found) {
        throw io::InputError(f.path, cptr + "/" + std::to_string(c),
                             "a second cluster-autoscaler container; give one per file");
      }
      found = used = true;
      for (const auto& [key, list] : lists) {
        for (std::size_t k = 0; k < list->size(); ++k) {
          const std::string wptr =
              cptr + "/" + std::to_string(c) + "/" + key + "/" + std::to_string(k);
          const auto& w = (*list)[k];
          if (!w.is_string())
            throw io::InputError(f.path, wptr, "expected a string, got " + io::describe_json(w));
          const std::string s = w.get<std::string>();
          if (s.rfind("--", 0) != 0)
            continue;  // the program itself
          for (auto& flag : flags_of_text(f.path, s)) {
            flag.pointer = wptr;
            flags.push_back(std::move(flag));
          }
        }
      }
    }
    if (!used) {
      out.notes.push_back({f.path, ptr,
                           "not modelled: a " + (kind.empty() ? std::string("document") : kind) +
                               " without a cluster-autoscaler container (RBAC, service accounts "
                               "and the like do not change a what-if)"});
    }
  }
  if (!found) {
    throw io::InputError(f.path, "",
                         "no Deployment with a cluster-autoscaler container (command or args "
                         "running cluster-autoscaler) found");
  }
  return flags;
}

double duration_value(const ConfigFile& f, const Flag& flag) {
  const auto s = io::parse_go_duration(flag.value);
  if (!flag.has_value || !s) {
    throw io::InputError(
        f.path, flag.pointer,
        "--" + flag.name + ": expected a Go duration like \"10m\", got \"" + flag.value + "\"");
  }
  return *s;
}

double number_value(const ConfigFile& f, const Flag& flag, double min, double max) {
  double v = 0.0;
  const auto res = std::from_chars(flag.value.data(), flag.value.data() + flag.value.size(), v);
  if (!flag.has_value || res.ec != std::errc() ||
      res.ptr != flag.value.data() + flag.value.size() || v < min || v > max) {
    throw io::InputError(f.path, flag.pointer,
                         "--" + flag.name + ": expected a number in [" + io::describe_json(min) +
                             ", " + io::describe_json(max) + "], got \"" + flag.value + "\"");
  }
  return v;
}

bool bool_value(const ConfigFile& f, const Flag& flag) {
  if (!flag.has_value || flag.value == "true")
    return true;
  if (flag.value == "false")
    return false;
  throw io::InputError(f.path, flag.pointer,
                       "--" + flag.name + ": expected true or false, got \"" + flag.value + "\"");
}

// --nodes=MIN:MAX:NAME
NodeGroup node_group(const ConfigFile& f, const Flag& flag) {
  const auto bad = [&] {
    return io::InputError(
        f.path, flag.pointer,
        "--nodes: expected MIN:MAX:NAME like 0:16:p4d-on-demand, got \"" + flag.value + "\"");
  };
  const auto c1 = flag.value.find(':');
  const auto c2 = c1 == std::string::npos ? c1 : flag.value.find(':', c1 + 1);
  if (c2 == std::string::npos)
    throw bad();
  NodeGroup g;
  const auto parse = [&](std::size_t from, std::size_t to, int& out) {
    const auto res = std::from_chars(flag.value.data() + from, flag.value.data() + to, out);
    if (from == to || res.ec != std::errc() || res.ptr != flag.value.data() + to || out < 0 ||
        out > 100000)
      throw bad();
  };
  int max = 0;
  parse(0, c1, g.min_nodes);
  parse(c1 + 1, c2, max);
  g.max_nodes = max;
  g.name = flag.value.substr(c2 + 1);
  if (g.name.empty() || g.min_nodes > max)
    throw bad();
  return g;
}

}  // namespace

ConfigReading read_cluster_autoscaler(const ConfigFile& file) {
  ConfigReading out;
  out.policy.format = ConfigFormat::kClusterAutoscaler;
  out.policy.preset = "cluster-autoscaler";
  out.policy.name = "cluster-autoscaler";
  const std::vector<Flag> flags =
      file.json.is_null() ? flags_of_text(file.path, file.text) : flags_of_manifest(file, out);
  nlohmann::json knobs = nlohmann::json::object();
  std::set<std::string> seen;
  std::set<std::string> group_names;
  bool scale_down = true;
  for (const auto& flag : flags) {
    if (flag.name != "nodes" && !seen.insert(flag.name).second) {
      throw io::InputError(file.path, flag.pointer, "--" + flag.name + " given twice");
    }
    if (const auto d = duration_flags().find(flag.name); d != duration_flags().end()) {
      const double s = duration_value(file, flag);
      if (s > kNeverS) {
        throw io::InputError(file.path, flag.pointer,
                             "--" + flag.name + ": expected at most 8760h (365 days)");
      }
      knobs[d->second] = duration_knob(s);
    } else if (flag.name == "scale-down-gpu-utilization-threshold") {
      knobs["scale_down_gpu_utilization_threshold"] = number_value(file, flag, 0.0, 1.0);
    } else if (flag.name == "max-empty-bulk-delete") {
      knobs["max_empty_bulk_delete"] = static_cast<std::int64_t>(number_value(file, flag, 1, 1e6));
    } else if (flag.name == "scale-down-enabled") {
      scale_down = bool_value(file, flag);
    } else if (flag.name == "expander") {
      const std::string first = flag.value.substr(0, flag.value.find(','));
      if (first == "priority" || first == "price") {
        knobs["expander"] = first;
      } else {
        out.unmodelled.push_back(
            {file.path, flag.pointer,
             "not modelled: --expander=" + flag.value + " (capsim's expanders: priority, price)"});
      }
      if (flag.value.find(',') != std::string::npos) {
        out.unmodelled.push_back(
            {file.path, flag.pointer,
             "not modelled: expander fallbacks after " + first + " (capsim uses the first)"});
      }
    } else if (flag.name == "nodes") {
      NodeGroup g = node_group(file, flag);
      if (!group_names.insert(g.name).second)
        throw io::InputError(file.path, flag.pointer, "node group \"" + g.name + "\" given twice");
      out.policy.groups.push_back(std::move(g));
    } else if (no_effect_flags().count(flag.name) > 0) {
      out.notes.push_back({file.path, flag.pointer,
                           "not modelled: --" + flag.name + " (" + why_no_effect(flag.name) + ")"});
    } else {
      out.unmodelled.push_back(
          {file.path, flag.pointer,
           "not modelled: --" + flag.name + " (capsim models the flags listed in docs/whatif.md)"});
    }
  }
  if (!scale_down)
    knobs["scale_down_unneeded_time"] = duration_knob(kNeverS);
  out.policy.knobs = complete_knobs("cluster-autoscaler", knobs);
  return out;
}

std::string write_cluster_autoscaler(const ImportedPolicy& policy) {
  std::ostringstream os;
  os << "# cluster-autoscaler flags written by capsim whatif --emit for policy \"" << policy.name
     << "\"\n# (add them to the container's args, one per list item)\n";
  const auto& k = policy.knobs;
  for (const auto& [flag, knob] : duration_flags()) {
    const double s = knob_seconds(k.at(knob));
    if (knob == "scale_down_unneeded_time" && s >= kNeverS) {
      os << "--scale-down-enabled=false\n";
      continue;
    }
    os << "--" << flag << "=" << io::format_go_duration(s) << "\n";
  }
  os << "--scale-down-gpu-utilization-threshold="
     << io::describe_json(k.at("scale_down_gpu_utilization_threshold")) << "\n";
  os << "--max-empty-bulk-delete=" << k.at("max_empty_bulk_delete").get<std::int64_t>() << "\n";
  os << "--expander=" << k.at("expander").get<std::string>() << "\n";
  for (const auto& g : policy.groups)
    os << "--nodes=" << g.min_nodes << ":" << g.max_nodes.value_or(0) << ":" << g.name << "\n";
  return os.str();
}

}  // namespace capsim::whatif
