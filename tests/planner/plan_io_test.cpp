// Every capsim.plan/v1 validation rule with its exact message (tests/data/bad/PLAN_EXPECTED.tsv
// lists each bad file and the message after "<file>:", as EXPECTED.tsv does for scenarios),
// plus defaults and unit handling.
#include "planner/plan_io.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/instance_catalog.hpp"
#include "planner/goodput.hpp"

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "tests/test_paths.hpp"

namespace capsim::planner {
namespace {

using capsim::testing::kSourceDir;
using capsim::testing::kTestDataDir;

struct BadCase {
  std::string file;
  std::string message;
};

std::vector<BadCase> load_expected() {
  std::vector<BadCase> out;
  std::ifstream in(kTestDataDir + "/bad/PLAN_EXPECTED.tsv");
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos)
      continue;
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return out;
}

class BadPlanTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPlanTest, RejectedWithExactMessage) {
  const BadCase& c = GetParam();
  const std::string path = kTestDataDir + "/bad/" + c.file;
  try {
    (void)load_plan(path);
    FAIL() << c.file << " was accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + (c.message.front() == '/' ? ":" : "") + c.message);
    EXPECT_EQ(e.file(), path);
  }
}

INSTANTIATE_TEST_SUITE_P(AllRules, BadPlanTest, ::testing::ValuesIn(load_expected()),
                         [](const ::testing::TestParamInfo<BadCase>& param_info) {
                           std::string name = param_info.param.file.substr(5);
                           return name.substr(0, name.size() - 5);
                         });

TEST(PlanIoTest, EveryBadPlanFileHasAnExpectedMessage) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kTestDataDir + "/bad")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("plan_", 0) == 0 && entry.path().extension() == ".json")
      ++files;
  }
  EXPECT_EQ(files, load_expected().size());
  EXPECT_GE(files, 50u);
}

TEST(PlanIoTest, ShippedDefaultEqualsEmbeddedDefault) {
  const auto shipped = io::JsonReader::parse_file(kSourceDir + "/scenarios/plans/default.json");
  const auto embedded = io::JsonReader::parse_text(default_plan_text(), "<default plan>");
  EXPECT_EQ(shipped, embedded);
}

TEST(PlanIoTest, DefaultPlanReadsWithUnitsAndDefaults) {
  const PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  EXPECT_DOUBLE_EQ(plan.tokens, 1e12);
  EXPECT_DOUBLE_EQ(plan.deadline_s, 30 * 86400.0);
  ASSERT_EQ(plan.instances.size(), 3u);
  EXPECT_EQ(plan.instances[2].name, "p5.48xlarge");
  ASSERT_EQ(plan.instances[2].prices.size(), 1u);
  EXPECT_EQ(plan.instances[2].prices[0].pricing, Pricing::kOnDemand);
  EXPECT_DOUBLE_EQ(plan.instances[2].prices[0].usd_per_node_hour,
                   builtin_catalog().find_instance("p5.48xlarge")->on_demand_usd_per_hour);
  EXPECT_EQ(plan.node_counts, (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}));
  EXPECT_EQ(plan.global_batch_sizes, std::vector<int>{2048});
  EXPECT_EQ(plan.space.tensor, (std::vector<int>{1, 2, 4, 8}));
  // Divisors of 48 layers, plus 32 (a power of two, split unevenly).
  EXPECT_EQ(plan.space.pipeline, (std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48}));
  EXPECT_TRUE(plan.space.uneven_stages);
  EXPECT_EQ(plan.space.context, std::vector<int>{1});  // seq 2048: CP not worth it
  EXPECT_EQ(plan.space.zero_stage, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan.space.schedule.size(), 4u);
  EXPECT_EQ(plan.space.recompute.size(), 3u);
  EXPECT_EQ(plan.space.precision, std::vector<Precision>{Precision::kBf16});
  EXPECT_EQ(plan.objective, Objective::kMinCost);
  // The goodput model is on with its published defaults; the cluster-dependent parts are
  // derived per candidate.
  ASSERT_TRUE(plan.failure.has_value());
  EXPECT_EQ(plan.failure->gpu_mtbf_s, 0.0);
  EXPECT_EQ(plan.failure->checkpoint_save_s, 0.0);
  EXPECT_EQ(plan.failure->detection_s, kDetectionS);
  EXPECT_EQ(plan.failure->straggler_sigma, kStragglerSigma);
}

// The default plan with `stack` set to `stack`, read.
PlanSpec default_plan_with_stack(const nlohmann::json& stack) {
  nlohmann::json plan = io::JsonReader::parse_text(default_plan_text(), "<default plan>");
  plan["stack"] = stack;
  return read_plan_text(plan.dump(), "t.json");
}

TEST(PlanIoTest, ANamedStackSetsWhatThePlanLeavesUnsaid) {
  const PlanSpec deepspeed = default_plan_with_stack("megatron-deepspeed");
  EXPECT_FALSE(deepspeed.stack.overlap_grad_reduce);
  EXPECT_FALSE(deepspeed.stack.overlap_param_gather);
  EXPECT_EQ(deepspeed.model.attention, AttentionKernel::kMaterialized);
  EXPECT_EQ(deepspeed.model.cross_entropy, CrossEntropyKernel::kUnfused);

  const PlanSpec nemo = default_plan_with_stack({{"name", "nemo"}, {"tp_comm_overlap", false}});
  EXPECT_EQ(nemo.stack.grad_reduce_precision, Precision::kFp32);
  EXPECT_FALSE(nemo.stack.tp_comm_overlap);  // the plan's own key wins
  EXPECT_TRUE(nemo.stack.overlap_grad_reduce);

  // The search's bf16 candidates reduce in bf16 under a stack that reduces in the training
  // precision; NeMo 1's remainders apply to them.
  EXPECT_EQ(default_plan_with_stack("pytorch-fsdp").stack.grad_reduce_precision, Precision::kBf16);
  EXPECT_EQ(default_plan_with_stack({{"name", "nemo"}, {"version", "2023"}}).stack.master_weights,
            MasterWeights::kFp32Remainders);

  // Only torchtitan composes sharded data parallelism with pipelines.
  EXPECT_TRUE(default_plan_with_stack("torchtitan").stack_shards_with_pipeline);
  EXPECT_FALSE(default_plan_with_stack("pytorch-fsdp").stack_shards_with_pipeline);
  EXPECT_FALSE(read_plan_text(default_plan_text(), "<default plan>").stack_shards_with_pipeline);

  // The candidates run on the named stack, in either form (a Blackwell GPU's datasheet profile
  // then takes that stack's in-situ factor).
  ASSERT_NE(nemo.named_stack, nullptr);
  EXPECT_EQ(nemo.named_stack->name, "nemo");
  EXPECT_EQ(deepspeed.named_stack->name, "megatron-deepspeed");
  EXPECT_EQ(read_plan_text(default_plan_text(), "<default plan>").named_stack, nullptr);
}

// A named stack's fp8 parameters follow each candidate's recipe; the plan's own key wins.
TEST(PlanIoTest, ANamedStacksFp8ParametersFollowEachCandidatesRecipe) {
  const PlanSpec bridge = default_plan_with_stack("megatron-bridge");
  EXPECT_FALSE(bridge.stack.fp8_params);
  EXPECT_TRUE(candidate_fp8_params(bridge, Precision::kMxfp8));
  EXPECT_TRUE(candidate_fp8_params(bridge, Precision::kFp8Cs));
  EXPECT_FALSE(candidate_fp8_params(bridge, Precision::kFp8Blockwise));
  EXPECT_FALSE(candidate_fp8_params(bridge, Precision::kBf16));
  const PlanSpec off =
      default_plan_with_stack({{"name", "megatron-bridge"}, {"fp8_params", false}});
  EXPECT_FALSE(candidate_fp8_params(off, Precision::kMxfp8));
  EXPECT_FALSE(candidate_fp8_params(default_plan_with_stack("nemo"), Precision::kMxfp8));
}

TEST(PlanIoTest, AnUnknownStackNamesTheKnownOnes) {
  for (const auto& [stack, pointer] : std::vector<std::pair<nlohmann::json, std::string>>{
           {"fsdp", "t.json:/stack: unknown training stack \"fsdp\""},
           {{{"name", "fsdp"}}, "t.json:/stack/name: unknown training stack \"fsdp\""},
           {{{"version", "2024"}}, "t.json:/stack/version: a stack version needs the stack's"}}) {
    try {
      (void)default_plan_with_stack(stack);
      ADD_FAILURE() << stack.dump() << " was accepted";
    } catch (const io::InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(pointer, 0), 0u) << e.what();
    }
  }
}

TEST(PlanIoTest, FailureModelNoneTurnsTheGoodputModelOff) {
  std::string text(default_plan_text());
  text.insert(text.rfind('}'), R"(, "failure_model": "none")");
  EXPECT_FALSE(read_plan_text(text, "t.json").failure.has_value());
}

TEST(PlanIoTest, FailureModelOverridesPartByPart) {
  std::string text(default_plan_text());
  text.insert(text.rfind('}'), R"(, "failure_model": {"interruptions_per_gpu_hour": 1e-4,
      "detection": "2min", "restart": "0s", "straggler_sigma": 0, "checkpoint_interval": "1h",
      "storage_bandwidth_per_node": "4GBps", "evaluation": {"every": "12h", "duration": "10min"},
      "batch_ramp": [{"until_tokens": "1B", "batch_fraction": 0.25},
                     {"until_tokens": "10B", "batch_fraction": 0.5}]})");
  const FailureModel f = *read_plan_text(text, "t.json").failure;
  EXPECT_DOUBLE_EQ(f.gpu_mtbf_s, 3600.0 / 1e-4);
  EXPECT_EQ(f.detection_s, 120.0);
  EXPECT_EQ(f.restart_s, 0.0);
  EXPECT_EQ(f.straggler_sigma, 0.0);
  EXPECT_EQ(f.checkpoint_interval_s, 3600.0);
  EXPECT_EQ(f.storage_bytes_per_s_per_node, 4e9);
  EXPECT_EQ(f.evaluation_every_s, 12 * 3600.0);
  EXPECT_EQ(f.evaluation_s, 600.0);
  ASSERT_EQ(f.batch_ramp.size(), 2u);
  EXPECT_EQ(f.batch_ramp[1].until_tokens, 1e10);
  EXPECT_EQ(f.batch_ramp[0].batch_fraction, 0.25);
  // What the file does not override keeps its published default.
  EXPECT_EQ(f.planned_per_gpu_hour, kPlannedInterruptionsPerGpuHour);
  EXPECT_EQ(f.checkpoint_bytes_per_parameter, kCheckpointBytesPerParameter);
}

TEST(PlanIoTest, PriceOverridesAndPricingOptions) {
  const std::string text = R"({"schema": "capsim.plan/v1",
    "model": {"num_layers": 24, "hidden_size": 2048, "num_attention_heads": 16,
              "seq_length": 2048, "vocab_size": 51200},
    "target": {"tokens": "10B", "min_tokens_per_s": "100k"},
    "instances": [{"name": "p5.48xlarge", "prices": {"spot": "$20/h", "on-demand": "$50/h"}},
                  "p4d.24xlarge"],
    "pricing": ["on-demand", "spot", "capacity-block"],
    "num_nodes": {"min": 3, "max": 20},
    "global_batch": {"min_tokens": "1M", "max_tokens": "8M"},
    "failure_model": {"gpu_mtbf": "50000h", "checkpoint_save": "1min"}})";
  std::string json = text;
  // 2^20 to 2^23 tokens: whole numbers of 2048-token sequences.
  json.replace(json.find("\"1M\""), 4, "\"1048576\"");
  json.replace(json.find("\"8M\""), 4, "\"8388608\"");
  const PlanSpec plan = read_plan_text(json, "t.json");
  // A round token range holds the whole sequences inside it: 1e6 / 2048 = 488.3 rounds up to
  // 489, 8e6 / 2048 = 3906.25 down to 3906.
  EXPECT_EQ(read_plan_text(text, "t.json").global_batch_sizes,
            (std::vector<int>{489, 512, 1024, 2048, 3906}));
  ASSERT_EQ(plan.instances.size(), 2u);
  const auto& p5 = plan.instances[0].prices;
  ASSERT_EQ(p5.size(), 3u);
  EXPECT_DOUBLE_EQ(p5[0].usd_per_node_hour, 50.0);
  EXPECT_EQ(p5[1].pricing, Pricing::kSpot);
  EXPECT_DOUBLE_EQ(p5[1].usd_per_node_hour, 20.0);
  EXPECT_DOUBLE_EQ(p5[2].usd_per_node_hour,
                   builtin_catalog().find_instance("p5.48xlarge")->capacity_block_usd_per_hour);
  // p4d has no spot price: only on-demand and capacity block.
  ASSERT_EQ(plan.instances[1].prices.size(), 2u);
  EXPECT_EQ(plan.instances[1].prices[1].pricing, Pricing::kCapacityBlock);
  EXPECT_EQ(plan.node_counts, (std::vector<int>{3, 4, 8, 16, 20}));
  EXPECT_EQ(plan.global_batch_sizes, (std::vector<int>{512, 1024, 2048, 4096}));
  EXPECT_DOUBLE_EQ(plan.min_tokens_per_s, 1e5);
  EXPECT_DOUBLE_EQ(plan.deadline_s, 0.0);
  ASSERT_TRUE(plan.failure.has_value());
  EXPECT_DOUBLE_EQ(plan.failure->gpu_mtbf_s, 50000 * 3600.0);
  EXPECT_DOUBLE_EQ(plan.failure->checkpoint_restore_s, 60.0);  // defaults to the save cost
}

TEST(PlanIoTest, LongSequencesDefaultToContextParallelism) {
  const std::string json = R"({"schema": "capsim.plan/v1",
    "model": {"num_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
              "seq_length": 32768, "vocab_size": 128256, "ffn_activation": "swiglu",
              "ffn_hidden_size": 14336, "num_kv_heads": 8},
    "target": {"tokens": "100B", "deadline": "10d"}, "instances": ["p5.48xlarge"],
    "num_nodes": {"values": [8, 4]}, "global_batch": {"sequences": 64},
    "search": {"tensor": [8, 4], "precision": ["fp8", "bf16"]}})";
  const PlanSpec plan = read_plan_text(json, "t.json");
  EXPECT_EQ(plan.space.context, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(plan.space.tensor, (std::vector<int>{4, 8}));  // sorted
  EXPECT_EQ(plan.node_counts, (std::vector<int>{4, 8}));
  EXPECT_EQ(plan.space.precision, (std::vector<Precision>{Precision::kFp8, Precision::kBf16}));
}

}  // namespace
}  // namespace capsim::planner
