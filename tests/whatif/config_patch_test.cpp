// --emit of a policy read from a configuration: the user's own files come back, with only the
// values of the knobs the recommended run changed replaced, and they read back as that policy.
#include "whatif/config_patch.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "tests/file_text.hpp"
#include "whatif/policy.hpp"
#include "whatif/policy_emit.hpp"
#include "whatif/policy_source.hpp"
#include "whatif/whatif_io.hpp"

namespace capsim::whatif::config_patch_test {
namespace {

const std::string kConfigs = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/whatif/configs";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// The lines of `after` (without its header line) that differ from `before`'s, which must have
// as many lines plus `appended`.
std::vector<std::string> changed_lines(const std::string& before, const std::string& after,
                                       std::size_t appended = 0) {
  const auto b = lines_of(before);
  auto a = lines_of(after);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a.front().rfind("# ", 0), 0u) << "the header comment";
  a.erase(a.begin());
  EXPECT_EQ(a.size(), b.size() + appended) << after;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i >= b.size() || a[i] != b[i])
      out.push_back(a[i]);
  }
  return out;
}

struct Read {
  ConfigReading reading;
  ImportedSource source;
};

Read read_example(ConfigFormat format, const std::string& file) {
  Read r;
  r.reading = read_config(format, {kConfigs + "/" + file}, builtin_catalog());
  r.source = {r.reading.files, r.reading.policy.knobs, builtin_catalog()};
  return r;
}

// `policy` with `knob` set to `value` (canonical, as a reader gives it).
ImportedPolicy with_knob(ImportedPolicy policy, const std::string& knob,
                         const nlohmann::json& value) {
  policy.knobs[knob] = value;
  policy.knobs = complete_knobs(policy.preset, policy.knobs);
  return policy;
}

void expect_reads_back(ConfigFormat format, const std::string& text, const std::string& name,
                       const ImportedPolicy& wanted) {
  const ConfigReading back = read_config_text(format, text, name, builtin_catalog());
  EXPECT_EQ(complete_knobs(wanted.preset, back.policy.knobs), wanted.knobs) << text;
  EXPECT_EQ(back.policy.groups, wanted.groups) << text;
}

TEST(ConfigPatchTest, UnchangedKnobsGiveTheFileBackAsItWas) {
  const std::vector<std::pair<ConfigFormat, std::string>> examples{
      {ConfigFormat::kKarpenter, "karpenter-nodepools.yaml"},
      {ConfigFormat::kKubeRay, "kuberay-raycluster.yaml"},
      {ConfigFormat::kRay, "ray-cluster.yaml"},
      {ConfigFormat::kClusterAutoscaler, "cluster-autoscaler.yaml"},
      {ConfigFormat::kClusterAutoscaler, "cluster-autoscaler.flags"},
      {ConfigFormat::kSlurm, "slurm.conf"},
  };
  for (const auto& [format, file] : examples) {
    SCOPED_TRACE(file);
    const Read r = read_example(format, file);
    const auto text = patched_config(r.source, r.reading.policy);
    ASSERT_TRUE(text.has_value());
    EXPECT_TRUE(changed_lines(capsim::testing::file_text(kConfigs + "/" + file), *text).empty());
    EXPECT_NE(text->find("unchanged"), std::string::npos) << text->substr(0, 200);
  }
}

TEST(ConfigPatchTest, KarpenterKeepsEverythingButTheChangedKnob) {
  const Read r = read_example(ConfigFormat::kKarpenter, "karpenter-nodepools.yaml");
  const ImportedPolicy wanted = with_knob(r.reading.policy, "consolidate_after", "1800s");
  const auto text = patched_config(r.source, wanted);
  ASSERT_TRUE(text.has_value());
  // Both NodePools state consolidateAfter; labels, taints, the arch requirement, the
  // instance-family selector and the EC2NodeClass stay as written.
  EXPECT_EQ(
      changed_lines(capsim::testing::file_text(kConfigs + "/karpenter-nodepools.yaml"), *text),
      (std::vector<std::string>{"    consolidateAfter: 30m", "    consolidateAfter: 30m"}));
  for (const char* kept : {"team: training", "kubernetes.io/arch", "instance-family",
                           "kind: EC2NodeClass", "effect: NoSchedule"})
    EXPECT_NE(text->find(kept), std::string::npos) << kept;
  EXPECT_NE(text->find("consolidate_after 600s -> 1800s"), std::string::npos);
  expect_reads_back(ConfigFormat::kKarpenter, *text, "n.yaml", wanted);
}

TEST(ConfigPatchTest, QuotedAndFlowScalarsAreReplacedWhole) {
  const Read r = read_example(ConfigFormat::kKarpenter, "karpenter-nodepools.yaml");
  const ImportedPolicy wanted = with_knob(r.reading.policy, "budget_nodes_percent", 25.0);
  const auto text = patched_config(r.source, wanted);
  ASSERT_TRUE(text.has_value());
  for (const auto& line :
       changed_lines(capsim::testing::file_text(kConfigs + "/karpenter-nodepools.yaml"), *text))
    EXPECT_EQ(line, "      - nodes: \"25%\"");
  expect_reads_back(ConfigFormat::kKarpenter, *text, "n.yaml", wanted);
}

TEST(ConfigPatchTest, KubeRayAndRayChangeTheirOwnKeys) {
  {
    const Read r = read_example(ConfigFormat::kKubeRay, "kuberay-raycluster.yaml");
    const ImportedPolicy wanted = with_knob(r.reading.policy, "idle_timeout", "900s");
    const auto text = patched_config(r.source, wanted);
    ASSERT_TRUE(text.has_value());
    const auto changed =
        changed_lines(capsim::testing::file_text(kConfigs + "/kuberay-raycluster.yaml"), *text);
    ASSERT_EQ(changed.size(), 1u);
    EXPECT_NE(changed.front().find("idleTimeoutSeconds: 900"), std::string::npos);
    expect_reads_back(ConfigFormat::kKubeRay, *text, "r.yaml", wanted);
  }
  {
    const Read r = read_example(ConfigFormat::kRay, "ray-cluster.yaml");
    const ImportedPolicy wanted = with_knob(r.reading.policy, "upscaling_speed", 2.5);
    const auto text = patched_config(r.source, wanted);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(changed_lines(capsim::testing::file_text(kConfigs + "/ray-cluster.yaml"), *text),
              std::vector<std::string>{"upscaling_speed: 2.5"});
    EXPECT_NE(text->find("availability_zone: us-east-1a"), std::string::npos);
    expect_reads_back(ConfigFormat::kRay, *text, "r.yaml", wanted);
  }
}

TEST(ConfigPatchTest, ClusterAutoscalerFlagsInAManifestAndAFile) {
  {
    const Read r = read_example(ConfigFormat::kClusterAutoscaler, "cluster-autoscaler.yaml");
    const ImportedPolicy wanted = with_knob(r.reading.policy, "scale_down_unneeded_time", "900s");
    const auto text = patched_config(r.source, wanted);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(
        changed_lines(capsim::testing::file_text(kConfigs + "/cluster-autoscaler.yaml"), *text),
        std::vector<std::string>{"            - --scale-down-unneeded-time=15m"});
    expect_reads_back(ConfigFormat::kClusterAutoscaler, *text, "ca.yaml", wanted);
    // A flag the manifest leaves out has no place in it: the writer's own file instead.
    const ImportedPolicy other = with_knob(r.reading.policy, "scan_interval", "30s");
    EXPECT_FALSE(patched_config(r.source, other).has_value());
  }
  {
    const Read r = read_example(ConfigFormat::kClusterAutoscaler, "cluster-autoscaler.flags");
    const ImportedPolicy wanted = with_knob(r.reading.policy, "scan_interval", "30s");
    const bool stated = capsim::testing::file_text(kConfigs + "/cluster-autoscaler.flags")
                            .find("--scan-interval=") != std::string::npos;
    const auto text = patched_config(r.source, wanted);
    ASSERT_TRUE(text.has_value());
    const auto changed = changed_lines(
        capsim::testing::file_text(kConfigs + "/cluster-autoscaler.flags"), *text, stated ? 0 : 1);
    ASSERT_EQ(changed.size(), 1u);
    EXPECT_NE(changed.front().find("--scan-interval=30s"), std::string::npos);
    expect_reads_back(ConfigFormat::kClusterAutoscaler, *text, "ca.flags", wanted);
  }
}

TEST(ConfigPatchTest, SlurmKeysAndSlurmctldParameters) {
  const Read r = read_example(ConfigFormat::kSlurm, "slurm.conf");
  ImportedPolicy wanted = with_knob(r.reading.policy, "suspend_time", "1200s");
  wanted = with_knob(wanted, "power_save_interval", "30s");
  const auto text = patched_config(r.source, wanted);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(
      changed_lines(capsim::testing::file_text(kConfigs + "/slurm.conf"), *text),
      (std::vector<std::string>{
          "SuspendTime=1200", "SlurmctldParameters=idle_on_node_suspend,power_save_interval=30"}));
  expect_reads_back(ConfigFormat::kSlurm, *text, "slurm.conf", wanted);
}

TEST(ConfigPatchTest, SeveralKarpenterFilesBecomeOneStream) {
  // The NodePools in one file, the EC2NodeClass (after its own `---`) in another.
  const std::string whole = capsim::testing::file_text(kConfigs + "/karpenter-nodepools.yaml");
  const std::size_t split = whole.rfind("---\n");
  ASSERT_NE(split, std::string::npos);
  const std::string dir = ::testing::TempDir() + "/capsim_patch_karpenter";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/pools.yaml") << whole.substr(0, split);
  std::ofstream(dir + "/class.yaml") << whole.substr(split + 4);  // no `---` of its own
  const ConfigReading reading = read_config(
      ConfigFormat::kKarpenter, {dir + "/pools.yaml", dir + "/class.yaml"}, builtin_catalog());
  const ImportedSource source{reading.files, reading.policy.knobs, builtin_catalog()};
  const ImportedPolicy wanted = with_knob(reading.policy, "expire_after", "1440h");
  const auto text = patched_config(source, wanted);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(changed_lines(whole, *text),
            (std::vector<std::string>{"      expireAfter: 1440h", "      expireAfter: 1440h"}));
  EXPECT_NE(text->find("pools.yaml, class.yaml"), std::string::npos);
  expect_reads_back(ConfigFormat::kKarpenter, *text, "n.yaml", wanted);
}

TEST(ConfigPatchTest, SweepVariantEmitsTheUsersFile) {
  const WhatIf w = load_whatif(kConfigs + "/whatif.json");
  const PolicySpec* karpenter = nullptr;
  for (const auto& p : w.policies) {
    if (p.name == "karpenter-nodepools")
      karpenter = &p;
  }
  ASSERT_NE(karpenter, nullptr);
  PolicySpec variant = *karpenter;
  variant.knobs["consolidate_after"] = "45min";
  const auto [name, text] = emitted_file(w, variant);
  EXPECT_EQ(name, "nodepool.yaml");
  EXPECT_NE(text.find("consolidateAfter: 45m"), std::string::npos) << text;
  EXPECT_NE(text.find("kind: EC2NodeClass"), std::string::npos) << text;
}

}  // namespace
}  // namespace capsim::whatif::config_patch_test
