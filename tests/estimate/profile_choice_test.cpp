// Which profile a scenario runs with, decided without reading a file: the scenario's own, a
// shipped one by GPU family and fabric, the family's kernels with the datasheet network, or the
// datasheet; and why a named profile cannot serve a scenario.
#include "estimate/profile_choice.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace capsim::estimate {
namespace {

const std::vector<std::string> kShipped = {"a100-efa.json", "a100-ib.json", "a100-roce.json",
                                           "h100-efa.json", "h100-ib.json"};

GpuSpec gpu_of(const std::string& name, const std::string& architecture) {
  GpuSpec g{};
  g.name = name;
  g.architecture = architecture;
  return g;
}

Scenario on(bool inter_node, Fabric fabric, const std::string& architecture = "hopper") {
  Scenario s;
  s.name = "s";
  s.cluster.gpu = gpu_of("H100-SXM5-80GB", architecture);
  s.cluster.has_inter_node = inter_node;
  s.cluster.inter_node_fabric = fabric;
  s.cluster.num_nodes = inter_node ? 4 : 1;
  return s;
}

ProfileChoice choose(Scenario s, const std::string& architecture, bool builtin = true) {
  s.cluster.gpu.architecture = architecture;
  return choose_profile(s, builtin, kShipped);
}

TEST(ProfileChoiceTest, ShippedFileByFamilyAndFabric) {
  EXPECT_EQ(shipped_profile_file("ampere", "efa", kShipped), "a100-efa.json");
  EXPECT_EQ(shipped_profile_file("hopper", "infiniband", kShipped), "h100-ib.json");
  EXPECT_EQ(shipped_profile_file("hopper", "roce", kShipped), "");      // not shipped
  EXPECT_EQ(shipped_profile_file("ampere", "ethernet", kShipped), "");  // no such file name
  EXPECT_EQ(shipped_profile_file("blackwell", "infiniband", kShipped), "");
}

TEST(ProfileChoiceTest, NamedFileComesFirst) {
  Scenario s = on(true, Fabric::kEfa);
  s.profile_path = "mine.json";
  EXPECT_EQ(choose(s, "hopper").source, ProfileSource::kNamedFile);
  EXPECT_EQ(choose(s, "hopper", /*builtin=*/false).source, ProfileSource::kNamedFile);
}

TEST(ProfileChoiceTest, ShippedByFabricOrTheFamilysInfiniband) {
  const ProfileChoice efa = choose(on(true, Fabric::kEfa), "hopper");
  EXPECT_EQ(efa.source, ProfileSource::kShipped);
  EXPECT_EQ(efa.shipped_file, "h100-efa.json");
  // One node without an inter-node section: the family's InfiniBand profile, whatever fabric.
  const ProfileChoice single = choose(on(false, Fabric::kEfa), "hopper");
  EXPECT_EQ(single.source, ProfileSource::kShipped);
  EXPECT_EQ(single.shipped_file, "h100-ib.json");
  const ProfileChoice roce = choose(on(true, Fabric::kRoce), "hopper");
  EXPECT_EQ(roce.source, ProfileSource::kShippedDatasheetNetwork);
  EXPECT_EQ(roce.shipped_file, "h100-ib.json");
}

TEST(ProfileChoiceTest, DatasheetForDefinedOrUnprofiledGpus) {
  EXPECT_EQ(choose(on(true, Fabric::kInfiniband), "hopper", /*builtin=*/false).source,
            ProfileSource::kDatasheet);
  EXPECT_EQ(choose(on(true, Fabric::kInfiniband), "blackwell").source, ProfileSource::kDatasheet);
  EXPECT_EQ(choose_profile(on(true, Fabric::kInfiniband), true, {}).source,
            ProfileSource::kDatasheet);
}

TEST(ProfileChoiceTest, NamedProfileMustSuitTheScenario) {
  const Scenario s = on(true, Fabric::kInfiniband);
  HardwareProfile p;
  p.name = "lab";
  p.gpu = gpu_of("A100-SXM4-80GB", "ampere");
  const auto other_family = named_profile_mismatch(p, s);
  ASSERT_TRUE(other_family.has_value());
  EXPECT_EQ(other_family->pointer, "/gpu");
  EXPECT_EQ(other_family->message,
            "profile \"lab\" is for A100-SXM4-80GB, the scenario's GPUs are H100-SXM5-80GB");
  p.gpu = s.cluster.gpu;
  const auto no_inter = named_profile_mismatch(p, s);
  ASSERT_TRUE(no_inter.has_value());
  EXPECT_EQ(no_inter->pointer, "/collectives");
  EXPECT_EQ(no_inter->message,
            "profile \"lab\" has no inter_node fit, but scenario \"s\" runs on 4 nodes");
  EXPECT_FALSE(named_profile_mismatch(p, on(false, Fabric::kInfiniband)));
  CollectiveFit inter;
  inter.inter_node = true;
  p.collectives.push_back(inter);
  EXPECT_FALSE(named_profile_mismatch(p, s));
}

}  // namespace
}  // namespace capsim::estimate
