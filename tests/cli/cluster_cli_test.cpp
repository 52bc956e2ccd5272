// `capsim simulate CLUSTER.json`: a one-job cluster is the scenario, bad cluster files exit 2
// with every problem, the output is deterministic and the trace has one process per job.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using capsim::testing::kTestDataDir;
using testing::run_capsim;
namespace fs = std::filesystem;
const std::string kExample = kSourceDir + "/scenarios/cluster/two-jobs-oversubscribed.json";

// A cluster of one job on a fabric equal to its scenario's cluster is that scenario: the same
// replay of every GPU, bit for bit in the rounded output.
TEST(ClusterCliTest, OneJobClusterEqualsTheScenario) {
  const auto cluster = run_capsim("simulate " + kTestDataDir + "/clusters/one-job.json --json");
  ASSERT_EQ(cluster.exit_code, 0) << cluster.out;
  const auto scenario =
      run_capsim("simulate " + kTestDataDir + "/scenarios/valid.json --every-gpu --json");
  ASSERT_EQ(scenario.exit_code, 0) << scenario.out;
  const nlohmann::json c = nlohmann::json::parse(cluster.out);
  const nlohmann::json s = nlohmann::json::parse(scenario.out);
  ASSERT_EQ(c.at("jobs").size(), 1u);
  const nlohmann::json& job = c.at("jobs").at(0);
  EXPECT_EQ(job.at("iteration_time_shared_s"), s.at("iteration_time_s"));
  EXPECT_EQ(job.at("iteration_time_alone_s"), s.at("iteration_time_s"));
  EXPECT_EQ(job.at("slowdown"), 1.0);
  for (const char* key : {"iteration_time_s", "breakdown", "mfu", "tokens_per_s", "memory"})
    EXPECT_EQ(job.at("shared").at(key), s.at(key)) << key;
}

TEST(ClusterCliTest, BadClusterExitsTwoWithEveryProblem) {
  const std::string file = kTestDataDir + "/bad/cluster_many_problems.json";
  const auto r = run_capsim("simulate " + file, true);
  EXPECT_EQ(r.exit_code, 2);
  for (const char* pointer : {":/colour:", ":/jobs/0/parallelism/bogus:", ":/jobs/1/placement:",
                              ":/jobs/0/nodes/1:", ":/jobs/0/nodes/2:", ":/jobs/0/nodes:"})
    EXPECT_NE(r.out.find(file + pointer), std::string::npos) << pointer << "\n" << r.out;
}

TEST(ClusterCliTest, ScenarioOnlyOptionsExitTwo) {
  for (const char* option :
       {"--engine analytic", "--every-gpu", "--kernels", "--set model.num_layers=2"}) {
    const auto r = run_capsim("simulate " + kExample + " " + option, true);
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.out;
  }
}

TEST(ClusterCliTest, JsonIsDeterministicAndTraceHasOneProcessPerJob) {
  const auto first = run_capsim("simulate " + kExample + " --json");
  const auto second = run_capsim("simulate " + kExample + " --json");
  ASSERT_EQ(first.exit_code, 0);
  EXPECT_EQ(first.out, second.out);
  const nlohmann::json out = nlohmann::json::parse(first.out);
  EXPECT_FALSE(out.at("hottest_links").empty());

  const fs::path trace =
      fs::temp_directory_path() / ("capsim-cluster-trace-" + std::to_string(::getpid()) + ".json");
  ASSERT_EQ(run_capsim("simulate " + kExample + " --trace " + trace.string()).exit_code, 0);
  std::ifstream in(trace);
  const nlohmann::json t = nlohmann::json::parse(in);
  fs::remove(trace);
  std::set<std::string> processes;
  std::set<int> pids;
  for (const auto& e : t.at("traceEvents")) {
    pids.insert(e.at("pid").get<int>());
    if (e.at("name") == "process_name")
      processes.insert(e.at("args").at("name").get<std::string>());
  }
  EXPECT_EQ(processes, (std::set<std::string>{"gpt-13b", "gpt-6.7b"}));
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
}

TEST(ClusterCliTest, UnwritableTraceExitsTwoBeforeSimulating) {
  const auto r = run_capsim("simulate " + kExample + " --trace /no/such/folder/t.json", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("/no/such/folder/t.json: cannot write file"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hottest"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace capsim
