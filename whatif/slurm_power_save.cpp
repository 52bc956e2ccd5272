#include "whatif/slurm_power_save.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/key_value_lines.hpp"
#include "whatif/policy.hpp"

namespace capsim::whatif {
namespace {

constexpr std::size_t kMaxHosts = 100000;
// Host names a whole file may expand to (each node is named on its NodeName line, its
// partitions' and SuspendExcNodes): ten lists of the largest size.
constexpr std::size_t kMaxHostsPerFile = 10 * kMaxHosts;
// The longest host name: a DNS name's 255 octets (RFC 1035 section 2.3.4).
constexpr std::size_t kMaxHostNameChars = 255;

// Splits at commas outside brackets.
std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (const char c : s) {
    if (c == '[')
      ++depth;
    if (c == ']')
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// The length of `name` without its bracketed ranges: what every host it expands to at least has.
std::size_t fixed_chars(const std::string& name) {
  std::size_t chars = 0;
  int depth = 0;
  for (const char c : name) {
    depth += c == '[' ? 1 : 0;
    chars += depth == 0 ? 1 : 0;
    depth -= c == ']' && depth > 0 ? 1 : 0;
  }
  return chars;
}

// One range of a bracket group: "008-010" (zero padding kept from the lower bound) or "7".
struct HostRange {
  long lo = 0;
  long hi = 0;
  std::size_t width = 0;
};

// The ranges of one bracket group's text, checked.
std::vector<HostRange> parse_ranges(const std::string& text, const std::string& name,
                                    const std::string& file, const std::string& where) {
  std::vector<HostRange> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string range =
        text.substr(start, comma == std::string::npos ? comma : comma - start);
    const auto dash = range.find('-');
    const std::string lo = range.substr(0, dash);
    const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
    long a = 0;
    long b = 0;
    const auto r1 = std::from_chars(lo.data(), lo.data() + lo.size(), a);
    const auto r2 = std::from_chars(hi.data(), hi.data() + hi.size(), b);
    if (lo.empty() || hi.empty() || r1.ec != std::errc() || r1.ptr != lo.data() + lo.size() ||
        r2.ec != std::errc() || r2.ptr != hi.data() + hi.size() || a < 0 || b < a) {
      throw io::InputError(file, where, "hostlist \"" + name + "\": bad range \"" + range + "\"");
    }
    out.push_back({a, b, lo.size()});
    if (comma == std::string::npos)
      return out;
    start = comma + 1;
  }
}

// Expands one hostlist expression ("r[1-2]n[01-16]", or a plain name) into `out`, first group
// outermost. Every group is parsed and checked, and the hosts counted, before any is written, so
// an expression of many groups costs no more than the hosts it names (at most kMaxHosts).
void expand_one(const std::string& name, const std::string& file, const std::string& where,
                std::vector<std::string>& out) {
  if (fixed_chars(name) > kMaxHostNameChars) {
    throw io::InputError(file, where,
                         "hostlist \"" + name.substr(0, 40) + "...\": host names longer than " +
                             std::to_string(kMaxHostNameChars) + " characters");
  }
  std::vector<std::string> literals{""};  // the text before, between and after the groups
  std::vector<std::vector<HostRange>> groups;
  for (std::size_t i = 0; i < name.size();) {
    const auto open = name.find('[', i);
    literals.back() += name.substr(i, open == std::string::npos ? open : open - i);
    if (open == std::string::npos)
      break;
    const auto close = name.find(']', open);
    if (close == std::string::npos)
      throw io::InputError(file, where, "hostlist \"" + name + "\": \"[\" without \"]\"");
    groups.push_back(parse_ranges(name.substr(open + 1, close - open - 1), name, file, where));
    literals.emplace_back();
    i = close + 1;
  }
  const bool stray = std::any_of(literals.begin(), literals.end(), [](const std::string& l) {
    return l.find(']') != std::string::npos;
  });
  if (name.empty() || stray)
    throw io::InputError(file, where, "malformed hostlist \"" + name + "\"");
  std::size_t hosts = 1;
  for (const auto& group : groups) {
    std::size_t in_group = 0;
    for (const HostRange& r : group)
      in_group += static_cast<std::size_t>(r.hi - r.lo) + 1;
    if (in_group > kMaxHosts || hosts * in_group > kMaxHosts - out.size())
      throw io::InputError(file, where, "hostlist \"" + name + "\": more than 100000 hosts");
    hosts *= in_group;
  }
  // An odometer over the groups' values, the last group turning fastest.
  std::vector<std::size_t> range(groups.size(), 0);
  std::vector<long> value(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g)
    value[g] = groups[g].front().lo;
  for (std::size_t h = 0; h < hosts; ++h) {
    std::string host = literals.front();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      std::string n = std::to_string(value[g]);
      const std::size_t width = groups[g][range[g]].width;
      if (n.size() < width)
        n.insert(0, width - n.size(), '0');  // zero padding of the lower bound
      host += n + literals[g + 1];
    }
    out.push_back(std::move(host));
    for (std::size_t g = groups.size(); g-- > 0;) {
      if (value[g] < groups[g][range[g]].hi) {
        ++value[g];
        break;
      }
      range[g] = range[g] + 1 < groups[g].size() ? range[g] + 1 : 0;
      value[g] = groups[g][range[g]].lo;
      if (range[g] != 0)
        break;
    }
  }
}

struct SlurmNode {
  int gpus = 0;
  int weight = 1;  // Slurm's default Weight
  std::vector<std::string> features;
  int line = 0;
};

// Gres=gpu:8 or gpu:a100:8 (other GRES noted by the caller): the GPU count, 0 without one.
int gpu_count(const std::string& gres, const std::string& file, const std::string& where) {
  for (const auto& item : split_top(gres)) {
    if (item.rfind("gpu:", 0) != 0 && item != "gpu")
      continue;
    const std::string bare = item.substr(0, item.find('('));  // gpu:8(S:0-1): sockets dropped
    const std::string count = bare.substr(bare.rfind(':') + 1);
    int n = 0;
    const auto res = std::from_chars(count.data(), count.data() + count.size(), n);
    if (item == "gpu" || res.ec != std::errc() || res.ptr != count.data() + count.size() || n < 1 ||
        n > 1024)
      throw io::InputError(file, where, "Gres \"" + item + "\": expected gpu:N or gpu:TYPE:N");
    return n;
  }
  return 0;
}

double seconds_value(const io::KeyValue& kv, const std::string& file, const std::string& where,
                     bool infinite_ok) {
  const std::string v = io::lower_ascii(kv.value);
  if (infinite_ok && (v == "infinite" || v == "-1" || v == "none"))
    return kNeverS;
  long n = 0;
  const auto res = std::from_chars(kv.value.data(), kv.value.data() + kv.value.size(), n);
  if (res.ec != std::errc() || res.ptr != kv.value.data() + kv.value.size() || n < 0 ||
      n > static_cast<long>(kNeverS)) {
    throw io::InputError(file, where,
                         kv.key + ": expected whole seconds (0 to 31536000)" +
                             std::string(infinite_ok ? " or INFINITE" : "") + ", got \"" +
                             kv.value + "\"");
  }
  return static_cast<double>(n);
}

int int_value(const io::KeyValue& kv, const std::string& file, const std::string& where, int min,
              int max) {
  int n = 0;
  const auto res = std::from_chars(kv.value.data(), kv.value.data() + kv.value.size(), n);
  if (res.ec != std::errc() || res.ptr != kv.value.data() + kv.value.size() || n < min || n > max) {
    throw io::InputError(file, where,
                         kv.key + ": expected an integer in [" + std::to_string(min) + ", " +
                             std::to_string(max) + "], got \"" + kv.value + "\"");
  }
  return n;
}

// Global keys that change scheduling or power saving in ways capsim does not model.
const std::set<std::string>& unmodelled_keys() {
  static const std::set<std::string> kKeys{"suspendrate",       "preempttype",      "preemptmode",
                                           "prioritytype",      "schedulertype",    "overtimelimit",
                                           "resumefailprogram", "suspendexcstates", "maxnodecount"};
  return kKeys;
}

// A partition name names its nodes when written back ("NAME-[1-N]"), so it may hold none of
// the characters a hostlist or a key=value pair gives a meaning to.
void check_partition_name(const std::string& name, const std::string& file,
                          const std::string& where) {
  const std::size_t bad = name.find_first_of("=[],:");
  if (bad != std::string::npos) {
    throw io::InputError(
        file, where,
        "PartitionName \"" + name + "\": a partition name may not contain '" + name[bad] + "'");
  }
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list, const std::string& file,
                                         const std::string& where) {
  std::vector<std::string> out;
  for (const auto& part : split_top(list))
    expand_one(part, file, where, out);
  return out;
}

ConfigReading read_slurm_conf(const ConfigFile& file, const Catalog& catalog) {
  ConfigReading out;
  out.policy.format = ConfigFormat::kSlurm;
  out.policy.preset = "slurm-power-save";
  const auto& path = file.path;
  nlohmann::json knobs = nlohmann::json::object();
  std::map<std::string, SlurmNode> nodes;  // by host name
  std::size_t hosts_named = 0;
  // Every hostlist of the file, expanded within the file's budget of host names.
  const auto expand = [&](const std::string& list, const std::string& where) {
    std::vector<std::string> hosts = expand_hostlist(list, path, where);
    hosts_named += hosts.size();
    if (hosts_named > kMaxHostsPerFile) {
      throw io::InputError(
          path, where,
          "the file names more than " + std::to_string(kMaxHostsPerFile) + " hosts in all");
    }
    return hosts;
  };
  std::vector<std::string> node_order;
  SlurmNode node_default;
  std::map<std::string, std::string> partition_default;
  struct Partition {
    std::string name;
    std::vector<std::string> hosts;
    int line = 0;
  };
  std::vector<Partition> partitions;
  std::set<std::string> exc_nodes;
  std::set<std::string> exc_parts;
  std::set<std::string> seen;
  std::vector<std::string> other_keys;
  for (const auto& line : io::read_key_value_lines(file.text, path)) {
    const std::string where = "line " + std::to_string(line.line);
    const std::string head = io::lower_ascii(line.pairs.front().key);
    if (head == "nodename") {
      const std::string list = line.pairs.front().value;
      SlurmNode n = node_default;
      n.line = line.line;
      for (std::size_t i = 1; i < line.pairs.size(); ++i) {
        const auto& kv = line.pairs[i];
        const std::string k = io::lower_ascii(kv.key);
        if (k == "gres") {
          n.gpus = gpu_count(kv.value, path, where);
        } else if (k == "weight") {
          n.weight = int_value(kv, path, where, 0, 65533);
        } else if (k == "feature" || k == "features") {
          n.features.clear();
          for (const auto& f : split_top(kv.value))
            n.features.push_back(f);
        } else if (k == "state" || k == "cpus" || k == "realmemory" || k == "sockets" ||
                   k == "corespersocket" || k == "threadspercore" || k == "boards" ||
                   k == "tmpdisk" || k == "nodeaddr" || k == "nodehostname" || k == "port" ||
                   k == "memspeclimit" || k == "corespeccount" || k == "cpuspeclist") {
          // the node's hardware and addressing: capsim packs GPUs only
        } else {
          out.notes.push_back({path, where, "not modelled: NodeName " + kv.key});
        }
      }
      if (io::lower_ascii(list) == "default") {
        node_default = n;
        continue;
      }
      for (const auto& host : expand(list, where)) {
        if (nodes.count(host) > 0)
          throw io::InputError(path, where, "node \"" + host + "\" defined twice");
        nodes[host] = n;
        node_order.push_back(host);
      }
      continue;
    }
    if (head == "partitionname") {
      std::map<std::string, std::string> attrs = partition_default;
      for (std::size_t i = 1; i < line.pairs.size(); ++i)
        attrs[io::lower_ascii(line.pairs[i].key)] = line.pairs[i].value;
      if (io::lower_ascii(line.pairs.front().value) == "default") {
        partition_default = attrs;
        continue;
      }
      Partition p;
      p.name = line.pairs.front().value;
      p.line = line.line;
      check_partition_name(p.name, path, where);
      if (attrs.count("nodes") == 0)
        throw io::InputError(path, where, "PartitionName " + p.name + " without Nodes=");
      p.hosts = io::lower_ascii(attrs.at("nodes")) == "all" ? node_order
                                                            : expand(attrs.at("nodes"), where);
      for (const auto& [k, v] : attrs) {
        if (k == "nodes" || k == "state" || k == "default")
          continue;
        if (k == "maxtime" || k == "defaulttime" || k == "priorityjobfactor" ||
            k == "prioritytier" || k == "maxnodes" || k == "minnodes" || k == "oversubscribe" ||
            k == "preemptmode") {
          out.unmodelled.push_back({path, where,
                                    "not modelled: PartitionName " + k +
                                        " (capsim's scheduler has no per-partition "
                                        "limits, priorities or sharing)"});
        } else {
          out.notes.push_back({path, where, "not modelled: PartitionName " + k});
        }
      }
      for (const auto& other : partitions) {
        if (other.name == p.name)
          throw io::InputError(path, where, "partition \"" + p.name + "\" defined twice");
      }
      partitions.push_back(std::move(p));
      continue;
    }
    for (const auto& kv : line.pairs) {
      const std::string k = io::lower_ascii(kv.key);
      if (!seen.insert(k).second)
        throw io::InputError(path, where, kv.key + " given twice");
      if (k == "suspendtime") {
        knobs["suspend_time"] = duration_knob(seconds_value(kv, path, where, true));
      } else if (k == "suspendtimeout") {
        knobs["suspend_timeout"] = duration_knob(seconds_value(kv, path, where, false));
      } else if (k == "resumetimeout") {
        knobs["resume_timeout"] = duration_knob(seconds_value(kv, path, where, false));
      } else if (k == "resumerate") {
        knobs["resume_rate"] = int_value(kv, path, where, 0, 1000000000);
      } else if (k == "suspendexcnodes") {
        for (const auto& h : expand(kv.value.substr(0, kv.value.find(':')), where))
          exc_nodes.insert(h);
        if (kv.value.find(':') != std::string::npos) {
          out.unmodelled.push_back({path, where,
                                    "not modelled: SuspendExcNodes with a :count "
                                    "(capsim keeps every listed node up)"});
        }
      } else if (k == "suspendexcparts") {
        for (const auto& part : split_top(kv.value))
          exc_parts.insert(part);
      } else if (k == "slurmctldparameters") {
        for (const auto& param : split_top(kv.value)) {
          if (param.rfind("power_save_interval=", 0) == 0) {
            const io::KeyValue v{"power_save_interval", param.substr(20)};
            knobs["power_save_interval"] = duration_knob(seconds_value(v, path, where, false));
            if (knob_seconds(knobs["power_save_interval"]) <= 0)
              throw io::InputError(path, where, "power_save_interval must be positive");
          } else {
            out.notes.push_back({path, where, "not modelled: SlurmctldParameters " + param});
          }
        }
      } else if (unmodelled_keys().count(k) > 0) {
        out.unmodelled.push_back({path, where,
                                  "not modelled: " + kv.key +
                                      " (capsim's scheduler is first-fit without "
                                      "preemption; power-downs are not rate-limited)"});
      } else if (k == "resumeprogram" || k == "suspendprogram") {
        out.notes.push_back(
            {path, where,
             "not modelled: " + kv.key + " (the what-if's pools give the launch delays)"});
      } else {
        other_keys.push_back(kv.key);
      }
    }
  }
  if (!other_keys.empty()) {
    out.notes.push_back({path, "",
                         "not modelled (" + io::join_names(other_keys) +
                             "): daemons, authentication, logging and accounting do "
                             "not change a what-if"});
  }
  if (partitions.empty())
    throw io::InputError(path, "", "no PartitionName line: capsim needs the partitions to scale");
  std::set<std::string> in_partition;
  for (const auto& p : partitions) {
    const std::string where = "line " + std::to_string(p.line);
    NodeGroup g;
    g.name = p.name;
    int weight = -1;
    for (const auto& h : p.hosts) {
      const auto it = nodes.find(h);
      if (it == nodes.end())
        throw io::InputError(path, where,
                             "partition " + p.name + ": node \"" + h + "\" has no NodeName line");
      const SlurmNode& n = it->second;
      if (it == nodes.find(p.hosts.front())) {
        g.gpus_per_node = n.gpus;
        weight = n.weight;
        for (const auto& f : n.features) {
          if (catalog.find_instance(f) != nullptr && g.instances.empty())
            g.instances.push_back(f);
        }
      }
      if (n.gpus != g.gpus_per_node) {
        throw io::InputError(path, "line " + std::to_string(n.line),
                             "partition " + p.name + " mixes nodes of " +
                                 std::to_string(g.gpus_per_node) + " and " +
                                 std::to_string(n.gpus) +
                                 " GPUs; capsim's pool has one node type (split the partition)");
      }
      weight = std::min(weight, n.weight);
      if (!in_partition.insert(h).second) {
        out.unmodelled.push_back({path, where,
                                  "not modelled: node " + h +
                                      " in two partitions (capsim's pools do not "
                                      "share nodes)"});
      }
      if (exc_nodes.count(h) > 0 || exc_parts.count(p.name) > 0)
        ++g.min_nodes;
    }
    if (g.gpus_per_node == 0)
      throw io::InputError(path, where, "partition " + p.name + ": its nodes have no Gres=gpu:N");
    g.max_nodes = static_cast<int>(p.hosts.size());
    g.weight = std::max(weight, 0);
    out.policy.groups.push_back(std::move(g));
  }
  // Slurm allocates the lowest-Weight nodes first (slurm.conf, Weight).
  std::stable_sort(out.policy.groups.begin(), out.policy.groups.end(),
                   [](const NodeGroup& a, const NodeGroup& b) { return a.weight < b.weight; });
  out.policy.name = out.policy.groups.front().name;
  out.policy.knobs = complete_knobs("slurm-power-save", knobs);
  return out;
}

std::string write_slurm_conf(const ImportedPolicy& policy) {
  std::ostringstream os;
  const auto& k = policy.knobs;
  const auto secs = [&](const char* knob) {
    return static_cast<long long>(std::llround(knob_seconds(k.at(knob))));
  };
  os << "# slurm.conf power saving, nodes and partitions written by capsim whatif --emit for "
        "policy \""
     << policy.name
     << "\"\n# (merge into your slurm.conf; ResumeProgram and SuspendProgram stay yours)\n";
  os << "SuspendTime=" << secs("suspend_time") << "\n";
  os << "SuspendTimeout=" << secs("suspend_timeout") << "\n";
  os << "ResumeTimeout=" << secs("resume_timeout") << "\n";
  os << "ResumeRate=" << std::llround(k.at("resume_rate").get<double>()) << "\n";
  os << "SlurmctldParameters=power_save_interval=" << secs("power_save_interval") << "\n";
  std::string exc;
  for (const auto& g : policy.groups) {
    if (g.min_nodes > 0)
      exc += (exc.empty() ? "" : ",") + g.name + "-[1-" + std::to_string(g.min_nodes) + "]";
  }
  if (!exc.empty())
    os << "SuspendExcNodes=" << exc << "\n";
  for (const auto& g : policy.groups) {
    const std::string hosts = g.name + "-[1-" + std::to_string(g.max_nodes.value_or(1)) + "]";
    os << "NodeName=" << hosts << " Gres=gpu:" << g.gpus_per_node
       << " State=CLOUD Weight=" << g.weight;
    if (!g.instances.empty())
      os << " Feature=" << g.instances.front();
    os << "\nPartitionName=" << g.name << " Nodes=" << hosts << " State=UP\n";
  }
  return os.str();
}

}  // namespace capsim::whatif
