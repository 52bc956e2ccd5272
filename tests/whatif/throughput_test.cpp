#include "whatif/throughput.hpp"

#include <utility>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "whatif/whatif_io.hpp"

namespace capsim::whatif {
namespace {

const std::string kScenario =
    std::string(CAPSIM_SOURCE_DIR) + "/scenarios/gpt-30b-p4d/scenario.json";

TEST(ThroughputTest, ScaleScenarioKeepsModelParallelismAndBatch) {
  const Scenario base = io::load_scenario(kScenario);  // TP8 PP2 DP8, global batch 1024
  const Scenario s = scale_scenario(base, *builtin_catalog().find_instance("p5.48xlarge"), 64);
  EXPECT_EQ(s.parallelism.tensor, 8);
  EXPECT_EQ(s.parallelism.pipeline, 2);
  EXPECT_EQ(s.parallelism.data, 4);
  EXPECT_EQ(s.parallelism.global_batch_size, 1024);
  EXPECT_EQ(s.cluster.gpu.name, "H100-SXM5-80GB");
  EXPECT_EQ(s.cluster.num_nodes, 8);
  EXPECT_EQ(s.cluster.num_gpus(), s.parallelism.num_gpus());
  // 48 GPUs: DP 3 does not divide 1024 micro-batches of 1, so the batch rounds up to 1026.
  EXPECT_EQ(scale_scenario(base, *builtin_catalog().find_instance("p4d.24xlarge"), 48)
                .parallelism.global_batch_size,
            1026);
}

// An instance's fabric reaches the scaled scenario as named: an Ethernet or TCPX node is costed
// on its own network, not as InfiniBand.
TEST(ThroughputTest, ScaleScenarioKeepsTheInstancesFabric) {
  const Scenario base = io::load_scenario(kScenario);
  InstanceSpec node = *builtin_catalog().find_instance("p5.48xlarge");
  for (const auto& [name, fabric] :
       {std::pair{"ethernet", Fabric::kEthernet}, std::pair{"tcpx", Fabric::kTcpx},
        std::pair{"tcpxo", Fabric::kTcpxo}, std::pair{"slingshot", Fabric::kSlingshot},
        std::pair{"omni-path", Fabric::kOmniPath}, std::pair{"efa", Fabric::kEfa}}) {
    node.fabric = name;
    EXPECT_EQ(scale_scenario(base, node, 64).cluster.inter_node_fabric, fabric) << name;
  }
}

TEST(ThroughputTest, MemoisedPerInstanceAndAdmissibleSize) {
  WhatIf w = load_whatif(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/whatif/llm.json");
  const auto& model =
      w.scenario_models.at(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/gpt-30b-p4d/scenario.json");
  EXPECT_EQ(model.model_parallel, 16);
  const auto& rates = model.tokens_per_s.at("p4d.24xlarge");
  // Multiples of TP x PP = 16 from 64 to 256 GPUs.
  EXPECT_EQ(rates.begin()->first, 64);
  EXPECT_EQ(rates.rbegin()->first, 256);
  EXPECT_EQ(rates.size(), 13u);
  // More data parallelism is faster, and sub-linear.
  EXPECT_GT(rates.at(128), rates.at(64));
  EXPECT_LT(rates.at(128), 2.0 * rates.at(64) * 1.0001);
}

TEST(ThroughputTest, CountsAreCalledOncePerKey) {
  WhatIf w = load_whatif(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/whatif/llm.json");
  int calls = 0;
  w.scenario_models.clear();
  fill_scenario_models(w, [&](const Scenario& s) {
    ++calls;
    return 1000.0 * s.parallelism.data;
  });
  // Jobs share the scenario: 13 sizes (64..256) on each of the two p4d pools, computed once
  // per pool instance (both pools are p4d, so the second pool reuses the map).
  EXPECT_EQ(calls, 13);
}

TEST(ThroughputTest, GpuCountsMustFitTheLayout) {
  auto j = nlohmann::json::parse(R"({
    "schema": "capsim.whatif/v1",
    "pools": [ { "name": "od", "instance": "p4d.24xlarge", "pricing": "on-demand",
                 "max_nodes": 32 } ],
    "jobs": { "format": "capsim-csv", "path": "bad_layout.csv" } })");
  try {
    (void)read_whatif(j, "w.json", std::string(CAPSIM_TEST_DATA_DIR) + "/whatif");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "w.json:/jobs: job x asks for 24 GPUs, not a multiple of tensor x pipeline x "
              "context = 16 in " +
                  std::string(CAPSIM_SOURCE_DIR) + "/scenarios/gpt-30b-p4d/scenario.json");
  }
}

// A job whose scenario has mixture-of-experts layers (Mixtral 8x7B: TP 1, PP 4, EP 8) reads
// with the scenario reader and scales in steps that keep its experts folded: multiples of
// pipeline x expert x expert_tensor = 32, not just of tensor x pipeline x context = 4.
TEST(ThroughputTest, MixtureOfExpertsJobScalesInWholeExpertGroups) {
  const auto j = nlohmann::json::parse(R"({
    "schema": "capsim.whatif/v1",
    "pools": [ { "name": "od", "instance": "p5.48xlarge", "pricing": "on-demand",
                 "max_nodes": 16 } ],
    "jobs": { "format": "capsim-csv", "path": "moe_jobs.csv" } })");
  const WhatIf w = read_whatif(j, "w.json", std::string(CAPSIM_TEST_DATA_DIR) + "/whatif");
  ASSERT_EQ(w.scenario_models.size(), 1u);
  const ScenarioJobModel& model = w.scenario_models.begin()->second;
  EXPECT_EQ(model.model_parallel, 32);
  const auto& rates = model.tokens_per_s.at("p5.48xlarge");
  ASSERT_EQ(rates.size(), 4u);  // 32, 64, 96 and 128 GPUs
  for (const auto& [gpus, tokens_per_s] : rates) {
    EXPECT_EQ(gpus % 32, 0);
    EXPECT_GT(tokens_per_s, 0.0);
  }
  const auto bad = nlohmann::json::parse(R"({
    "schema": "capsim.whatif/v1",
    "pools": [ { "name": "od", "instance": "p5.48xlarge", "pricing": "on-demand",
                 "max_nodes": 16 } ],
    "jobs": { "format": "capsim-csv", "path": "moe_bad_layout.csv" } })");
  try {
    (void)read_whatif(bad, "w.json", std::string(CAPSIM_TEST_DATA_DIR) + "/whatif");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "w.json:/jobs: job m asks for 48 GPUs, not a multiple of tensor x pipeline x "
              "context = 4 and of pipeline x expert x expert_tensor = 32 in " +
                  std::string(CAPSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100/scenario.json");
  }
}

}  // namespace
}  // namespace capsim::whatif
