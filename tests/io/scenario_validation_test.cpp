// Every scenario validation rule, with its exact message (tests/data/bad/EXPECTED.tsv lists each
// bad file and the message after "<file>:").
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/iteration_costs.hpp"

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "io/validation_io.hpp"
#include "tests/io/read_doc.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kTestDataDir;
using capsim::testing::read_doc;

struct BadCase {
  std::string file;
  std::string message;
};

std::vector<BadCase> load_expected() {
  std::vector<BadCase> out;
  std::ifstream in(kTestDataDir + "/bad/EXPECTED.tsv");
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos || line.rfind("scenario_", 0) != 0)
      continue;
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return out;
}

class BadScenarioTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadScenarioTest, RejectedWithExactMessage) {
  const BadCase& c = GetParam();
  const std::string path = kTestDataDir + "/bad/" + c.file;
  const std::string expected = path + (c.message.front() == '/' ? ":" : "") + c.message;
  try {
    (void)io::load_scenario(path);
    FAIL() << c.file << " was accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
    EXPECT_EQ(e.file(), path);
  }
}

INSTANTIATE_TEST_SUITE_P(AllRules, BadScenarioTest, ::testing::ValuesIn(load_expected()),
                         [](const ::testing::TestParamInfo<BadCase>& param_info) {
                           std::string name = param_info.param.file.substr(9);
                           name = name.substr(0, name.size() - 5);
                           return name;
                         });

TEST(ScenarioValidationTest, CoversEveryBadFile) {
  EXPECT_GE(load_expected().size(), 50u);
}

TEST(ScenarioValidationTest, ValidScenarioLoadsWithUnits) {
  const Scenario s = io::load_scenario(kTestDataDir + "/scenarios/valid.json");
  EXPECT_EQ(s.name, "gpt3-13b-test");
  EXPECT_EQ(s.parallelism.num_gpus(), 32);
  EXPECT_DOUBLE_EQ(s.cluster.nic_bandwidth_bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node_bandwidth_bytes_per_s, 300e9);
  EXPECT_EQ(s.parallelism.recompute, Recompute::kSelective);
  EXPECT_TRUE(s.model.tied_embeddings);  // GPT default
}

TEST(ScenarioValidationTest, JsonRoundTrip) {
  const Scenario s = io::load_scenario(kTestDataDir + "/scenarios/valid.json");
  const nlohmann::json j = io::scenario_to_json(s);
  io::JsonReader reader(j, "roundtrip.json");
  const Scenario back = io::read_scenario(reader, true);
  EXPECT_EQ(io::scenario_to_json(back), j);
  EXPECT_FALSE(j.at("model").contains("dropout"));  // unset: the family convention
  for (const bool dropout : {false, true}) {
    nlohmann::json with = j;
    with["model"]["dropout"] = dropout;
    io::JsonReader r(with, "dropout.json");
    const Scenario read = io::read_scenario(r, true);
    ASSERT_TRUE(read.model.dropout.has_value());
    EXPECT_EQ(*read.model.dropout, dropout);
    EXPECT_EQ(io::scenario_to_json(read), with);
  }
}

// Gradient reduction precision: unset, Megatron-LM's default (fp32 for bf16/fp8 with ZeRO 0-2,
// 16 bits for fp16 and ZeRO-3); set, it round-trips and wins.
TEST(ScenarioValidationTest, GradReducePrecisionDefaultsAndRoundTrips) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  EXPECT_FALSE(j.at("parallelism").contains("grad_reduce_precision"));
  EXPECT_EQ(read_doc(j).parallelism.grad_reduce_bytes_per_element(), 4.0);  // bf16, ZeRO-1
  nlohmann::json fp16 = j;
  fp16["parallelism"]["precision"] = "fp16";
  EXPECT_EQ(read_doc(fp16).parallelism.grad_reduce_bytes_per_element(), 2.0);
  nlohmann::json zero3 = j;
  zero3["parallelism"]["zero_stage"] = 3;
  EXPECT_EQ(read_doc(zero3).parallelism.grad_reduce_bytes_per_element(), 2.0);
  j["parallelism"]["grad_reduce_precision"] = "bf16";
  const Scenario s = read_doc(j);
  EXPECT_EQ(s.parallelism.grad_reduce_bytes_per_element(), 2.0);
  EXPECT_EQ(io::scenario_to_json(s), j);
}

// fp8 parameters: unset, false and not written; set on an fp8 scenario, they read and
// round-trip (a non-fp8 scenario is rejected, tests/data/bad).
TEST(ScenarioValidationTest, Fp8ParamsDefaultsAndRoundTrips) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  EXPECT_FALSE(j.at("parallelism").contains("fp8_params"));
  EXPECT_FALSE(read_doc(j).parallelism.fp8_params);
  j["cluster"]["gpu"] = "H100-SXM5-80GB";
  j["parallelism"]["precision"] = "fp8";
  j["parallelism"]["fp8_params"] = true;
  const Scenario s = read_doc(j);
  EXPECT_TRUE(s.parallelism.fp8_params);
  EXPECT_EQ(io::scenario_to_json(s), j);
  j["parallelism"]["fp8_params"] = false;
  EXPECT_FALSE(io::scenario_to_json(read_doc(j)).at("parallelism").contains("fp8_params"));
}

// The optimizer's storage: unset, fp32 moments and an fp32 master copy (none is written back);
// set, each value reads, round-trips and reaches the byte counts.
TEST(ScenarioValidationTest, OptimizerStorageDefaultsAndRoundTrips) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  EXPECT_FALSE(j.at("parallelism").contains("optimizer_state_precision"));
  EXPECT_FALSE(j.at("parallelism").contains("master_weights"));
  const Parallelism defaults = read_doc(j).parallelism;
  EXPECT_EQ(defaults.optimizer_state_bytes_per_element(), 4.0);
  EXPECT_EQ(defaults.master_weights_or_default(), MasterWeights::kFp32);
  EXPECT_EQ(defaults.master_weight_bytes(), 4.0);
  for (const char* state : {"fp32", "bf16", "fp16"}) {
    for (const char* master : {"fp32", "fp32-remainders", "bf16", "fp16", "none"}) {
      nlohmann::json set = j;
      set["parallelism"]["optimizer_state_precision"] = state;
      set["parallelism"]["master_weights"] = master;
      const Scenario s = read_doc(set);
      EXPECT_EQ(to_string(*s.parallelism.master_weights), std::string(master));
      EXPECT_EQ(s.parallelism.optimizer_state_bytes_per_element(),
                std::string(state) == "fp32" ? 4.0 : 2.0);
      EXPECT_EQ(io::scenario_to_json(s), set) << state << " " << master;
    }
  }
}

// fp8 training keeps bf16 weights, which fp32-remainders completes; fp16 training accepts a
// 16-bit fp16 master or none, as Apex does with dtype=fp16 or store_params=False.
TEST(ScenarioValidationTest, MasterWeightsFollowTheTrainingPrecision) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  j["cluster"]["gpu"] = "H100-SXM5-80GB";
  j["parallelism"]["precision"] = "fp8";
  j["parallelism"]["master_weights"] = "fp32-remainders";
  EXPECT_EQ(read_doc(j).parallelism.master_weight_bytes(), 2.0);
  j["parallelism"]["precision"] = "fp16";
  for (const char* master : {"fp32", "fp16", "none"}) {
    j["parallelism"]["master_weights"] = master;
    EXPECT_NO_THROW((void)read_doc(j)) << master;
  }
}

// fp32 training (a Parallelism built in code; scenarios train in 16 bits or fp8) has no master
// copy by default: its weights are the master.
TEST(ScenarioValidationTest, Fp32TrainingHasNoMasterByDefault) {
  Parallelism p;
  p.precision = Precision::kFp32;
  EXPECT_EQ(p.master_weights_or_default(), MasterWeights::kNone);
  EXPECT_EQ(p.master_weight_bytes(), 0.0);
}

// Overlap (Megatron-Core's --overlap-grad-reduce / --overlap-param-gather): on unless the
// scenario says otherwise; the parameter gather's default follows the gradients'; written only
// when off, so it round-trips.
TEST(ScenarioValidationTest, OverlapDefaultsAndRoundTrips) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  EXPECT_FALSE(j.at("parallelism").contains("overlap_grad_reduce"));
  const Scenario on = read_doc(j);
  EXPECT_TRUE(on.parallelism.overlap_grad_reduce);
  EXPECT_TRUE(on.parallelism.overlap_param_gather);
  nlohmann::json serial = j;  // valid.json trains with ZeRO-1
  serial["parallelism"]["overlap_grad_reduce"] = false;
  const Scenario off = read_doc(serial);
  EXPECT_FALSE(off.parallelism.overlap_grad_reduce);
  EXPECT_FALSE(off.parallelism.overlap_param_gather);
  EXPECT_EQ(io::scenario_to_json(off), serial);
  nlohmann::json gather_only = j;
  gather_only["parallelism"]["overlap_param_gather"] = false;
  const Scenario g = read_doc(gather_only);
  EXPECT_TRUE(g.parallelism.overlap_grad_reduce);
  EXPECT_FALSE(g.parallelism.overlap_param_gather);
  EXPECT_EQ(io::scenario_to_json(g), gather_only);
}

// Layer splits the rules accept beyond an even one: Megatron's split counting the embedding and
// the loss as layers (126 + 2 over 8 stages of 8 chunks), and stage_layers that do not divide by
// the virtual stages; and one they reject (neither 125 nor 127 divides by 64).
TEST(ScenarioValidationTest, MegatronEmbeddingLossSplitAndUnevenChunksLoad) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  j["model"]["num_layers"] = 126;
  j["parallelism"]["tensor"] = 1;
  j["parallelism"]["pipeline"] = 8;
  j["parallelism"]["data"] = 4;
  j["parallelism"]["virtual_pipeline_stages"] = 8;
  j["parallelism"]["schedule"] = "interleaved-1f1b";
  j["parallelism"]["sequence_parallel"] = false;
  const Scenario megatron = read_doc(j);
  EXPECT_EQ(layers_per_stage(megatron.model, megatron.parallelism),
            (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  nlohmann::json uneven = j;
  uneven["parallelism"]["stage_layers"] = {15, 16, 16, 16, 16, 16, 16, 15};
  EXPECT_NO_THROW((void)read_doc(uneven));
  nlohmann::json neither = j;
  neither["model"]["num_layers"] = 125;
  EXPECT_THROW((void)read_doc(neither), io::InputError);
  // At one layer per chunk (126 + 2 over 16 stages of 8), stage 0's first chunk holds the
  // embedding alone and the last stage's last chunk the loss alone.
  nlohmann::json single = j;
  single["parallelism"]["pipeline"] = 16;
  single["parallelism"]["data"] = 2;
  const Scenario one_per_chunk = read_doc(single);
  std::vector<int> expected(16, 8);
  expected.front() = 7;
  expected.back() = 7;
  EXPECT_EQ(layers_per_stage(one_per_chunk.model, one_per_chunk.parallelism), expected);
  EXPECT_EQ(layers_in_chunk(7, 0, 0, 16, 8), 0);
  EXPECT_EQ(layers_in_chunk(7, 15, 7, 16, 8), 0);
  EXPECT_EQ(layers_in_chunk(8, 5, 0, 16, 8), 1);
}

// DP buckets: unset, Megatron-Core's max(40M, 1M x DP) parameters with DP the data-parallel size
// without context parallelism, in the gradient-reduce precision; set, the given bytes.
TEST(ScenarioValidationTest, DpBucketDefaultsToMegatronCoreSize) {
  Parallelism p;
  p.precision = Precision::kBf16;
  p.zero_stage = 1;
  p.data = 8;
  EXPECT_DOUBLE_EQ(p.dp_bucket_bytes_or_default(), 40e6 * 4.0);  // fp32 gradients
  p.data = 64;
  p.context = 2;
  EXPECT_DOUBLE_EQ(p.dp_bucket_bytes_or_default(), 64e6 * 4.0);
  p.grad_reduce_precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(p.dp_bucket_bytes_or_default(), 64e6 * 2.0);
  p.dp_bucket_bytes = 25e6;
  EXPECT_DOUBLE_EQ(p.dp_bucket_bytes_or_default(), 25e6);
}

// The bucket layout: unset, Megatron-Core's (not written back); every-chunk round-trips and
// reaches the costs.
TEST(ScenarioValidationTest, DpBucketLayoutDefaultsToMegatronCoreAndRoundTrips) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  EXPECT_FALSE(j.at("parallelism").contains("dp_bucket_layout"));
  EXPECT_FALSE(read_doc(j).parallelism.dp_buckets_every_chunk);
  j["parallelism"]["dp_bucket_layout"] = "every-chunk";
  const Scenario s = read_doc(j);
  EXPECT_TRUE(s.parallelism.dp_buckets_every_chunk);
  EXPECT_EQ(io::scenario_to_json(s), j);
}

// Megatron-Core's default buckets split only stage 0's first chunk; an explicit size (PyTorch
// DDP, Apex) splits every chunk of every stage, at most kMaxDpBucketsPerChunk times. Counts
// follow the gradient bytes (4 per parameter here).
TEST(ScenarioValidationTest, OnlyTheFirstChunkOfTheFirstStageIsSplitByDefault) {
  IterationCosts costs;
  costs.dp_bucket_bytes = 25e6;
  costs.grad_bytes_per_element = 4.0;
  costs.param_bytes_per_element = 2.0;
  costs.stages.resize(2);
  for (StageCosts& stage : costs.stages) {
    stage.chunks.resize(2);
    for (ChunkCosts& chunk : stage.chunks)
      chunk.parameter_count = 250e6;  // 1 GB of fp32 gradients
  }
  EXPECT_EQ(dp_bucket_count(costs, 0, 0), 40);
  EXPECT_EQ(dp_bucket_count(costs, 0, 1), 1);
  EXPECT_EQ(dp_bucket_count(costs, 1, 0), 1);
  costs.stages[0].chunks[0].parameter_count = 250e3;
  EXPECT_EQ(dp_bucket_count(costs, 0, 0), 1);
  costs.megatron_core_buckets = false;
  EXPECT_EQ(dp_bucket_count(costs, 1, 1), 40);
  costs.dp_bucket_bytes = 65536.0;
  costs.stages[0].chunks[0].parameter_count = 250e9;
  EXPECT_EQ(dp_bucket_count(costs, 0, 0), static_cast<int>(kMaxDpBucketsPerChunk));
}

// Buckets fill to the bucket size in backward order and the last holds the rest (Megatron-Core's
// _compute_default_per_buffer_param_layout); an exact multiple leaves no sliver of a bucket;
// past kMaxDpBucketsPerChunk the buckets are merged evenly.
TEST(ScenarioValidationTest, BucketsAreFullButTheLast) {
  IterationCosts costs;
  costs.dp_bucket_bytes = 25e6;
  costs.grad_bytes_per_element = 4.0;
  costs.stages.resize(1);
  costs.stages[0].chunks.resize(1);
  double& parameters = costs.stages[0].chunks[0].parameter_count;
  parameters = 26e6;  // 104 MB: four full 25 MB buckets and 4 MB
  DpBucketSplit split = dp_bucket_split(costs, 0, 0);
  EXPECT_EQ(split.count, 5);
  EXPECT_DOUBLE_EQ(split.full_share, 25.0 / 104.0);
  EXPECT_NEAR(split.last_share(), 4.0 / 104.0, 1e-15);
  parameters = 25e6;  // 100 MB: four full buckets
  split = dp_bucket_split(costs, 0, 0);
  EXPECT_EQ(split.count, 4);
  EXPECT_DOUBLE_EQ(split.last_share(), split.full_share);
  parameters = 1e6;  // below one bucket
  split = dp_bucket_split(costs, 0, 0);
  EXPECT_EQ(split.count, 1);
  EXPECT_DOUBLE_EQ(split.last_share(), 1.0);
  costs.dp_bucket_bytes = 65536.0;
  parameters = 250e9;
  split = dp_bucket_split(costs, 0, 0);
  EXPECT_EQ(split.count, static_cast<int>(kMaxDpBucketsPerChunk));
  EXPECT_DOUBLE_EQ(split.last_share(), split.full_share);
}

TEST(ScenarioValidationTest, OversubscribedLeavesRoundTrip) {
  nlohmann::json j =
      io::scenario_to_json(io::load_scenario(kTestDataDir + "/scenarios/valid.json"));
  nlohmann::json& inter = j["cluster"]["inter_node"];
  inter["topology"] = "oversubscribed";
  inter["oversubscription"] = 2.0;
  {
    io::JsonReader r(j, "no-leaf.json");
    const Scenario s = io::read_scenario(r, true);
    EXPECT_EQ(s.cluster.nodes_per_leaf, 1);  // documented default: the per-node worst case
    EXPECT_EQ(io::scenario_to_json(s)["cluster"]["inter_node"]["nodes_per_leaf"], 1);
  }
  inter["nodes_per_leaf"] = 16;
  io::JsonReader r(j, "leaf.json");
  const Scenario s = io::read_scenario(r, true);
  EXPECT_EQ(s.cluster.nodes_per_leaf, 16);
  EXPECT_EQ(io::scenario_to_json(s), j);
}

TEST(ScenarioValidationTest, InstanceFillsGpuAndNetwork) {
  const nlohmann::json j = io::JsonReader::parse_text(R"({
    "schema": "capsim.scenario/v1",
    "model": {"num_layers": 48, "hidden_size": 7168, "num_attention_heads": 56,
              "seq_length": 2048, "vocab_size": 50432},
    "cluster": {"instance": "p4d.24xlarge", "num_nodes": 2},
    "parallelism": {"tensor": 8, "pipeline": 1, "data": 2, "micro_batch_size": 1,
                    "global_batch_size": 8}})",
                                                      "inline.json");
  io::JsonReader reader(j, "inline.json");
  const Scenario s = io::read_scenario(reader, true);
  EXPECT_EQ(s.cluster.gpu.name, "A100-SXM4-40GB");
  EXPECT_EQ(s.cluster.nics_per_node, 4);
  EXPECT_DOUBLE_EQ(s.cluster.nic_bandwidth_bytes_per_s, 12.5e9);
  EXPECT_EQ(s.cluster.inter_node_fabric, Fabric::kEfa);
  EXPECT_EQ(s.model.num_kv_heads, 56);
  EXPECT_EQ(s.model.ffn_hidden_size, 4 * 7168);
  EXPECT_EQ(s.parallelism.schedule, Schedule::kOneFOneB);
}

// Every unknown and missing key of a scenario in one run, one line each with its pointer.
TEST(ScenarioValidationTest, EveryKeyProblemIsReportedAtOnce) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  auto& heads = doc["model"]["num_attention_heads"];
  doc["model"]["num_atention_heads"] = heads;
  doc["model"].erase("num_attention_heads");
  doc["cluster"]["colour"] = "blue";
  doc["parallelism"].erase("data");
  doc["parallelism"]["expret"] = 2;
  try {
    (void)read_doc(doc);
    FAIL() << "accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "doc.json:/model/num_atention_heads: unknown key \"num_atention_heads\"; did you "
              "mean \"num_attention_heads\"?\n"
              "doc.json:/cluster/colour: unknown key \"colour\"; allowed keys: gpu, "
              "gpus_per_node, instance, inter_node, intra_node, num_nodes, nvlink_domain\n"
              "doc.json:/parallelism/data: missing required key\n"
              "doc.json:/parallelism/expret: unknown key \"expret\"; did you mean \"expert\"?");
    ASSERT_EQ(e.problems().size(), 4u);
    EXPECT_EQ(e.pointer(), "/model/num_atention_heads");
  }
}

// A --set index may append one element to an array, no more: index 99999999 made nlohmann fill
// the gap with nulls (6 GB, then an abort under a memory limit).
TEST(ScenarioValidationTest, OverrideIndicesStayNearTheArray) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["parallelism"]["stage_layers"] = {20, 20};
  try {
    io::apply_overrides(doc, {{"/parallelism/stage_layers/99999999", "1"}}, "s.json", "");
    FAIL() << "accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json:/parallelism/stage_layers/99999999: --set index 99999999 is beyond the end "
              "of the array (2 elements); an index may at most append one element (index 2)");
  }
  EXPECT_THROW(io::apply_overrides(
                   doc, {{"/parallelism/stage_layers/99999999999999999999999", "1"}}, "s.json", ""),
               io::InputError);
  // A missing value becomes an array when the path indexes it: index 0 only.
  try {
    io::apply_overrides(doc, {{"/parallelism/splits/99999999", "1"}}, "s.json", "/cases/0");
    FAIL() << "accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json:/cases/0/parallelism/splits/99999999: --set index 99999999 is beyond the "
              "end of the array (0 elements); an index may at most append one element (index 0)");
  }
  EXPECT_FALSE(doc["parallelism"].contains("splits"));
  io::apply_overrides(doc,
                      {{"/parallelism/stage_layers/1", "19"}, {"/parallelism/stage_layers/2", "1"}},
                      "s.json", "");
  EXPECT_EQ(doc["parallelism"]["stage_layers"], nlohmann::json({20, 19, 1}));
  io::apply_overrides(doc, {{"/parallelism/stage_layers/-", "0"}}, "s.json", "");
  EXPECT_EQ(doc["parallelism"]["stage_layers"].size(), 4u);
}

TEST(ScenarioValidationTest, MissingFileIsInputError) {
  try {
    (void)io::load_scenario("/nonexistent/scenario.json");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/scenario.json: cannot open file");
  }
}

}  // namespace
}  // namespace capsim

namespace capsim {
namespace {

TEST(ValidationCasesTest, ProfileIsResolvedAndNamedByPointer) {
  const std::string path =
      std::string(CAPSIM_TEST_DATA_DIR) + "/bad/validation_missing_profile.json";
  try {
    (void)io::load_validation_cases(path);
    FAIL() << "accepted a missing profile";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":/cases/0/scenario/profile: profile file \"no-such-profile.json\" not found "
                  "(looked beside the input file and in the working folder)");
  }
}

}  // namespace
}  // namespace capsim

namespace capsim {
namespace {

// The fabrics, activations and DeepSpeed split read from a scenario and are written back as read.
TEST(ScenarioValidationTest, FabricsActivationsAndPartitionMethodRoundTrip) {
  const std::vector<std::pair<std::string, Fabric>> fabrics = {{"omni-path", Fabric::kOmniPath},
                                                               {"slingshot", Fabric::kSlingshot},
                                                               {"tcpx", Fabric::kTcpx},
                                                               {"tcpxo", Fabric::kTcpxo}};
  const std::vector<std::pair<std::string, FfnActivation>> activations = {
      {"squared-relu", FfnActivation::kSquaredRelu}, {"geglu", FfnActivation::kGeglu}};
  for (const auto& [fabric_name, fabric] : fabrics) {
    for (const auto& [activation_name, activation] : activations) {
      nlohmann::json doc =
          nlohmann::json::parse(std::ifstream(kTestDataDir + "/scenarios/valid.json"));
      doc["cluster"]["inter_node"]["fabric"] = fabric_name;
      doc["model"]["ffn_activation"] = activation_name;
      doc["parallelism"]["partition_method"] = "parameters";
      const Scenario s = read_doc(doc);
      EXPECT_EQ(s.cluster.inter_node_fabric, fabric);
      EXPECT_EQ(s.model.ffn_activation, activation);
      EXPECT_EQ(s.parallelism.partition_method, PartitionMethod::kParameters);
      EXPECT_FALSE(s.model.tied_embeddings);  // the non-GPT convention
      const nlohmann::json back = io::scenario_to_json(s);
      EXPECT_EQ(back.at("cluster").at("inter_node").at("fabric"), fabric_name);
      EXPECT_EQ(back.at("model").at("ffn_activation"), activation_name);
      EXPECT_EQ(back.at("parallelism").at("partition_method"), "parameters");
      const Scenario again = read_doc(back);
      EXPECT_TRUE(again.model == s.model);
      EXPECT_TRUE(again.parallelism == s.parallelism);
      EXPECT_TRUE(again.cluster == s.cluster);
    }
  }
}

}  // namespace
}  // namespace capsim
