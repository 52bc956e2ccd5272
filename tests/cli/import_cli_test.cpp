// capsim import megatron / hf and capsim export megatron: outputs, notes on stderr, exit codes
// and the round trip through files.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"
#include <unistd.h>

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using testing::run_capsim;
namespace fs = std::filesystem;
const std::string kImport = std::string(CAPSIM_TEST_DATA_DIR) + "/import";

std::string scratch(const std::string& name) {
  return ::testing::TempDir() + "capsim_import_" + std::to_string(getpid()) + "_" + name;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ImportCliTest, MegatronScriptToScenarioAndSimulate) {
  const std::string out = scratch("gpt3.json");
  const auto r = run_capsim("import megatron " + kImport +
                                "/megatron/gpt3_175b_distributed.sh --gpu A100-SXM4-80GB "
                                "--nodes 128 -o " +
                                out,
                            true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("capsim import megatron: note: " + kImport +
                       "/megatron/gpt3_175b_distributed.sh:line 41: --rampup-batch-size: "
                       "ignored"),
            std::string::npos)
      << r.out;
  const nlohmann::json s = nlohmann::json::parse(read_text(out));
  EXPECT_EQ(s.at("schema"), "capsim.scenario/v1");
  EXPECT_EQ(s.at("name"), "gpt3_175b_distributed");
  EXPECT_EQ(s.at("parallelism").at("data"), 8);
  const auto sim = run_capsim("simulate " + out + " --engine analytic --json");
  EXPECT_EQ(sim.exit_code, 0);
  EXPECT_GT(nlohmann::json::parse(sim.out).at("iteration_time_s").get<double>(), 0.0);
  fs::remove(out);
}

TEST(ImportCliTest, ExportThenImportIsTheScenario) {
  const std::string scenario = kSourceDir + "/scenarios/deepseek-v3-h100/scenario.json";
  const std::string args = scratch("ds.args");
  const std::string back = scratch("ds.json");
  const auto exported = run_capsim("export megatron " + scenario);
  ASSERT_EQ(exported.exit_code, 0);
  EXPECT_EQ(exported.out.rfind("--num-layers 61\n--hidden-size 7168\n", 0), 0u) << exported.out;
  std::ofstream(args) << exported.out;
  const auto imported = run_capsim("import megatron " + args +
                                   " --instance dgx-h100 --nodes 128 --name deepseek-v3-h100-1024 "
                                   "-o " +
                                   back);
  ASSERT_EQ(imported.exit_code, 0);
  const auto a = run_capsim("simulate " + scenario + " --engine analytic --json");
  const auto b = run_capsim("simulate " + back + " --engine analytic --json");
  ASSERT_EQ(a.exit_code, 0);
  nlohmann::json ja = nlohmann::json::parse(a.out);
  nlohmann::json jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja.at("iteration_time_s"), jb.at("iteration_time_s"));
  EXPECT_EQ(ja.at("memory"), jb.at("memory"));
  fs::remove(args);
  fs::remove(back);
}

TEST(ImportCliTest, ExportNamesWhatNoArgumentCarries) {
  const auto r = run_capsim("export megatron " + kSourceDir +
                                "/scenarios/gpt3-175b-selene-1024/scenario.json "
                                "--set parallelism.schedule=zero-bubble",
                            true);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("no Megatron-LM argument carries parallelism.schedule \"zero-bubble\""),
            std::string::npos)
      << r.out;
}

TEST(ImportCliTest, BadInputExitsTwoAndWritesNothing) {
  const std::string out = scratch("never.json");
  const std::string bad = kImport + "/megatron/bad/";
  const auto unresolved = run_capsim(
      "import megatron " + bad + "unresolved_variable.sh --gpu H100-SXM5-80GB --nodes 1 -o " + out,
      true);
  EXPECT_EQ(unresolved.exit_code, 2);
  EXPECT_NE(unresolved.out.find("capsim import megatron: error: " + bad +
                                "unresolved_variable.sh:line 6: --tensor-model-parallel-size: "
                                "the value \"$TP\" uses the shell variable $TP"),
            std::string::npos)
      << unresolved.out;
  EXPECT_FALSE(fs::exists(out));
  // Every argument capsim does not model, one line each; --allow-unmodelled models the rest.
  const auto unknown = run_capsim("import megatron " + bad +
                                      "unknown_model_shape.args --gpu H100-SXM5-80GB "
                                      "--nodes 1",
                                  true);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("line 3: --num-experts-per-token: capsim does not model"),
            std::string::npos);
  EXPECT_NE(unknown.out.find("line 4: --quick-geglu: capsim does not model"), std::string::npos);
  EXPECT_EQ(run_capsim("import megatron " + bad +
                       "unknown_model_shape.args --gpu H100-SXM5-80GB --nodes 1 "
                       "--allow-unmodelled")
                .exit_code,
            0);
  for (const char* options : {"", " --gpu B100 --nodes 1", " --gpu H100-SXM5-80GB",
                              " --instance dgx-h100 --gpu H100-SXM5-80GB --nodes 1"}) {
    EXPECT_EQ(run_capsim("import megatron " + bad + "conflicting.args" + options).exit_code, 2)
        << options;
  }
  EXPECT_EQ(run_capsim("import parquet x").exit_code, 2);
  EXPECT_EQ(run_capsim("import").exit_code, 2);
  EXPECT_EQ(run_capsim("import --help").exit_code, 0);
  EXPECT_EQ(run_capsim("import megatron --help").exit_code, 0);
  EXPECT_EQ(run_capsim("export megatron --help").exit_code, 0);
  EXPECT_EQ(run_capsim("export megatron " + kImport + "/hf/llama-3.1-8b.json").exit_code, 2);
}

TEST(ImportCliTest, HfConfigToModel) {
  const auto r = run_capsim("import hf " + kImport + "/hf/qwen3-30b-a3b.json --seq-length 4096");
  ASSERT_EQ(r.exit_code, 0);
  const nlohmann::json m = nlohmann::json::parse(r.out);
  EXPECT_EQ(m.at("seq_length"), 4096);
  EXPECT_EQ(m.at("moe").at("num_experts"), 128);
  const auto no_seq = run_capsim("import hf " + kImport + "/hf/qwen3-30b-a3b.json", true);
  EXPECT_EQ(no_seq.exit_code, 0);
  EXPECT_NE(no_seq.out.find("max_position_embeddings (40960) is the longest context"),
            std::string::npos);
  const auto bad = run_capsim("import hf " + kImport + "/megatron/deepseek_v3.args", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("capsim import hf: error: " + kImport + "/megatron/deepseek_v3.args:"),
            std::string::npos)
      << bad.out;
  EXPECT_EQ(run_capsim("import hf " + kImport + "/hf/llama-3.1-8b.json --seq-length 0").exit_code,
            2);
}

TEST(ImportCliTest, BridgeRecipeToScenarioWithNotesAndErrors) {
  const auto r =
      run_capsim("import bridge " + kImport +
                     "/bridge/qwen3_30b_a3b_pretrain.yaml --gpu H100-SXM5-80GB --nodes 4",
                 true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("capsim import bridge: note: " + kImport +
                       "/bridge/qwen3_30b_a3b_pretrain.yaml:/optimizer/lr: --lr: ignored"),
            std::string::npos)
      << r.out;
  const auto bad = run_capsim(
      "import bridge " + kImport + "/bridge/bad/bad_value.yaml --gpu H100-SXM5-80GB --nodes 1",
      true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("bad_value.yaml:/model/tensor_model_parallel_size:"), std::string::npos)
      << bad.out;
  EXPECT_EQ(run_capsim("import bridge " + kImport +
                       "/bridge/missing.yaml --gpu H100-SXM5-80GB "
                       "--nodes 1")
                .exit_code,
            2);
}

TEST(ImportCliTest, ExportBridgeAndSbatchReadBack) {
  const std::string scenario = kSourceDir + "/scenarios/mixtral-8x7b-h100/scenario.json";
  for (const auto& [format, reader] : std::vector<std::pair<std::string, std::string>>{
           {"bridge", "bridge"}, {"sbatch", "megatron"}}) {
    SCOPED_TRACE(format);
    const std::string file = scratch("mixtral." + format);
    const auto exported = run_capsim("export " + format + " " + scenario);
    ASSERT_EQ(exported.exit_code, 0);
    std::ofstream(file) << exported.out;
    const auto back = run_capsim("import " + reader + " " + file +
                                 " --instance dgx-h100 --nodes 8 --name mixtral-8x7b-h100-64");
    ASSERT_EQ(back.exit_code, 0) << back.out;
    const auto shipped = run_capsim("export megatron " + scenario);
    const std::string again = scratch("again.json");
    std::ofstream(again) << back.out;
    EXPECT_EQ(run_capsim("export megatron " + again).out, shipped.out);
    fs::remove(file);
    fs::remove(again);
  }
  EXPECT_EQ(run_capsim("export slurm " + scenario).exit_code, 2);
}

}  // namespace
}  // namespace capsim
