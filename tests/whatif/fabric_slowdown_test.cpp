// The what-if's opt-in fabric (whatif/fabric_slowdown.hpp): a placement's shape gets its
// slowdown from the event engine's leaf-uplink model, and a fragmenting placement policy shows
// in job completion time and cost.
#include "whatif/fabric_slowdown.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/input_error.hpp"
#include "tests/whatif/whatif_test_util.hpp"
#include "whatif/runner.hpp"
#include "whatif/throughput.hpp"
#include "whatif/whatif_io.hpp"

namespace capsim::whatif::fabric_slowdown_test {
namespace {

// GPT 30B, TP 8 x PP 2: a 32-GPU job is 4 p4d nodes at data-parallel degree 2.
const std::string kScenario =
    std::string(CAPSIM_SOURCE_DIR) + "/scenarios/gpt-30b-p4d/scenario.json";

// One 4-node job on a static pool of 8 p4d nodes under leaves of 4, 8:1 oversubscribed.
WhatIf one_job_on_leaves(PlacementPolicy placement) {
  traces::JobRecord j = testing::job("gpt", 0.0, 32, 0.0);
  j.scenario_path = kScenario;
  j.tokens = 2e9;
  WhatIf w = testing::whatif({testing::pool("p4d", 8, 8, 0.0)}, {j});
  fill_scenario_models(w, default_throughput());
  w.fabric = WhatIfFabric{4, 8.0, placement};
  fill_fabric_slowdowns(w);
  return w;
}

PolicyResult run_static(const WhatIf& w) {
  const auto runs = run_all(w, {testing::policy("static")}, 1, 1);
  return runs.at(0).runs.at(0);
}

// Packed, the job's 4 nodes fill leaf 0 and no flow leaves it: its shape runs as on a
// non-blocking fabric. Spread over both leaves (2 nodes each), its DP and PP flows cross
// uplinks 8:1 thinner than its NICs: slower, so it finishes later and the static pool bills
// longer.
TEST(WhatIfFabricTest, FragmentedPlacementFinishesLaterAndCostsMore) {
  const WhatIf packed = one_job_on_leaves(PlacementPolicy::kPacked);
  const double whole_leaf = packed.fabric_slowdowns.at({kScenario, "p4d.24xlarge", 32, 4});
  const double split = packed.fabric_slowdowns.at({kScenario, "p4d.24xlarge", 32, 2});
  EXPECT_NEAR(whole_leaf, 1.0, 1e-9);
  EXPECT_GT(split, 1.02);
  const PolicyResult p = run_static(packed);
  const PolicyResult s = run_static(one_job_on_leaves(PlacementPolicy::kSpread));
  ASSERT_EQ(p.jobs_finished, 1);
  ASSERT_EQ(s.jobs_finished, 1);
  ASSERT_TRUE(p.jct_max_s && s.jct_max_s);
  // The job's compute time stretches by its shape's slowdown (no failures, no checkpoints;
  // the tolerance covers its start, the same in both).
  EXPECT_NEAR(*s.jct_max_s / *p.jct_max_s, split, 1e-3 * split);
  EXPECT_GT(s.cost_usd, p.cost_usd * 1.01);
}

TEST(WhatIfFabricTest, NodesPerLeafOfAShape) {
  EXPECT_EQ(nodes_per_leaf_of(4, 1), 4);
  EXPECT_EQ(nodes_per_leaf_of(4, 2), 2);
  EXPECT_EQ(nodes_per_leaf_of(5, 2), 3);
  EXPECT_EQ(nodes_per_leaf_of(3, 8), 1);
}

std::string error_of(const nlohmann::json& fabric) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "schema": "capsim.whatif/v1",
    "pools": [ { "name": "od", "instance": "p4d.24xlarge", "pricing": "on-demand",
                 "max_nodes": 4 } ],
    "jobs": { "format": "capsim-csv", "path": "jobs.csv" }
  })");
  j["fabric"] = fabric;
  try {
    (void)read_whatif(j, "w.json", std::string(CAPSIM_TEST_DATA_DIR) + "/whatif");
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(WhatIfFabricTest, BadFabricNamesFileAndPointer) {
  EXPECT_EQ(error_of({{"oversubscription", 2.0}}).rfind("w.json:/fabric/nodes_per_leaf: ", 0), 0u)
      << error_of({{"oversubscription", 2.0}});
  EXPECT_EQ(error_of({{"nodes_per_leaf", 0}}).rfind("w.json:/fabric/nodes_per_leaf: ", 0), 0u);
  EXPECT_EQ(error_of({{"nodes_per_leaf", 2}, {"oversubscription", 0.5}})
                .rfind("w.json:/fabric/oversubscription: ", 0),
            0u);
  EXPECT_EQ(error_of({{"nodes_per_leaf", 2}, {"placement", "random-fragmented"}})
                .rfind("w.json:/fabric/placement: ", 0),
            0u);
  EXPECT_EQ(error_of({{"nodes_per_leaf", 2}, {"spines", 2}}).rfind("w.json:/fabric/spines: ", 0),
            0u);
  EXPECT_EQ(error_of({{"nodes_per_leaf", 2}}), "no error");
}

}  // namespace
}  // namespace capsim::whatif::fabric_slowdown_test
