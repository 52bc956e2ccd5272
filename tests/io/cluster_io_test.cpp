// The capsim.cluster/v1 reader: every rule with its exact messages (tests/data/bad/
// CLUSTER_EXPECTED.tsv lists each bad file's problems in order, each after "<file>:"), and what
// a valid file resolves to.
#include "io/cluster_io.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/input_error.hpp"
#include "tests/test_paths.hpp"

namespace capsim::cluster_io_test {
namespace {

using capsim::testing::kTestDataDir;

namespace fs = std::filesystem;

// File -> its problems ("/pointer: message"), in the order the reader reports them.
std::map<std::string, std::vector<std::string>> load_expected() {
  std::map<std::string, std::vector<std::string>> out;
  std::ifstream in(kTestDataDir + "/bad/CLUSTER_EXPECTED.tsv");
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos)
      out[line.substr(0, tab)].push_back(line.substr(tab + 1));
  }
  return out;
}

std::vector<std::string> bad_files() {
  std::vector<std::string> files;
  for (const auto& [file, problems] : load_expected())
    files.push_back(file);
  return files;
}

class BadClusterTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BadClusterTest, RejectedWithEveryProblem) {
  const std::string path = kTestDataDir + "/bad/" + GetParam();
  try {
    Catalog catalog;
    (void)io::load_shared_cluster(path, catalog);
    FAIL() << GetParam() << " was accepted";
  } catch (const io::InputError& e) {
    std::vector<std::string> got;
    for (const io::InputProblem& p : e.problems()) {
      EXPECT_EQ(p.file, path);
      got.push_back(p.pointer + ": " + p.message);
    }
    EXPECT_EQ(got, load_expected().at(GetParam()));
  }
}

INSTANTIATE_TEST_SUITE_P(AllRules, BadClusterTest, ::testing::ValuesIn(bad_files()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param.substr(8, param_info.param.size() - 13);
                         });

TEST(ClusterIoTest, EveryBadClusterFileIsListed) {
  const auto expected = load_expected();
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kTestDataDir + "/bad")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cluster_", 0) != 0)
      continue;
    ++files;
    EXPECT_TRUE(expected.contains(name)) << name << " is not in CLUSTER_EXPECTED.tsv";
  }
  EXPECT_GE(files, 15);
}

TEST(ClusterIoTest, ShippedExampleResolvesPlacementsAndProfile) {
  Catalog catalog;
  const SharedCluster c = io::load_shared_cluster(
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/cluster/two-jobs-oversubscribed.json", catalog);
  ASSERT_EQ(c.jobs.size(), 2u);
  EXPECT_EQ(c.fabric.num_nodes, 8);
  EXPECT_EQ(c.fabric.nodes_per_leaf, 2);
  // The explicit job is placed first; "spread" then takes one free node per leaf in turn.
  EXPECT_EQ(c.jobs[1].nodes, (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(c.jobs[0].nodes, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(c.jobs[0].policy, PlacementPolicy::kSpread);
  for (const FabricJob& job : c.jobs) {
    EXPECT_EQ(job.scenario.cluster.num_nodes, 4);
    EXPECT_EQ(job.scenario.name, job.name);
    EXPECT_TRUE(fs::exists(job.scenario.profile_path)) << job.scenario.profile_path;
  }
}

TEST(ClusterIoTest, JobTakesModelAndLayoutFromItsScenarioFile) {
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "schema": "capsim.cluster/v1",
    "fabric": { "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "num_nodes": 6 },
    "jobs": [ { "name": "from-file", "scenario": "valid.json", "placement": "random-fragmented",
                "seed": 3 } ] })");
  io::JsonReader reader(doc, "cluster.json");
  Catalog catalog;
  const SharedCluster c = io::read_shared_cluster(reader, kTestDataDir + "/scenarios", catalog);
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].scenario.model.num_layers, 40);
  EXPECT_EQ(c.jobs[0].scenario.parallelism.num_gpus(), 32);
  EXPECT_EQ(c.jobs[0].nodes.size(), 4u);
  EXPECT_EQ(c.jobs[0].scenario.cluster.num_nodes, 4);
}

// A rail-optimized fabric with oversubscribed rail groups, a rail-aligned job and a schedule.
TEST(ClusterIoTest, ReadsRailGroupsRailAlignedAndTheSchedule) {
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "schema": "capsim.cluster/v1",
    "fabric": { "gpu": "A100-SXM4-80GB", "gpus_per_node": 8, "num_nodes": 8,
                "inter_node": { "fabric": "infiniband", "nics_per_node": 8,
                                "nic_bandwidth": "200Gbps", "topology": "rail-optimized",
                                "oversubscription": 4, "nodes_per_leaf": 4 } },
    "schedule": { "warmup_iterations": 2, "measured_iterations": 3, "staggered": false },
    "jobs": [ { "name": "first", "scenario": "valid.json", "nodes": [0, 4, 5, 6] },
              { "name": "aligned", "scenario": "valid.json", "placement": "rail-aligned" } ] })");
  io::JsonReader reader(doc, "cluster.json");
  Catalog catalog;
  const SharedCluster c = io::read_shared_cluster(reader, kTestDataDir + "/scenarios", catalog);
  EXPECT_EQ(c.fabric.topology, Topology::kRailOptimized);
  EXPECT_EQ(c.fabric.nodes_per_leaf, 4);
  EXPECT_EQ(c.schedule, (FabricSchedule{2, 3, false}));
  EXPECT_EQ(c.jobs[1].policy, PlacementPolicy::kRailAligned);
  // No rail group is whole or holds the job's 4 nodes: the groups with the most free first.
  EXPECT_EQ(c.jobs[1].nodes, (std::vector<int>{1, 2, 3, 7}));
}

TEST(ClusterIoTest, TellsClusterFilesFromScenarios) {
  EXPECT_TRUE(io::is_cluster_document(nlohmann::json{{"schema", "capsim.cluster/v1"}}));
  EXPECT_TRUE(io::is_cluster_document(nlohmann::json{{"schema", "capsim.cluster/v2"}}));
  EXPECT_FALSE(io::is_cluster_document(nlohmann::json{{"schema", "capsim.scenario/v1"}}));
  EXPECT_FALSE(io::is_cluster_document(nlohmann::json::array()));
}

}  // namespace
}  // namespace capsim::cluster_io_test
