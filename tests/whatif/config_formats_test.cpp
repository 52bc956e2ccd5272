// Autoscaler configurations as what-if policies: what each format's reader maps, the round trip
// read(write(p)) == p on the shipped examples and on seeded random policies, and every bad input
// rejected with its file and JSON pointer or line.
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <random>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "io/input_error.hpp"
#include "tests/file_text.hpp"
#include "tests/io/error_of.hpp"
#include "whatif/cluster_autoscaler_flags.hpp"
#include "whatif/karpenter_config.hpp"
#include "whatif/policy.hpp"
#include "whatif/policy_emit.hpp"
#include "whatif/policy_source.hpp"
#include "whatif/slurm_power_save.hpp"
#include "whatif/whatif_io.hpp"

namespace capsim::whatif {

// Readable failures: the policy as written back.
void PrintTo(const ImportedPolicy& p, std::ostream* os) {
  *os << write_config(p).second;
}

namespace {

using capsim::testing::error_of;

const std::string kConfigs = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/whatif/configs";
const std::string kBad = std::string(CAPSIM_TEST_DATA_DIR) + "/autoscaler/bad";

// Reads `text` as `format`, writes it back and reads that again: the policy must not change.
void expect_round_trip(ConfigFormat format, const ImportedPolicy& policy) {
  const auto [name, text] = write_config(policy);
  ConfigReading again;
  try {
    again = read_config_text(format, text, name, builtin_catalog());
  } catch (const io::InputError& e) {
    FAIL() << e.what() << "\n" << text;
  }
  EXPECT_EQ(again.policy, policy) << text;
  EXPECT_TRUE(again.unmodelled.empty()) << text;
}

struct Example {
  ConfigFormat format;
  std::string file;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> kExamples{
      {ConfigFormat::kKarpenter, "karpenter-nodepools.yaml"},
      {ConfigFormat::kKubeRay, "kuberay-raycluster.yaml"},
      {ConfigFormat::kRay, "ray-cluster.yaml"},
      {ConfigFormat::kClusterAutoscaler, "cluster-autoscaler.yaml"},
      {ConfigFormat::kClusterAutoscaler, "cluster-autoscaler.flags"},
      {ConfigFormat::kSlurm, "slurm.conf"},
  };
  return kExamples;
}

TEST(ConfigFormatsTest, ShippedExamplesRoundTrip) {
  for (const auto& e : examples()) {
    SCOPED_TRACE(e.file);
    const ConfigReading r = read_config(e.format, {kConfigs + "/" + e.file}, builtin_catalog());
    EXPECT_TRUE(r.unmodelled.empty());
    EXPECT_NE(make_policy(r.policy.name, r.policy.preset, r.policy.knobs, e.file, "").preset, "");
    expect_round_trip(e.format, r.policy);
  }
}

TEST(ConfigFormatsTest, KarpenterMapping) {
  const ConfigReading r = read_config(ConfigFormat::kKarpenter,
                                      {kConfigs + "/karpenter-nodepools.yaml"}, builtin_catalog());
  EXPECT_EQ(r.policy.preset, "karpenter");
  EXPECT_EQ(r.policy.knobs.at("consolidation_policy"), "WhenEmpty");
  EXPECT_EQ(r.policy.knobs.at("consolidate_after"), "600s");
  EXPECT_EQ(r.policy.knobs.at("expire_after"), "2592000s");
  ASSERT_EQ(r.policy.groups.size(), 2u);
  EXPECT_EQ(r.policy.groups[0].instances, std::vector<std::string>{"p4d.24xlarge"});
  EXPECT_EQ(r.policy.groups[0].pricings, std::vector<Pricing>{Pricing::kOnDemand});
  EXPECT_EQ(r.policy.groups[0].max_gpus, 192);
  // instance-family p4d selects the catalog's p4d sizes
  EXPECT_EQ(r.policy.groups[1].instances, std::vector<std::string>{"p4d.24xlarge"});
  EXPECT_EQ(r.policy.groups[1].pricings, std::vector<Pricing>{Pricing::kSpot});
  EXPECT_EQ(r.policy.groups[1].node_class, "gpu");
}

TEST(ConfigFormatsTest, KarpenterDefaultsAndNever) {
  const std::string yaml = R"(apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [h100]}
      expireAfter: Never
  disruption:
    consolidateAfter: Never
  weight: 50
)";
  const ConfigReading r =
      read_config_text(ConfigFormat::kKarpenter, yaml, "np.yaml", builtin_catalog());
  EXPECT_EQ(r.policy.knobs.at("consolidation_policy"), "WhenEmptyOrUnderutilized");
  EXPECT_EQ(r.policy.knobs.at("consolidate_after"), "31536000s");
  EXPECT_EQ(r.policy.knobs.at("expire_after"), "31536000s");
  EXPECT_EQ(r.policy.knobs.at("budget_nodes_percent"), 10.0);
  // without a capacity-type requirement Karpenter launches on-demand
  EXPECT_EQ(r.policy.groups[0].pricings, std::vector<Pricing>{Pricing::kOnDemand});
  for (const auto& i : r.policy.groups[0].instances)
    EXPECT_NE(builtin_catalog().find_instance(i)->gpu.name.find("H100"), std::string::npos) << i;
  EXPECT_EQ(r.policy.groups[0].weight, 50);
  expect_round_trip(ConfigFormat::kKarpenter, r.policy);
}

TEST(ConfigFormatsTest, ClusterAutoscalerMapping) {
  const ConfigReading r = read_config(ConfigFormat::kClusterAutoscaler,
                                      {kConfigs + "/cluster-autoscaler.yaml"}, builtin_catalog());
  EXPECT_EQ(r.policy.knobs.at("scale_down_unneeded_time"), "300s");
  EXPECT_EQ(r.policy.knobs.at("max_node_provision_time"), "1200s");
  EXPECT_EQ(r.policy.knobs.at("scan_interval"), "10s");  // CA's default, not in the file
  ASSERT_EQ(r.policy.groups.size(), 2u);
  EXPECT_EQ(r.policy.groups[0].name, "p4d-od");
  EXPECT_EQ(r.policy.groups[0].min_nodes, 2);
  EXPECT_EQ(r.policy.groups[0].max_nodes, 24);
  const ConfigReading off = read_config_text(ConfigFormat::kClusterAutoscaler,
                                             "--scale-down-enabled=false\n--expander=least-waste\n",
                                             "ca.flags", builtin_catalog());
  EXPECT_EQ(off.policy.knobs.at("scale_down_unneeded_time"), "31536000s");
  ASSERT_EQ(off.unmodelled.size(), 1u);
  EXPECT_EQ(off.unmodelled[0].pointer, "line 2");
}

TEST(ConfigFormatsTest, SlurmMapping) {
  const ConfigReading r =
      read_config(ConfigFormat::kSlurm, {kConfigs + "/slurm.conf"}, builtin_catalog());
  EXPECT_EQ(r.policy.knobs.at("suspend_time"), "600s");
  EXPECT_EQ(r.policy.knobs.at("suspend_timeout"), "120s");
  EXPECT_EQ(r.policy.knobs.at("resume_timeout"), "1800s");
  EXPECT_EQ(r.policy.knobs.at("power_save_interval"), "10s");
  ASSERT_EQ(r.policy.groups.size(), 2u);
  EXPECT_EQ(r.policy.groups[0].name, "p4d-od");  // Weight 1 before Weight 10
  EXPECT_EQ(r.policy.groups[0].min_nodes, 2);    // SuspendExcNodes
  EXPECT_EQ(r.policy.groups[0].max_nodes, 24);
  EXPECT_EQ(r.policy.groups[0].gpus_per_node, 8);
  EXPECT_EQ(r.policy.groups[1].instances, std::vector<std::string>{"p4d.24xlarge"});
}

TEST(ConfigFormatsTest, SlurmHostlists) {
  EXPECT_EQ(expand_hostlist("gpu-[008-010],x", "f", "line 1"),
            (std::vector<std::string>{"gpu-008", "gpu-009", "gpu-010", "x"}));
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]", "f", "line 1"),
            (std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(error_of([] { (void)expand_hostlist("a[3-1]", "f", "line 4"); }),
            "f:line 4: hostlist \"a[3-1]\": bad range \"3-1\"");
  EXPECT_NE(error_of([] { (void)expand_hostlist("a[0-999999]", "f", "line 1"); }), "no error");
  // Every group is checked and the hosts counted before any is expanded: a bad last group or a
  // product of groups past the limit is named at once.
  EXPECT_EQ(error_of([] { (void)expand_hostlist("a[0-999]b[0-999]c[x]", "f", "line 3"); }),
            "f:line 3: hostlist \"a[0-999]b[0-999]c[x]\": bad range \"x\"");
  EXPECT_EQ(error_of([] { (void)expand_hostlist("a[0-999]b[0-999]", "f", "line 3"); }),
            "f:line 3: hostlist \"a[0-999]b[0-999]\": more than 100000 hosts");
  EXPECT_EQ(error_of([] { (void)expand_hostlist("a[1-2]b]", "f", "line 5"); }),
            "f:line 5: malformed hostlist \"a[1-2]b]\"");
  EXPECT_EQ(expand_hostlist("n[1,3-4]x[9-10]", "f", "line 1"),
            (std::vector<std::string>{"n1x9", "n1x10", "n3x9", "n3x10", "n4x9", "n4x10"}));
  // Host names are DNS names: at most 255 characters, checked before anything is expanded.
  const std::string long_name = std::string(300, 'x') + "[1-99999]";
  EXPECT_EQ(error_of([&] { (void)expand_hostlist(long_name, "f", "line 2"); }),
            "f:line 2: hostlist \"" + std::string(40, 'x') +
                "...\": host names longer than 255 characters");
}

// However many lines a file has, it names at most ten lists' worth of hosts in all.
TEST(ConfigFormatsTest, SlurmFilesHaveAHostBudget) {
  std::string text = "SuspendTime=600\n";
  for (int i = 0; i < 11; ++i)
    text += "NodeName=n" + std::to_string(i) + "-[1-99999] Gres=gpu:8 State=CLOUD\n";
  const std::string err = error_of(
      [&] { (void)read_config_text(ConfigFormat::kSlurm, text, "big.conf", builtin_catalog()); });
  EXPECT_EQ(err, "big.conf:line 12: the file names more than 1000000 hosts in all");
}

TEST(ConfigFormatsTest, BadInputsNameFileAndPointer) {
  std::ifstream in(kBad + "/EXPECTED.tsv");
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string format, file, expected;
    std::getline(fields, format, '\t');
    std::getline(fields, file, '\t');
    std::getline(fields, expected);
    SCOPED_TRACE(file);
    const std::string text = capsim::testing::file_text(kBad + "/" + file);
    const std::string got = error_of([&] {
      (void)read_config_text(*config_format_from_string(format), text, file, builtin_catalog());
    });
    EXPECT_EQ(got.substr(0, expected.size()), expected) << got;
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(ConfigFormatsTest, UnmodelledKeysFailUnlessAllowed) {
  const std::string file = kBad + "/whatif_unmodelled.json";
  const std::string err = error_of([&] { (void)load_whatif(file); });
  EXPECT_NE(err.find("karpenter_cpu_limit.yaml:/spec/limits/cpu: not modelled"), std::string::npos)
      << err;
  EXPECT_NE(err.find("--allow-unmodelled"), std::string::npos) << err;
  WhatIfReadOptions allow;
  allow.allow_unmodelled = true;
  const WhatIf w = load_whatif(file, allow);
  ASSERT_EQ(w.policies.size(), 1u);
  ASSERT_EQ(w.policies[0].pools.size(), 1u);
  EXPECT_EQ(w.policies[0].pools[0].max_nodes, 4);  // 64 GPUs would allow 8; the pool holds 4
  EXPECT_EQ(w.policies[0].pools[0].min_nodes, 0);
  bool noted = false;
  for (const auto& n : w.notes)
    noted = noted || n.pointer == "/spec/limits/cpu";
  EXPECT_TRUE(noted);
}

TEST(ConfigFormatsTest, GroupsMapOntoTheWhatIfPools) {
  const WhatIf w = load_whatif(kConfigs + "/whatif.json");
  std::map<std::string, std::vector<std::string>> pools;
  for (const auto& p : w.policies) {
    for (const auto& pool : p.pools)
      pools[p.name].push_back(pool.name + ":" + std::to_string(pool.min_nodes) + "-" +
                              std::to_string(pool.max_nodes));
  }
  EXPECT_EQ(pools["karpenter-nodepools"],
            (std::vector<std::string>{"gpu-on-demand/p4d-od:0-24", "gpu-spot/p4d-spot:0-16"}));
  EXPECT_EQ(pools["raycluster-autoscaler"], (std::vector<std::string>{"gpu-group/p4d-od:0-24"}));
  EXPECT_EQ(pools["ca-deployment"], (std::vector<std::string>{"p4d-od:2-24", "p4d-spot:0-16"}));
  EXPECT_EQ(pools["slurm"], (std::vector<std::string>{"p4d-od:2-24", "p4d-spot:0-16"}));
  EXPECT_TRUE(pools["karpenter-default"].empty());  // a preset runs on the what-if's pools
}

TEST(ConfigFormatsTest, NativePolicyEmitsAsKarpenter) {
  const WhatIf w = load_whatif(kConfigs + "/whatif.json");
  PolicySpec ca = make_policy("ca", "cluster-autoscaler",
                              nlohmann::json{{"scale_down_unneeded_time", "5min"}}, "t", "");
  const auto [name, text] = emitted_file(w, ca);
  EXPECT_EQ(name, "nodepool.yaml");
  const ConfigReading r = read_config_text(ConfigFormat::kKarpenter, text, name, builtin_catalog());
  EXPECT_EQ(r.policy.knobs.at("consolidate_after"), "300s");
  EXPECT_EQ(r.policy.knobs.at("consolidation_policy"), "WhenEmptyOrUnderutilized");
  ASSERT_EQ(r.policy.groups.size(), 2u);
  EXPECT_EQ(r.policy.groups[0].max_gpus, 24 * 8);
}

// Seeded random policies of every format survive write then read unchanged.
class RandomPolicy {
 public:
  explicit RandomPolicy(std::uint64_t seed) : rng_(seed) {}

  ImportedPolicy make(ConfigFormat format) {
    ImportedPolicy p;
    p.format = format;
    p.name = "policy-" + std::to_string(pick(0, 999));
    const int groups = pick(1, 3);
    for (int g = 0; g < groups; ++g)
      p.groups.push_back(group(format, g));
    switch (format) {
      case ConfigFormat::kKarpenter:
        p.preset = "karpenter";
        p.knobs = {{"consolidation_policy", pick(0, 1) ? "WhenEmpty" : "WhenEmptyOrUnderutilized"},
                   {"consolidate_after", duration_knob(pick(0, 7200))},
                   {"budget_nodes_percent", static_cast<double>(pick(0, 100))},
                   {"expire_after", duration_knob(pick(1, 2000) * 3600.0)}};
        std::stable_sort(p.groups.begin(), p.groups.end(),
                         [](const auto& a, const auto& b) { return a.weight > b.weight; });
        for (auto& g : p.groups)
          g.weight = p.groups.front().weight;  // equal weights: no unmodelled ordering
        p.name = p.groups.front().name;        // a NodePool stream has no name of its own
        break;
      case ConfigFormat::kKubeRay:
        p.preset = "kuberay-v2";
        p.knobs = complete_knobs(p.preset,
                                 {{"upscaling_mode", pick(0, 1) ? "Conservative" : "Aggressive"},
                                  {"idle_timeout", duration_knob(pick(0, 3600))}});
        break;
      case ConfigFormat::kRay:
        p.preset = "ray-v1";
        p.knobs = complete_knobs(p.preset, {{"upscaling_speed", pick(0, 40) / 8.0},
                                            {"idle_timeout", duration_knob(pick(0, 120) * 60.0)}});
        break;
      case ConfigFormat::kClusterAutoscaler:
        p.preset = "cluster-autoscaler";
        p.name = "cluster-autoscaler";  // flags have no name
        p.knobs = complete_knobs(p.preset,
                                 {{"scan_interval", duration_knob(pick(1, 60))},
                                  {"scale_down_unneeded_time", duration_knob(pick(0, 4000))},
                                  {"max_node_provision_time", duration_knob(pick(60, 3600))},
                                  {"scale_down_gpu_utilization_threshold", pick(0, 100) / 100.0},
                                  {"max_empty_bulk_delete", pick(1, 50)},
                                  {"expander", pick(0, 1) ? "price" : "priority"}});
        break;
      case ConfigFormat::kSlurm:
        p.preset = "slurm-power-save";
        p.knobs = complete_knobs(p.preset, {{"suspend_time", duration_knob(pick(0, 7200))},
                                            {"suspend_timeout", duration_knob(pick(0, 600))},
                                            {"resume_timeout", duration_knob(pick(60, 7200))},
                                            {"resume_rate", static_cast<double>(pick(0, 500))},
                                            {"power_save_interval", duration_knob(pick(1, 60))}});
        std::stable_sort(p.groups.begin(), p.groups.end(),
                         [](const auto& a, const auto& b) { return a.weight < b.weight; });
        p.name = p.groups.front().name;
        break;
    }
    return p;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  NodeGroup group(ConfigFormat format, int index) {
    const auto names = builtin_catalog().instance_names();
    NodeGroup g;
    g.name = "group-" + std::to_string(index);
    const std::string instance =
        names[static_cast<std::size_t>(pick(0, static_cast<int>(names.size()) - 1))];
    const int max = pick(1, 64);
    switch (format) {
      case ConfigFormat::kKarpenter:
        g.instances = {instance};
        g.pricings = std::vector<std::vector<Pricing>>{
            {Pricing::kOnDemand},
            {Pricing::kSpot},
            {Pricing::kOnDemand, Pricing::kSpot},
            {Pricing::kCapacityBlock, Pricing::kReserved}}[static_cast<std::size_t>(pick(0, 3))];
        if (pick(0, 1))
          g.max_gpus = pick(0, 512);
        g.weight = pick(0, 1) ? pick(1, 100) : 0;
        g.node_class = pick(0, 1) ? "default" : "gpu";
        break;
      case ConfigFormat::kKubeRay:
      case ConfigFormat::kRay:
        g.min_nodes = pick(0, max);
        if (pick(0, 3) > 0)
          g.max_nodes = max;
        else
          g.min_nodes = 0;
        if (pick(0, 1))
          g.instances = {instance};
        g.pricings = std::vector<std::vector<Pricing>>{
            {}, {Pricing::kOnDemand}, {Pricing::kSpot}}[static_cast<std::size_t>(pick(0, 2))];
        if (format == ConfigFormat::kRay && !g.instances.empty() && g.pricings.empty())
          g.pricings = {Pricing::kOnDemand};  // a node_config means on-demand unless spot
        g.gpus_per_node = pick(1, 8);
        break;
      case ConfigFormat::kClusterAutoscaler:
        g.min_nodes = pick(0, max);
        g.max_nodes = max;
        break;
      case ConfigFormat::kSlurm:
        g.min_nodes = pick(0, max);
        g.max_nodes = max;
        g.gpus_per_node = pick(1, 8);
        g.weight = pick(0, 100);
        if (pick(0, 1))
          g.instances = {instance};
        break;
    }
    return g;
  }

  std::mt19937_64 rng_;
};

TEST(ConfigFormatsTest, RandomPoliciesRoundTrip) {
  for (const ConfigFormat format :
       {ConfigFormat::kKarpenter, ConfigFormat::kKubeRay, ConfigFormat::kRay,
        ConfigFormat::kClusterAutoscaler, ConfigFormat::kSlurm}) {
    for (std::uint64_t seed = 1; seed <= 50; ++seed) {
      SCOPED_TRACE(std::string(to_string(format)) + " seed " + std::to_string(seed));
      expect_round_trip(format, RandomPolicy(seed).make(format));
    }
  }
}

}  // namespace
}  // namespace capsim::whatif

namespace capsim::whatif {
namespace {

TEST(ConfigFormatsTest, OddButValidInputsAreRead) {
  // GRES with a socket binding, a manifest whose kind is not a string
  const ConfigReading slurm =
      read_config_text(ConfigFormat::kSlurm,
                       "NodeName=n[1-2] Gres=gpu:a100:8(S:0-1)\nPartitionName=p Nodes=n[1-2]\n",
                       "slurm.conf", builtin_catalog());
  EXPECT_EQ(slurm.policy.groups.at(0).gpus_per_node, 8);
  EXPECT_EQ(error_of([] {
              (void)read_config_text(ConfigFormat::kClusterAutoscaler, "kind: 5\n", "ca.yaml",
                                     builtin_catalog());
            }),
            "ca.yaml: no Deployment with a cluster-autoscaler container (command or args running "
            "cluster-autoscaler) found");
}

}  // namespace
}  // namespace capsim::whatif
