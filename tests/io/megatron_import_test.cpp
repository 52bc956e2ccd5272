// Megatron-LM arguments read as scenarios: the shipped examples, each mapping with a Megatron
// default behind it, and bad input named by file and line.
#include "io/megatron_import.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/input_file.hpp"
#include "io/megatron_arguments_known.hpp"
#include "io/scenario_io.hpp"
#include "tests/io/error_of.hpp"

namespace capsim::io {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(CAPSIM_TEST_DATA_DIR) / "import" / "megatron";
const fs::path kScenarios = fs::path(CAPSIM_SOURCE_DIR) / "scenarios";

// The shape of a small Llama-like model, to which each test adds its arguments.
const std::string kModel =
    "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
    "--vocab-size 32000 --bf16 ";

MegatronImportOptions on_h100(int nodes) {
  MegatronImportOptions o;
  o.name = "t";
  o.cluster = {{"gpu", "H100-SXM5-80GB"}, {"gpus_per_node", 8}, {"num_nodes", nodes}};
  return o;
}

MegatronImport import_text(const std::string& text, int nodes = 1, bool allow = false) {
  Catalog catalog;
  MegatronImportOptions o = on_h100(nodes);
  o.allow_unmodelled = allow;
  return import_megatron(text, "t.args", o, catalog);
}

MegatronImport import_file(const fs::path& path, const MegatronImportOptions& o) {
  Catalog catalog;
  return import_megatron(read_input_file(path.string(), InputKind::kLog), path.string(), o,
                         catalog);
}

std::string error_text(const std::string& text, int nodes = 1) {
  return testing::error_of([&] { (void)import_text(text, nodes); });
}

bool has_note(const MegatronImport& m, const std::string& part) {
  for (const InputProblem& n : m.notes) {
    if (describe_problem(n).find(part) != std::string::npos)
      return true;
  }
  return false;
}

TEST(MegatronImportTest, Gpt3LaunchScriptFromMegatronExamples) {
  MegatronImportOptions o;
  o.name = "gpt3";
  o.cluster = {{"gpu", "A100-SXM4-80GB"}, {"gpus_per_node", 8}, {"num_nodes", 128}};
  const MegatronImport m = import_file(kData / "gpt3_175b_distributed.sh", o);
  const Scenario& s = m.scenario;
  EXPECT_EQ(s.model.num_layers, 96);
  EXPECT_EQ(s.model.hidden_size, 12288);
  EXPECT_EQ(s.model.ffn_hidden_size, 4 * 12288);  // Megatron's default without --swiglu
  EXPECT_EQ(s.model.vocab_size, 50257);           // GPT2BPETokenizer
  EXPECT_TRUE(s.model.tied_embeddings);
  EXPECT_EQ(s.model.cross_entropy, CrossEntropyKernel::kUnfused);
  EXPECT_EQ(s.parallelism.tensor, 8);
  EXPECT_EQ(s.parallelism.pipeline, 16);
  EXPECT_EQ(s.parallelism.data, 8);  // 1024 GPUs / (8 x 16)
  EXPECT_EQ(s.parallelism.precision, Precision::kFp16);
  EXPECT_EQ(s.parallelism.zero_stage, 0);
  EXPECT_FALSE(s.parallelism.overlap_grad_reduce);  // Megatron-LM's default
  EXPECT_TRUE(has_note(m, "line 41: --rampup-batch-size: ignored"));
  EXPECT_TRUE(has_note(m, "line 34: --max-position-embeddings 2048: ignored"));
  EXPECT_TRUE(has_note(m, "--save: ignored"));  // its value, $1, is never read
}

// The shipped argument examples are the shipped scenarios, written for Megatron-LM.
TEST(MegatronImportTest, DeepSeekV3ArgumentFileIsTheShippedScenario) {
  Scenario want = load_scenario((kScenarios / "deepseek-v3-h100" / "scenario.json").string());
  MegatronImportOptions o;
  o.name = want.name;
  o.cluster = {{"instance", "dgx-h100"}, {"num_nodes", 128}};
  Scenario got = import_file(kData / "deepseek_v3.args", o).scenario;
  got.model.name = want.model.name;
  got.profile_path = want.profile_path;
  EXPECT_EQ(scenario_to_json(got).dump(1), scenario_to_json(want).dump(1));
  EXPECT_TRUE(got.model == want.model);
  EXPECT_TRUE(got.parallelism == want.parallelism);
}

TEST(MegatronImportTest, MixtralLaunchScriptIsTheShippedScenario) {
  Scenario want = load_scenario((kScenarios / "mixtral-8x7b-h100" / "scenario.json").string());
  MegatronImportOptions o;
  o.name = want.name;
  o.cluster = {{"instance", "dgx-h100"}, {"num_nodes", 8}};
  Scenario got = import_file(kData / "mixtral_8x7b.sh", o).scenario;
  got.model.name = want.model.name;
  got.profile_path = want.profile_path;
  EXPECT_EQ(scenario_to_json(got).dump(1), scenario_to_json(want).dump(1));
}

TEST(MegatronImportTest, MegatronDefaults) {
  const Scenario s = import_text(kModel + "--swiglu --group-query-attention").scenario;
  EXPECT_EQ(s.model.ffn_hidden_size, 10880);      // int(4h * 2/3 / 64) * 64
  EXPECT_EQ(s.model.num_kv_heads, 1);             // num_query_groups defaults to 1
  EXPECT_EQ(s.model.dropout, true);               // Megatron's 0.1, against Llama's convention...
  EXPECT_EQ(s.parallelism.global_batch_size, 8);  // one micro-batch per data-parallel rank
  const Scenario gpt = import_text(kModel).scenario;
  EXPECT_FALSE(gpt.model.dropout.has_value());  // ...and GPT's own
  EXPECT_EQ(gpt.model.ffn_hidden_size, 4 * 4096);
}

// --squared-relu (Nemotron-4) is an ungated MLP of 4h; with --swiglu it is a conflict, as
// Megatron-LM asserts.
TEST(MegatronImportTest, SquaredReluIsReadAndExclusiveWithSwiglu) {
  const Scenario s = import_text(kModel + "--squared-relu").scenario;
  EXPECT_EQ(s.model.ffn_activation, FfnActivation::kSquaredRelu);
  EXPECT_EQ(s.model.ffn_hidden_size, 4 * 4096);
  EXPECT_TRUE(s.model.tied_embeddings);  // Megatron-LM ties unless told to untie
  EXPECT_EQ(error_text(kModel + "--swiglu --squared-relu"),
            "t.args:line 1: --squared-relu: conflicts with --swiglu: an MLP has one activation");
}

// Megatron-Core fuses rotary embeddings unless --no-rope-fusion, and runs YaRN's unfused on
// grouped-query attention; Megatron-LM's linears, the experts' too, carry biases unless
// --disable-bias-linear.
TEST(MegatronImportTest, RopeFusionAndExpertBiasesFollowMegatronsDefaults) {
  const std::string moe = kModel + "--swiglu --num-experts 8 --moe-router-topk 2 ";
  const Scenario plain = import_text(moe + "--position-embedding-type rope").scenario;
  EXPECT_TRUE(plain.model.rope_fusion);
  EXPECT_TRUE(plain.model.moe->linear_bias);
  EXPECT_FALSE(import_text(moe + "--no-rope-fusion").scenario.model.rope_fusion);
  EXPECT_FALSE(import_text(moe + "--position-embedding-type yarn").scenario.model.rope_fusion);
  EXPECT_FALSE(import_text(moe + "--disable-bias-linear").scenario.model.moe->linear_bias);
}

// --fp8-dot-product-attention runs the attention core in fp8; it needs an fp8 recipe.
TEST(MegatronImportTest, Fp8DotProductAttentionNeedsAnFp8Recipe) {
  EXPECT_TRUE(import_text(kModel + "--fp8-format hybrid --fp8-recipe tensorwise "
                                   "--fp8-dot-product-attention")
                  .scenario.parallelism.fp8_attention);
  EXPECT_FALSE(import_text(kModel).scenario.parallelism.fp8_attention);
  EXPECT_NE(error_text(kModel + "--fp8-dot-product-attention")
                .find("--fp8-dot-product-attention: needs --fp8-format"),
            std::string::npos);
}

// Transformer Engine's op fuser runs the experts as its fused grouped MLP, on Blackwell in
// MXFP8; on H100 the layout rules refuse it.
TEST(MegatronImportTest, OpFuserRunsTheExpertsAsTheFusedGroupedMlp) {
  const std::string moe = kModel + "--swiglu --num-experts 8 --moe-router-topk 2 ";
  EXPECT_FALSE(import_text(moe).scenario.model.moe->fused_grouped_mlp);
  MegatronImportOptions o = on_h100(1);
  o.cluster["gpu"] = "B200-SXM-180GB";
  Catalog catalog;
  const std::string fused = moe +
                            "--fp8-format e4m3 --fp8-recipe mxfp8 "
                            "--use-transformer-engine-op-fuser";
  EXPECT_TRUE(import_megatron(fused, "t.args", o, catalog).scenario.model.moe->fused_grouped_mlp);
  EXPECT_NE(error_text(moe + "--use-transformer-engine-op-fuser")
                .find("/model/moe/fused_grouped_mlp: moe.fused_grouped_mlp "
                      "(Transformer Engine's CuTe DSL grouped MLP) runs on Blackwell "
                      "GPUs only"),
            std::string::npos);
}

TEST(MegatronImportTest, LayoutArguments) {
  const Scenario s =
      import_text(kModel +
                      "--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 "
                      "--context-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4 "
                      "--sequence-parallel --micro-batch-size 2 --global-batch-size 64",
                  2)
          .scenario;
  EXPECT_EQ(s.parallelism.data, 2);
  EXPECT_EQ(s.parallelism.virtual_pipeline_stages, 4);  // 32 / (2 x 4)
  EXPECT_EQ(s.parallelism.schedule, Schedule::kInterleaved);
  EXPECT_TRUE(s.parallelism.sequence_parallel);
  const Scenario uneven =
      import_text(kModel +
                  "--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 7 "
                  "--decoder-last-pipeline-num-layers 7")
          .scenario;
  EXPECT_EQ(uneven.parallelism.stage_layers, (std::vector<int>{7, 9, 9, 7}));
  const Scenario laid =
      import_text(kModel +
                  "--pipeline-model-parallel-size 2 "
                  "--num-virtual-stages-per-pipeline-rank 2 --global-batch-size 8 "
                  "--pipeline-model-parallel-layout \"Et*7|t*9|(t*8|)*1t*8L\"")
          .scenario;
  EXPECT_EQ(laid.parallelism.stage_layers, (std::vector<int>{15, 17}));
  // Micro-batch groups of the interleaved schedule (12 micro-batches in groups of 3).
  const Scenario grouped =
      import_text(kModel +
                  "--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
                  "--global-batch-size 48 --microbatch-group-size-per-virtual-pipeline-stage 3")
          .scenario;
  EXPECT_EQ(grouped.parallelism.num_micro_batches(), 12);
  EXPECT_EQ(grouped.parallelism.microbatch_group_size, 3);
  // capsim gives the loss's chunk the fewer layers of its rank, as Megatron's split does.
  EXPECT_NE(
      error_text(kModel +
                 "--pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 "
                 "--global-batch-size 8 --pipeline-model-parallel-layout \"Et*7|t*8|t*8|t*9L\"")
          .find("capsim deals each pipeline rank's layers evenly over its virtual stages"),
      std::string::npos);
}

TEST(MegatronImportTest, PrecisionsAsTheArgumentWriterSpellsThem) {
  const auto precision = [](const std::string& args) {
    Catalog catalog;
    MegatronImportOptions o = on_h100(1);
    o.cluster["gpu"] = "B200-SXM-180GB";  // mxfp8 and nvfp4 need Blackwell
    return to_string(
        import_megatron(kModel + args, "t.args", o, catalog).scenario.parallelism.precision);
  };
  EXPECT_STREQ(precision(""), "bf16");
  EXPECT_STREQ(precision("--fp8-format hybrid"), "fp8");
  EXPECT_STREQ(precision("--fp8-format hybrid --fp8-recipe tensorwise"), "fp8-cs");
  EXPECT_STREQ(precision("--fp8-format e4m3 --fp8-recipe blockwise"), "fp8-blockwise");
  EXPECT_STREQ(precision("--fp8-format e4m3 --fp8-recipe mxfp8"), "mxfp8");
  EXPECT_STREQ(precision("--fp4-format e2m1 --fp4-recipe nvfp4"), "nvfp4");
}

TEST(MegatronImportTest, UnresolvedVariableIsNamed) {
  EXPECT_EQ(testing::error_of(
                [] { (void)import_file(kData / "bad" / "unresolved_variable.sh", on_h100(1)); }),
            (kData / "bad" / "unresolved_variable.sh").string() +
                ":line 6: --tensor-model-parallel-size: the value \"$TP\" uses the shell "
                "variable $TP, which the file does not set; set it in the file or write the "
                "value");
}

TEST(MegatronImportTest, EveryUnmodelledArgumentIsReportedAtOnce) {
  const std::string file = (kData / "bad" / "unknown_model_shape.args").string();
  try {
    (void)import_file(file, on_h100(1));
    FAIL() << "no error";
  } catch (const InputError& e) {
    ASSERT_EQ(e.problems().size(), 2u) << e.what();  // --lr is ignored, not a problem
    EXPECT_EQ(describe_problem(e.problems()[0]),
              file +
                  ":line 3: --num-experts-per-token: capsim does not model this argument; it "
                  "may change the step (give --allow-unmodelled to model the run without it)");
    EXPECT_EQ(e.problems()[1].pointer, "line 4");
    EXPECT_EQ(e.problems()[1].message.rfind("--quick-geglu: ", 0), 0u);
  }
  MegatronImportOptions allowed = on_h100(1);
  allowed.allow_unmodelled = true;
  const MegatronImport m = import_file(file, allowed);
  EXPECT_TRUE(has_note(m, "--quick-geglu: capsim does not model this argument"));
  EXPECT_TRUE(has_note(m, "line 5: --lr: ignored: an optimization hyperparameter"));
}

TEST(MegatronImportTest, KnownUnmodelledArgumentsSayWhatTheyChange) {
  EXPECT_NE(error_text(kModel + "--recompute-granularity full --recompute-method block "
                                "--recompute-num-layers 4 --moe-expert-capacity-factor 1.0")
                .find("--recompute-method block --recompute-num-layers 4: capsim models full "
                      "recompute of every layer on its own"),
            std::string::npos);
  EXPECT_NE(error_text(kModel + "--no-gradient-accumulation-fusion")
                .find("changes the step, but capsim does not model it: an unfused kernel"),
            std::string::npos);
  EXPECT_NE(error_text(kModel + "--window-size 128,0 --window-attn-skip-freq 4")
                .find("--window-attn-skip-freq: capsim models windows on every layer or on "
                      "every other layer (2), got \"4\""),
            std::string::npos);
}

TEST(MegatronImportTest, BadValuesAndConflictsNameTheArgument) {
  const std::string bad = (kData / "bad").string();
  EXPECT_EQ(
      testing::error_of([&] { (void)import_file(kData / "bad" / "conflicting.args", on_h100(1)); }),
      bad + "/conflicting.args:line 4: --fp16: conflicts with --bf16");
  EXPECT_EQ(
      testing::error_of([&] { (void)import_file(kData / "bad" / "non_numeric.args", on_h100(1)); }),
      bad +
          "/non_numeric.args:line 1: --num-attention-heads: expected an integer, got "
          "\"thirty-two\"");
  EXPECT_EQ(
      testing::error_of([&] { (void)import_file(kData / "bad" / "repeated.args", on_h100(1)); }),
      bad +
          "/repeated.args:line 4: --tensor-model-parallel-size: given twice with "
          "different values (\"2\" on line 3, \"4\")");
  EXPECT_EQ(error_text(kModel + "--swiglu true"),
            "t.args:line 1: --swiglu: takes no value, got \"true\"");
  EXPECT_EQ(error_text(kModel + "--micro-batch-size"),
            "t.args:line 1: --micro-batch-size: expects a value, got none");
  EXPECT_EQ(error_text(kModel + "--moe-router-topk 2"),
            "t.args:line 1: --moe-router-topk: needs --num-experts (the model has no expert "
            "layers)");
  EXPECT_EQ(error_text(kModel + "--overlap-moe-expert-parallel-comm"),
            "t.args:line 1: --overlap-moe-expert-parallel-comm: needs --num-experts (the model "
            "has no expert layers)");
  EXPECT_EQ(error_text(kModel + "--num-experts 8 --moe-token-dispatcher-type flex"),
            "t.args:line 1: --moe-token-dispatcher-type: flex needs a backend: "
            "--moe-flex-dispatcher-backend deepep or hybridep");
  EXPECT_EQ(error_text(kModel + "--q-lora-rank 64"),
            "t.args:line 1: --q-lora-rank: needs --multi-latent-attention");
  EXPECT_EQ(error_text(kModel + "--recompute-num-layers 2"),
            "t.args:line 1: --recompute-num-layers: needs --recompute-granularity full");
  EXPECT_EQ(error_text(kModel + "--num-layers-per-virtual-pipeline-stage 3 "
                                "--pipeline-model-parallel-size 2"),
            "t.args:line 1: --num-layers-per-virtual-pipeline-stage: 3 layers per virtual stage "
            "do not divide --num-layers (32) over --pipeline-model-parallel-size (2)");
  EXPECT_EQ(error_text(kModel + "--overlap-param-gather --overlap-grad-reduce"),
            "t.args:line 1: --overlap-param-gather: needs --use-distributed-optimizer");
  EXPECT_EQ(error_text("pretrain_gpt --num-layers 2"),
            "t.args:line 1: expected a Megatron-LM argument starting with --, got "
            "\"pretrain_gpt\"");
  EXPECT_EQ(error_text("# nothing\n"),
            "t.args: no Megatron-LM arguments found (expected a launch script running a .py "
            "program, or an argument file)");
  EXPECT_EQ(error_text("--hidden-size 8 --num-attention-heads 1"),
            "t.args: --num-layers: missing; capsim needs it");
}

TEST(MegatronImportTest, LayoutMustFitTheClusterAndTheLayers) {
  EXPECT_EQ(error_text(kModel + "--tensor-model-parallel-size 3"),
            "t.args: the cluster's 8 GPUs do not divide into --tensor-model-parallel-size (3) x "
            "--pipeline-model-parallel-size (1) x --context-parallel-size (1) = 3: data "
            "parallelism is GPUs / (TP x PP x CP)");
  // Sizes whose product overflows 32 bits are named, not wrapped.
  EXPECT_EQ(error_text(kModel + "--tensor-model-parallel-size 1048576 "
                                "--pipeline-model-parallel-size 1048576"),
            "t.args: the cluster's 8 GPUs do not divide into --tensor-model-parallel-size "
            "(1048576) x --pipeline-model-parallel-size (1048576) x --context-parallel-size (1) "
            "= 1099511627776: data parallelism is GPUs / (TP x PP x CP)");
  EXPECT_NE(error_text(kModel + "--pipeline-model-parallel-layout \"(((t*100000)*100)*100)\"")
                .find("expected Megatron-Core's layout"),
            std::string::npos);
  EXPECT_EQ(error_text(kModel + "--window-size 128,0x"),
            "t.args:line 1: --window-size: expected \"LEFT,0\" (a causal window of LEFT "
            "tokens), got \"128,0x\"");
  EXPECT_NE(error_text(kModel + "--num-experts 8 --moe-layer-freq \"([0]*3+[1]*30)\"")
                .find("--moe-layer-freq: capsim models dense layers first"),
            std::string::npos);
  EXPECT_NE(error_text(kModel + "--num-experts 8 --moe-layer-freq \"(([0]*1+[1])*15+[0]*2)\"")
                .find("--moe-layer-freq: capsim models dense layers first"),
            std::string::npos);
  EXPECT_EQ(error_text(kModel + "--pipeline-model-parallel-size 2 "
                                "--pipeline-model-parallel-layout \"Et*16|t*16|L\""),
            "t.args:line 1: --pipeline-model-parallel-layout: has 3 stages; "
            "--pipeline-model-parallel-size (2) x virtual stages (1) = 2");
  EXPECT_EQ(error_text(kModel + "--pipeline-model-parallel-size 2 "
                                "--pipeline-model-parallel-layout \"Et*16|t*15L\""),
            "t.args:line 1: --pipeline-model-parallel-layout: places 31 layers (t); "
            "--num-layers is 32");
  EXPECT_NE(error_text(kModel + "--pipeline-model-parallel-size 2 "
                                "--pipeline-model-parallel-layout \"t*16|Et*16L\"")
                .find("capsim places the embedding (E) on the first stage"),
            std::string::npos);
  // The scenario's own rules still apply, named at the scenario key.
  EXPECT_EQ(error_text(kModel + "--global-batch-size 12"),
            "t.args (as a scenario):/parallelism/global_batch_size: global_batch_size (12) "
            "is not divisible by micro_batch_size (1) x data (8)");
}

TEST(MegatronImportTest, ArgumentListsAreSortedForLookup) {
  EXPECT_NE(ignored_megatron_argument("--accumulate-allreduce-grads-in-fp32"), nullptr);
  EXPECT_NE(ignored_megatron_argument("--weight-decay-incr-style"), nullptr);
  EXPECT_NE(ignored_megatron_argument("--lr"), nullptr);
  EXPECT_EQ(ignored_megatron_argument("--num-layers"), nullptr);
  EXPECT_NE(unmodelled_megatron_argument("--cpu-offloading"), nullptr);
  EXPECT_NE(unmodelled_megatron_argument("--optimizer"), nullptr);
  EXPECT_EQ(unmodelled_megatron_argument("--lr"), nullptr);
}

}  // namespace
}  // namespace capsim::io
