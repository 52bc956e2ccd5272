// Plans whose instances join nodes into NVLink domains (cluster.nvlink_domain): tensor groups may
// fill a domain, and a group that straddles two domains is priced at its NIC-crossing cost.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/pricing.hpp"
#include "planner/plan_io.hpp"
#include "planner/planner.hpp"

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "tests/test_paths.hpp"

namespace capsim::planner {
namespace {

using capsim::testing::kTestDataDir;

// GPT 1.3B (16 heads) with TP 16 only, on p4de nodes of 8 GPUs.
PlanSpec tensor16_plan(int nodes, int nvlink_domain) {
  PlanSpec plan;
  plan.name = "nvl";
  plan.model.name = "GPT 1.3B";
  plan.model.num_layers = 24;
  plan.model.hidden_size = 2048;
  plan.model.num_attention_heads = 16;
  plan.model.num_kv_heads = 16;
  plan.model.ffn_hidden_size = 8192;
  plan.model.seq_length = 2048;
  plan.model.vocab_size = 51200;
  plan.tokens = 1e9;
  plan.deadline_s = 365 * 86400.0;
  plan.instances = {{"p4de.24xlarge", {{Pricing::kOnDemand, 27.0}}}};
  plan.instances[0].nvlink_domain = nvlink_domain;
  plan.node_counts = {nodes};
  plan.global_batch_sizes = {48};
  SearchSpace& s = plan.space;
  s.tensor = {16};
  s.pipeline = {1};
  s.virtual_pipeline_stages = {1};
  s.micro_batch_size = {1};
  s.context = {1};
  s.schedule = {Schedule::kOneFOneB};
  s.recompute = {Recompute::kNone};
  s.zero_stage = {1};
  s.sequence_parallel = {true};
  s.precision = {Precision::kBf16};
  return plan;
}

TEST(PlannerNvlinkDomainTest, TensorGroupsFillADomainOfSeveralNodes) {
  const PlanResult apart = run_plan(tensor16_plan(2, 0), {});
  EXPECT_EQ(apart.screened, 0);
  EXPECT_EQ(apart.pruned.of(PruneReason::kTensorExceedsNode), 1);
  const PlanSpec plan = tensor16_plan(2, 16);
  const PlanResult joined = run_plan(plan, {});
  ASSERT_EQ(joined.screened, 1);
  const Scenario sc = candidate_scenario(plan, joined.candidates.at(0).candidate);
  EXPECT_EQ(sc.cluster.nvlink_domain, 16);
  EXPECT_EQ(io::scenario_to_json(sc).at("cluster").at("nvlink_domain"), 16);
}

// On 6 nodes, domains of 24 GPUs put TP group 16-31 across two of them (8 + 8 ranks); domains of
// 16 hold every group whole. The straddling layout is screened, slower, not pruned.
TEST(PlannerNvlinkDomainTest, StraddlingTensorGroupIsPricedNotPruned) {
  const PlanResult whole = run_plan(tensor16_plan(6, 16), {});
  const PlanResult straddling = run_plan(tensor16_plan(6, 24), {});
  ASSERT_EQ(whole.screened, 1);
  ASSERT_EQ(straddling.screened, 1);
  EXPECT_GT(straddling.candidates.at(0).analytic.iteration_time_s,
            whole.candidates.at(0).analytic.iteration_time_s);
}

TEST(PlannerNvlinkDomainTest, PlanInstanceObjectReadsTheDomain) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/plans/small.json");
  doc["instances"] = {{{"name", "p4de.24xlarge"}, {"nvlink_domain", 16}}};
  doc["num_nodes"] = {{"values", {1, 2, 4}}};
  const PlanSpec plan = read_plan_text(doc.dump(), "plan.json");
  EXPECT_EQ(plan.instances.at(0).nvlink_domain, 16);
  // The default tensor degrees reach the domain: 16 on nodes of 8.
  EXPECT_EQ(plan.space.tensor, (std::vector<int>{1, 2, 4, 8, 16}));
}

// A catalog NVL72 tray instance brings its rack's domain to the plan, and node counts that
// neither stay in one rack nor fill whole racks are bad input.
TEST(PlannerNvlinkDomainTest, CatalogTrayInstanceBringsItsDomain) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/plans/small.json");
  doc["instances"] = {"gb200-nvl72"};
  doc["num_nodes"] = {{"values", {2, 18, 36}}};
  EXPECT_EQ(read_plan_text(doc.dump(), "plan.json").instances.at(0).nvlink_domain, 72);
  doc["num_nodes"] = {{"values", {2, 20}}};
  try {
    (void)read_plan_text(doc.dump(), "plan.json");
    FAIL() << "20 trays on 72-GPU racks";
  } catch (const io::InputError& e) {
    EXPECT_EQ(e.pointer(), "/instances/0/nvlink_domain");
  }
}

}  // namespace
}  // namespace capsim::planner
