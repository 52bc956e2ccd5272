// A scenario's training stack: read, overridden by explicit keys, written back, and rejected
// with the file, the JSON pointer and the names capsim knows.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

#include "io/scenario_io.hpp"
#include "tests/io/error_of.hpp"
#include "tests/io/read_doc.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kTestDataDir;
using capsim::testing::read_doc;

nlohmann::json with_stack(const nlohmann::json& stack) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["stack"] = stack;
  return doc;
}

TEST(ScenarioStackTest, AStackSetsTheKeysTheScenarioLeavesUnsaid) {
  const Scenario s = read_doc(with_stack("megatron-deepspeed"));
  ASSERT_NE(s.stack, nullptr);
  EXPECT_EQ(s.stack->name, "megatron-deepspeed");
  EXPECT_FALSE(s.parallelism.overlap_grad_reduce);
  EXPECT_FALSE(s.parallelism.overlap_param_gather);
  EXPECT_EQ(s.model.attention, AttentionKernel::kMaterialized);
  EXPECT_EQ(s.model.cross_entropy, CrossEntropyKernel::kUnfused);

  nlohmann::json doc = with_stack({{"name", "megatron-deepspeed"}, {"version", "2022"}});
  doc["parallelism"]["overlap_grad_reduce"] = true;
  doc["model"]["attention"] = "flash";
  const Scenario overridden = read_doc(doc);
  EXPECT_TRUE(overridden.parallelism.overlap_grad_reduce);
  EXPECT_FALSE(overridden.parallelism.overlap_param_gather);
  EXPECT_EQ(overridden.model.attention, AttentionKernel::kFlash);
}

TEST(ScenarioStackTest, AVersionChoosesItsReleaseLine) {
  EXPECT_EQ(read_doc(with_stack("deepspeed")).model.attention, AttentionKernel::kFlash);
  const Scenario old = read_doc(with_stack({{"name", "deepspeed"}, {"version", "2021"}}));
  EXPECT_EQ(old.model.attention, AttentionKernel::kMaterialized);
  EXPECT_EQ(old.stack->version, "2021");
  EXPECT_EQ(read_doc(with_stack({{"name", "deepspeed"}, {"version", 2021}})).stack, old.stack);
  const Scenario nemo = read_doc(with_stack("nemo"));
  EXPECT_TRUE(nemo.parallelism.tp_comm_overlap);  // valid.json is sequence parallel
  EXPECT_EQ(nemo.parallelism.grad_reduce_precision, Precision::kFp32);
  EXPECT_EQ(nemo.model.cross_entropy, CrossEntropyKernel::kFused);
}

// Megatron-Bridge keeps fp8 parameters under the recipes whose precision presets gather them;
// a scenario that says otherwise keeps its own, and writes it back.
TEST(ScenarioStackTest, MegatronBridgeKeepsFp8ParametersUnlessTheScenarioSays) {
  nlohmann::json doc = with_stack("megatron-bridge");
  doc["cluster"]["gpu"] = "H100-SXM5-80GB";
  doc["parallelism"]["precision"] = "fp8-cs";
  EXPECT_TRUE(read_doc(doc).parallelism.fp8_params);
  doc["parallelism"]["precision"] = "fp8-blockwise";
  EXPECT_FALSE(read_doc(doc).parallelism.fp8_params);
  doc["parallelism"]["precision"] = "fp8-cs";
  doc["parallelism"]["fp8_params"] = false;
  const Scenario own = read_doc(doc);
  EXPECT_FALSE(own.parallelism.fp8_params);
  const nlohmann::json written = io::scenario_to_json(own);
  EXPECT_EQ(written.at("parallelism").at("fp8_params"), false);
  EXPECT_FALSE(read_doc(written).parallelism.fp8_params);
  doc["parallelism"].erase("fp8_params");
  EXPECT_FALSE(io::scenario_to_json(read_doc(doc)).at("parallelism").contains("fp8_params"));
}

TEST(ScenarioStackTest, WrittenBackItReadsTheSame) {
  std::vector<nlohmann::json> docs{with_stack("nemo"),
                                   with_stack({{"name", "nemo"}, {"version", "2023"}}),
                                   with_stack("megatron-core"), with_stack("llm-foundry")};
  nlohmann::json overridden = with_stack("megatron-deepspeed");
  overridden["parallelism"]["overlap_grad_reduce"] = true;
  overridden["parallelism"]["overlap_param_gather"] = true;
  overridden["parallelism"]["dp_bucket_layout"] = "every-chunk";
  overridden["model"]["cross_entropy"] = "fused";
  docs.push_back(overridden);
  nlohmann::json tp_off = with_stack("nemo");
  tp_off["parallelism"]["tp_comm_overlap"] = false;
  docs.push_back(tp_off);
  for (const nlohmann::json& doc : docs) {
    const Scenario s = read_doc(doc);
    const nlohmann::json written = io::scenario_to_json(s);
    EXPECT_EQ(written.at("stack").at("name"), s.stack->name);
    const Scenario again = read_doc(written);
    EXPECT_EQ(again.parallelism, s.parallelism) << written.dump();
    EXPECT_EQ(again.model.attention, s.model.attention);
    EXPECT_EQ(again.model.cross_entropy, s.model.cross_entropy);
    EXPECT_EQ(again.stack, s.stack);
  }
  // Keys equal to what the stack gives are left to it.
  const nlohmann::json written = io::scenario_to_json(read_doc(with_stack("megatron-deepspeed")));
  EXPECT_FALSE(written.at("parallelism").contains("overlap_grad_reduce"));
  EXPECT_FALSE(written.at("model").contains("attention"));
  EXPECT_EQ(io::scenario_to_json(read_doc(tp_off)).at("parallelism").at("tp_comm_overlap"), false);
}

TEST(ScenarioStackTest, UnknownStacksAndVersionsNameWhatCapsimKnows) {
  EXPECT_EQ(testing::error_of([] { (void)read_doc(with_stack("megatron")); }),
            "doc.json:/stack: unknown training stack \"megatron\"; expected one of "
            "megatron-core, nemo, megatron-bridge, megatron-deepspeed, deepspeed, pytorch-fsdp, "
            "llm-foundry, torchtitan");
  EXPECT_EQ(testing::error_of([] {
              (void)read_doc(with_stack({{"name", "nemo"}, {"version", "3"}}));
            }),
            "doc.json:/stack/version: training stack \"nemo\" has no version \"3\"; expected one "
            "of 2024, 2023");
  EXPECT_EQ(testing::error_of([] {
              (void)read_doc(with_stack({{"name", "torch"}}));
            }),
            "doc.json:/stack/name: unknown training stack \"torch\"; expected one of "
            "megatron-core, nemo, megatron-bridge, megatron-deepspeed, deepspeed, pytorch-fsdp, "
            "llm-foundry, torchtitan");
  const std::string no_name = testing::error_of([] {
    (void)read_doc(with_stack({{"version", "2024"}}));
  });
  EXPECT_EQ(no_name.rfind("doc.json:/stack: expected a stack name (one of megatron-core", 0), 0u)
      << no_name;
  const std::string number = testing::error_of([] { (void)read_doc(with_stack(3)); });
  EXPECT_NE(number.find("doc.json:/stack: expected a stack name"), std::string::npos) << number;
  const std::string extra = testing::error_of([] {
    (void)read_doc(with_stack({{"name", "nemo"}, {"tp_comm_overlap", true}}));
  });
  EXPECT_NE(extra.find("/stack"), std::string::npos) << extra;
  EXPECT_NE(extra.find("tp_comm_overlap"), std::string::npos) << extra;
}

TEST(ScenarioStackTest, AnExplicitGatherOverlapNeedsTheGradientOverlapTheStackTurnsOff) {
  nlohmann::json doc = with_stack("megatron-core");
  doc["parallelism"]["overlap_param_gather"] = true;
  const std::string error = testing::error_of([&doc] { (void)read_doc(doc); });
  EXPECT_EQ(error.rfind("doc.json:/parallelism/overlap_param_gather: overlap_param_gather needs "
                        "overlap_grad_reduce, which the scenario's stack turns off",
                        0),
            0u)
      << error;
}

}  // namespace
}  // namespace capsim
