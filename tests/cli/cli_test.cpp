// The command-line contract: help, exit codes (0 ok, 2 bad input), JSON keys scripts rely on.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"
#include <sys/stat.h>
#include <unistd.h>

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using capsim::testing::kTestDataDir;
using testing::run_capsim;

TEST(CliTest, HelpListsCommands) {
  const auto r = run_capsim("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("simulate"), std::string::npos);
  EXPECT_NE(r.out.find("validate"), std::string::npos);
  EXPECT_EQ(run_capsim("simulate --help").exit_code, 0);
  EXPECT_EQ(run_capsim("validate --help").exit_code, 0);
}

TEST(CliTest, UnknownCommandIsBadInput) {
  EXPECT_EQ(run_capsim("frobnicate").exit_code, 2);
}

TEST(CliTest, BadScenarioExitsTwoWithFileAndPointer) {
  const std::string file = kTestDataDir + "/bad/scenario_bandwidth_bare_number.json";
  const auto r = run_capsim("simulate " + file, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(file + ":/cluster/inter_node/nic_bandwidth: expected a bandwidth"),
            std::string::npos)
      << r.out;
}

TEST(CliTest, NvlinkDomainBeyondNvl72ExitsTwoWithFileAndPointer) {
  const std::string file = kTestDataDir + "/bad/scenario_nvlink_domain_above_nvl72.json";
  const auto r = run_capsim("simulate " + file + " --engine analytic", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(file + ":/cluster/nvlink_domain: nvlink_domain (80) exceeds 72"),
            std::string::npos)
      << r.out;
}

// A low-precision recipe the GPU cannot run is bad input that points at the precision.
TEST(CliTest, UnsupportedPrecisionExitsTwoWithPointer) {
  for (const char* name : {"scenario_mxfp8_on_h100", "scenario_nvfp4_on_h100"}) {
    const std::string file = kTestDataDir + "/bad/" + name + ".json";
    for (const char* engine : {"event", "analytic"}) {
      const auto r = run_capsim("simulate " + file + " --engine " + engine, true);
      EXPECT_EQ(r.exit_code, 2) << name;
      EXPECT_NE(r.out.find(file + ":/parallelism/precision: precision \""), std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("hardware block scaling (Blackwell)"), std::string::npos) << r.out;
    }
  }
}

// A training stack changes what the scenario's unsaid stack keys are; an unknown one is bad
// input naming the file, the pointer and the stacks (or versions) capsim knows.
TEST(CliTest, TrainingStackSetsTheStackAndUnknownOnesExitTwo) {
  const std::string file = kTestDataDir + "/scenarios/valid.json";
  const auto plain = run_capsim("simulate " + file + " --engine analytic --json");
  const auto stacked =
      run_capsim("simulate " + file + " --engine analytic --json --set stack=megatron-deepspeed");
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(stacked.exit_code, 0);
  EXPECT_NE(plain.out, stacked.out);  // its gradients reduce after the last backward
  const auto unknown =
      run_capsim("simulate " + file + " --engine analytic --set stack=megatron", true);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find(file + ":/stack: unknown training stack \"megatron\"; expected one "
                                    "of megatron-core, nemo,"),
            std::string::npos)
      << unknown.out;
  const std::string bad = kTestDataDir + "/bad/scenario_stack_unknown_version.json";
  for (const char* engine : {"event", "analytic"}) {
    const auto r = run_capsim("simulate " + bad + " --engine " + engine, true);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.out.find(bad + ":/stack/version: training stack \"deepspeed\" has no version "
                               "\"0.3\"; expected one of 2024, 2021"),
              std::string::npos)
        << r.out;
  }
}

TEST(CliTest, MissingFileExitsTwo) {
  EXPECT_EQ(run_capsim("simulate /nonexistent.json --engine analytic").exit_code, 2);
  EXPECT_EQ(run_capsim("validate /nonexistent.json --engine analytic").exit_code, 2);
}

TEST(CliTest, UnknownOptionExitsTwo) {
  EXPECT_EQ(run_capsim("simulate " + kTestDataDir + "/scenarios/valid.json --frob").exit_code, 2);
}

// An argument a command does not take is an error, not silently ignored; --jobs is bounded
// (more threads than the system can start would abort the planner).
TEST(CliTest, ExtraArgumentsAndHugeJobCountsExitTwo) {
  const std::string scenario = kTestDataDir + "/scenarios/valid.json";
  const auto extra =
      run_capsim("simulate " + scenario + " " + scenario + " --engine analytic", true);
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_NE(extra.out.find("capsim simulate: error: " + scenario + ": unexpected argument\n"),
            std::string::npos)
      << extra.out;
  const auto jobs = run_capsim("plan --engine analytic --jobs 2000000000", true);
  EXPECT_EQ(jobs.exit_code, 2);
  EXPECT_NE(jobs.out.find("capsim plan: error: --jobs: must be between 1 and 1024, got 2000000000"),
            std::string::npos)
      << jobs.out;
  EXPECT_EQ(run_capsim("whatif --jobs 0").exit_code, 2);
}

// A bad command-line value is named by its flag (or the positional argument it stands for),
// as a bad input value is by its file and JSON pointer.
TEST(CliTest, CommandLineErrorsNameTheirFlagOrArgument) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plan --engine magic",
       "capsim plan: error: --engine: must be event or analytic, got \"magic\""},
      {"plan --engine analytic --top -1", "capsim plan: error: --top: must be at least 0, got -1"},
      {"plan --engine analytic --out-scenario ''",
       "capsim plan: error: --out-scenario: an output file name is empty"},
      {"validate --engine analytic", "capsim validate: error: CASES.json: missing argument"},
      {"whatif --seed -1", "capsim whatif: error: --seed: must be >= 0, got -1"},
      {"whatif --seeds 1001", "capsim whatif: error: --seeds: must be in [1, 1000], got 1001"},
      {"whatif --policy nope", "capsim whatif: error: --policy nope: no such policy (policies: "},
      {"whatif --report ''", "capsim whatif: error: --report: an output file name is empty"},
  };
  for (const auto& [arguments, message] : cases) {
    const auto r = run_capsim(arguments, true);
    EXPECT_EQ(r.exit_code, 2) << arguments;
    EXPECT_EQ(r.out.rfind(message, 0), 0U) << arguments << "\n" << r.out;
  }
}

// Where a file is expected, a folder, device or FIFO is refused by name: reading /dev/zero would
// grow to gigabytes until bad_alloc (exit 1), and a FIFO would block forever.
TEST(CliTest, NonRegularInputFilesExitTwo) {
  const auto zero = run_capsim("simulate /dev/zero --engine analytic", true);
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.out.find("capsim simulate: error: /dev/zero: is not a regular file"),
            std::string::npos)
      << zero.out;
  const std::string fifo = ::testing::TempDir() + "capsim_fifo_" + std::to_string(getpid());
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // `timeout` turns a hang into a failure instead of a stuck test.
  const auto fifo_run = testing::run_shell("timeout 60 " + std::string(CAPSIM_BINARY) +
                                           " validate " + fifo + " --engine analytic 2>&1");
  EXPECT_EQ(fifo_run.exit_code, 2) << fifo_run.out;
  EXPECT_NE(fifo_run.out.find(fifo + ": is not a regular file"), std::string::npos) << fifo_run.out;
  std::filesystem::remove(fifo);
  const auto folder = run_capsim("plan " + ::testing::TempDir() + " --engine analytic", true);
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_NE(folder.out.find(": is a folder, not a file"), std::string::npos) << folder.out;
}

// A valid scenario followed by a NUL byte and garbage is refused (a parser that stops at the
// NUL would accept it); invalid UTF-8 in a --set value is bad input, not an internal error when
// the value is echoed.
TEST(CliTest, InputsMustBeUtf8TextWithoutNul) {
  const std::string path =
      ::testing::TempDir() + "capsim_nul_" + std::to_string(getpid()) + ".json";
  std::ifstream valid(kTestDataDir + "/scenarios/valid.json", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(valid)), std::istreambuf_iterator<char>());
  const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  text += std::string("\0 garbage", 9);
  std::ofstream(path, std::ios::binary) << text;
  const auto nul = run_capsim("simulate " + path + " --engine analytic", true);
  EXPECT_EQ(nul.exit_code, 2);
  EXPECT_NE(nul.out.find(path + ": a NUL byte at line " + std::to_string(lines + 1) +
                         ", column 1; inputs are UTF-8 text without NUL bytes"),
            std::string::npos)
      << nul.out;
  std::filesystem::remove(path);
  const auto set = run_capsim("simulate " + kTestDataDir +
                                  "/scenarios/valid.json --engine analytic --set \"name=$(printf "
                                  "'gpt\\377')\"",
                              true);
  EXPECT_EQ(set.exit_code, 2) << set.out;
  EXPECT_NE(set.out.find("invalid UTF-8 (byte 0xFF) at byte 9"), std::string::npos) << set.out;
}

// --set may append one element to an array, no more: index 99999999 would allocate 6 GB and
// abort (exit 134) under a memory limit.
TEST(CliTest, SetIndexBeyondTheArrayExitsTwo) {
  const std::string scenario = kTestDataDir + "/scenarios/valid.json";
  const auto far = run_capsim(
      "simulate " + scenario + " --engine analytic --set parallelism.stage_layers.99999999=1",
      true);
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_NE(far.out.find(scenario +
                         ":/parallelism/stage_layers/99999999: --set index 99999999 is beyond the "
                         "end of the array (0 elements)"),
            std::string::npos)
      << far.out;
  const auto append =
      run_capsim("simulate " + scenario +
                     " --engine analytic --set 'parallelism.stage_layers=[20]' --set "
                     "parallelism.stage_layers.1=20",
                 true);
  EXPECT_EQ(append.exit_code, 0) << append.out;
}

// Every key problem of a file at once, one "capsim <command>: error: file:/pointer: ..." line
// each; a misspelt key is named with the key it most likely means.
TEST(CliTest, EveryKeyProblemIsOneErrorLine) {
  const std::string path =
      ::testing::TempDir() + "capsim_keys_" + std::to_string(getpid()) + ".json";
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(kTestDataDir + "/scenarios/valid.json"));
  doc["model"]["num_atention_heads"] = doc["model"]["num_attention_heads"];
  doc["model"].erase("num_attention_heads");
  doc["model"]["moe"] = {{"num_experts", 8}};
  doc["parallelism"].erase("tensor");
  std::ofstream(path) << doc.dump(2);
  const auto r = run_capsim("simulate " + path + " --engine analytic", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "capsim simulate: error: " + path +
                       ":/model/num_atention_heads: unknown key \"num_atention_heads\"; did you "
                       "mean \"num_attention_heads\"?\n"
                       "capsim simulate: error: " +
                       path +
                       ":/model/moe/top_k: missing required key\n"
                       "capsim simulate: error: " +
                       path +
                       ":/model/moe/ffn_hidden_size: missing required key\n"
                       "capsim simulate: error: " +
                       path + ":/parallelism/tensor: missing required key\n");
  std::filesystem::remove(path);
}

// A mixture-of-experts scenario's bad key or broken layout rule exits 2 naming the file and
// the JSON pointer; the shipped MoE scenarios read.
TEST(CliTest, MixtureOfExpertsInputErrorsExitTwo) {
  const std::string top_k = kTestDataDir + "/bad/scenario_moe_top_k_above_experts.json";
  const auto bad = run_capsim("simulate " + top_k + " --engine analytic", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "capsim simulate: error: " + top_k +
                         ":/model/moe/top_k: top_k (9) exceeds num_experts (8): each token is "
                         "routed to top_k distinct experts\n");
  const std::string split = kTestDataDir + "/bad/scenario_expert_not_dividing_experts.json";
  const auto rule = run_capsim("simulate " + split + " --engine analytic", true);
  EXPECT_EQ(rule.exit_code, 2);
  EXPECT_NE(rule.out.find(split + ":/parallelism/expert: moe.num_experts (8) is not divisible by "
                                  "expert (3)"),
            std::string::npos)
      << rule.out;
  const std::string plan = kTestDataDir + "/bad/plan_search_expert_without_moe.json";
  const auto needs_moe = run_capsim("plan " + plan, true);
  EXPECT_EQ(needs_moe.exit_code, 2);
  EXPECT_NE(needs_moe.out.find(plan + ":/search/expert: \"expert\" lays out mixture-of-experts "
                                      "layers; it needs model.moe"),
            std::string::npos)
      << needs_moe.out;
  const std::string set = run_capsim("simulate " + kTestDataDir +
                                         "/scenarios/valid.json --engine "
                                         "analytic --set parallelism.expert=2",
                                     true)
                              .out;
  EXPECT_NE(set.find(":/parallelism/expert: \"expert\" lays out mixture-of-experts layers; it "
                     "needs model.moe"),
            std::string::npos)
      << set;
}

TEST(CliTest, EventOnlyOptionsNeedTheEventEngine) {
  const std::string scenario = kTestDataDir + "/scenarios/valid.json --engine analytic";
  const auto every = run_capsim("simulate " + scenario + " --every-gpu", true);
  EXPECT_EQ(every.exit_code, 2);
  EXPECT_NE(every.out.find("--every-gpu: needs --engine event"), std::string::npos) << every.out;
  const auto trace = run_capsim("simulate " + scenario + " --trace /tmp/capsim-unused.json", true);
  EXPECT_EQ(trace.exit_code, 2);
  EXPECT_NE(trace.out.find("--trace: needs --engine event"), std::string::npos) << trace.out;
}

// Simulating every one of 65,536 GPUs would take many minutes: a clear error instead.
TEST(CliTest, EveryGpuBeyondThirtyTwoThousandGpusExitsTwo) {
  const auto r =
      run_capsim("simulate " + kTestDataDir + "/scenarios/tiny_65536_gpus.json --every-gpu", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--every-gpu: simulates each of the 65536 GPUs and is limited to 32768"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_capsim("simulate " + kTestDataDir + "/scenarios/tiny_65536_gpus.json").exit_code,
            0);
}

TEST(CliTest, UnwritableTraceExitsTwoAndWritesNothing) {
  const std::string path = "/nonexistent-capsim-dir/trace.json";
  const auto r =
      run_capsim("simulate " + kTestDataDir + "/scenarios/valid.json --trace " + path, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(path + ": cannot write file"), std::string::npos) << r.out;
}

// Commands with two outputs write both or neither: an unwritable report leaves no profile
// (calibrate fit) or timeline (whatif) behind. The paths are checked before the work starts.
TEST(CliTest, AFailedOutputLeavesNoOtherOutputBehind) {
  const std::string dir = ::testing::TempDir() + "capsim_outputs_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string log = kSourceDir + "/data/nccl/a100_oci_1node_allreduce_10G_ocitut.txt";
  const auto fit = run_capsim("calibrate fit " + log + " --gpu A100-SXM4-80GB -o " + dir +
                                  "/p.json --report " + dir + "/none/r.html",
                              true);
  EXPECT_EQ(fit.exit_code, 2);
  EXPECT_NE(fit.out.find(dir + "/none/r.html: cannot write file: no folder"), std::string::npos)
      << fit.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/p.json"));
  const auto whatif =
      run_capsim("whatif --timeline " + dir + "/t.csv --report " + dir + "/none/r.html", true);
  EXPECT_EQ(whatif.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/t.csv"));
  const auto folder =
      run_capsim("simulate " + kTestDataDir + "/scenarios/valid.json --trace " + dir, true);
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_NE(folder.out.find(dir + ": cannot write file: it is a folder"), std::string::npos)
      << folder.out;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            0);
}

// A folder of the test's own under gtest's temp dir, emptied first.
std::string fresh_dir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "capsim_cli_" + name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Devices and pipes are written, not replaced by a file: a full device is an error naming the
// file, a FIFO receives the trace, and /dev/stdout writes to standard output. /dev/full and
// /dev/stdout are reached through links in the test's folder, so that a regression replaces a
// link there rather than a device.
TEST(CliTest, OutputsToDevicesAndPipesAreWrittenDirectly) {
  namespace fs = std::filesystem;
  const std::string dir = fresh_dir("devices");
  const std::string scenario = kTestDataDir + "/scenarios/valid.json";
  if (fs::is_character_file("/dev/full")) {
    fs::create_symlink("/dev/full", dir + "/full");
    const auto full = run_capsim("simulate " + scenario + " --trace " + dir + "/full", true);
    EXPECT_EQ(full.exit_code, 2) << full.out;
    EXPECT_NE(full.out.find(dir + "/full: cannot write file: No space left on device"),
              std::string::npos)
        << full.out;
    EXPECT_TRUE(fs::is_symlink(dir + "/full"));
  }
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto piped = testing::run_shell("timeout 60 cat " + fifo + " > " + dir + "/got.json & " +
                                        std::string(CAPSIM_BINARY) + " simulate " + scenario +
                                        " --trace " + fifo + " > /dev/null; rc=$?; wait; exit $rc");
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_TRUE(fs::is_fifo(fifo));
  const auto trace = nlohmann::json::parse(read_file(dir + "/got.json"), nullptr, false);
  EXPECT_TRUE(trace.is_object() && trace.contains("traceEvents")) << read_file(dir + "/got.json");
  fs::create_symlink("/dev/stdout", dir + "/stdout");
  const auto out =
      run_capsim("calibrate fit " + kSourceDir + "/data/nccl/a100_1node_allreduce_mpi8_thanos.txt" +
                 " --gpu A100-SXM4-80GB -o " + dir + "/stdout");
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_NE(out.out.find("\"schema\": \"capsim.profile/v1\""), std::string::npos) << out.out;
  EXPECT_TRUE(fs::is_symlink(dir + "/stdout"));
  fs::remove_all(dir);
}

// Two outputs naming one file (`x`, `./x`, a link to x) or an output naming an input fail
// before the work, with exit 2, and write nothing.
TEST(CliTest, OutputsMayNotShareAFileOrReplaceAnInput) {
  namespace fs = std::filesystem;
  const std::string dir = fresh_dir("same_file");
  const auto whatif = run_capsim("whatif --timeline " + dir + "/x --report " + dir + "/./x", true);
  EXPECT_EQ(whatif.exit_code, 2);
  EXPECT_NE(whatif.out.find(dir + "/./x: cannot write file: --timeline and --report name the same "
                                  "file"),
            std::string::npos)
      << whatif.out;
  EXPECT_FALSE(fs::exists(dir + "/x"));
  const std::string scenario = dir + "/s.json";
  fs::copy_file(kTestDataDir + "/scenarios/valid.json", scenario);
  fs::create_symlink("s.json", dir + "/link.json");
  for (const std::string& trace : {scenario, dir + "/link.json"}) {
    const auto sim = run_capsim("simulate " + scenario + " --trace " + trace, true);
    EXPECT_EQ(sim.exit_code, 2);
    EXPECT_NE(sim.out.find(trace +
                           ": cannot write file: --trace names an input of the command "
                           "(the scenario " +
                           scenario + ")"),
              std::string::npos)
        << sim.out;
  }
  EXPECT_EQ(read_file(scenario), read_file(kTestDataDir + "/scenarios/valid.json"));
  EXPECT_TRUE(fs::is_symlink(dir + "/link.json"));
  const std::string plan = dir + "/plan.json";
  fs::copy_file(kSourceDir + "/scenarios/plans/default.json", plan);
  const auto planned =
      run_capsim("plan " + plan + " --engine analytic --out-scenario " + plan, true);
  EXPECT_EQ(planned.exit_code, 2);
  EXPECT_NE(planned.out.find("--out-scenario names an input of the command (the plan"),
            std::string::npos)
      << planned.out;
  EXPECT_EQ(read_file(plan), read_file(kSourceDir + "/scenarios/plans/default.json"));
  fs::remove_all(dir);
}

// A name the system cannot take fails the check before the simulation; a long one that it can
// take is written (the temporary's name is cut to fit beside it).
TEST(CliTest, OutputNamesAreCheckedForLengthBeforeTheWork) {
  const std::string dir = fresh_dir("long_names");
  const std::string scenario = kTestDataDir + "/scenarios/valid.json";
  const std::string too_long = dir + "/" + std::string(300, 'n') + ".json";
  const auto refused = run_capsim("simulate " + scenario + " --trace " + too_long, true);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.out.find(too_long + ": cannot write file: its name has 305 bytes, more than "
                                        "the 255 a file name may have there"),
            std::string::npos)
      << refused.out;
  const std::string long_name = dir + "/" + std::string(250, 'n') + ".json";
  const auto written = run_capsim("simulate " + scenario + " --trace " + long_name, true);
  EXPECT_EQ(written.exit_code, 0) << written.out;
  EXPECT_TRUE(std::filesystem::exists(long_name));
  std::filesystem::remove_all(dir);
}

// valid.json: TP4 x PP2 x DP4 on 4 nodes (every GPU = 32 simulated).
TEST(CliTest, EveryGpuSimulatesEveryGpu) {
  const auto r =
      run_capsim("simulate " + kTestDataDir + "/scenarios/valid.json --every-gpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& note : j.at("notes"))
    found =
        found || note.get<std::string>().find("32 simulated GPUs (every GPU)") != std::string::npos;
  EXPECT_TRUE(found) << j.at("notes").dump();
}

TEST(CliTest, SimulateJsonHasContractKeys) {
  const auto r =
      run_capsim("simulate " + kTestDataDir + "/scenarios/valid.json --engine analytic --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu",
                          "model_tflops_per_gpu", "mfu", "hfu", "memory", "breakdown", "engine"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"peak_gib_per_gpu", "capacity_gib", "fits"}) {
    EXPECT_TRUE(j.at("memory").contains(key)) << key;
  }
  for (const char* key : {"compute_s", "tp_comm_exposed_s", "pp_comm_exposed_s",
                          "dp_comm_exposed_s", "bubble_s", "optimizer_s"}) {
    EXPECT_TRUE(j.at("breakdown").contains(key)) << key;
  }
}

// The result says which in-situ factor its kernel times include: the shipped profile's, or 1
// for a profile at benchmark speed (here the test scenario names one with 0.5).
TEST(CliTest, SimulateStatesTheProfilesInSituFactor) {
  const std::string valid = "simulate " + kTestDataDir + "/scenarios/valid.json --engine analytic";
  const auto shipped = nlohmann::json::parse(run_capsim(valid + " --json").out);
  EXPECT_LT(shipped.at("software_efficiency").get<double>(), 1.0);
  const std::string half = kTestDataDir + "/plans/a100-efa-half-speed.json";
  const auto r = run_capsim(valid + " --profile " + half);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("kernels at 0.5 of benchmark speed)"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(run_capsim(valid + " --profile " + half + " --json").out);
  EXPECT_DOUBLE_EQ(j.at("software_efficiency").get<double>(), 0.5);
}

// --kernels adds the kernel table (both engines); without it the output is unchanged.
TEST(CliTest, KernelsListsEveryKernelOnRequest) {
  const std::string base = "simulate " + kTestDataDir + "/scenarios/valid.json --engine analytic";
  const auto plain = nlohmann::json::parse(run_capsim(base + " --json").out);
  EXPECT_FALSE(plain.contains("kernels"));
  const auto r = run_capsim(base + " --json --kernels");
  ASSERT_EQ(r.exit_code, 0);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("kernels"));
  EXPECT_GT(j.at("kernels").at("max_layers_per_stage").get<int>(), 0);
  for (const auto& row : j.at("kernels").at("rows")) {
    for (const char* key : {"part", "name", "pass", "kind", "precision", "time_s"})
      EXPECT_TRUE(row.contains(key)) << key;
  }
  j.erase("kernels");
  EXPECT_EQ(j, plain);
  const auto table = run_capsim(base + " --kernels");
  EXPECT_NE(table.out.find("kernels of one micro-batch on one GPU"), std::string::npos);
}

// With pipeline parallelism simulate suggests a faster split as a ready --set; that --set then
// runs the split (the suggested time) and suggests nothing more.
TEST(CliTest, SimulateSuggestsALayerSplitToSetAsIs) {
  const std::string base =
      "simulate " + kSourceDir + "/scenarios/llama3-70b-p5/scenario.json --engine analytic";
  const auto table = run_capsim(base);
  ASSERT_EQ(table.exit_code, 0) << table.out;
  const std::string setting = "--set 'parallelism.stage_layers=[20,21,20,19]'";
  EXPECT_NE(table.out.find("layers split to even the stages' work would run"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find(setting), std::string::npos) << table.out;
  const auto suggested = nlohmann::json::parse(run_capsim(base + " --json").out);
  ASSERT_TRUE(suggested.contains("stage_balance"));
  const auto applied = run_capsim(base + " --json " + setting);
  ASSERT_EQ(applied.exit_code, 0) << applied.out;
  const auto j = nlohmann::json::parse(applied.out);
  EXPECT_FALSE(j.contains("stage_balance"));
  EXPECT_EQ(j.at("iteration_time_s"), suggested.at("stage_balance").at("iteration_time_s"));
}

// A layout that does not fit gets a split that does, worded as such (it need not be faster),
// with both times from the engine that found it.
TEST(CliTest, SimulateSuggestsASplitThatFitsInMemory) {
  const auto table = run_capsim(
      "simulate " + kSourceDir +
      "/scenarios/llama3-70b-p5/scenario.json --engine analytic --set parallelism.schedule=1f1b "
      "--set parallelism.virtual_pipeline_stages=1 --set parallelism.micro_batch_size=2");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("DOES NOT FIT"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("layers split to fit in memory (peak 79.1 GiB per GPU) would take"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("s as split now): --set 'parallelism.stage_layers=[19,21,21,19]'"),
            std::string::npos)
      << table.out;
}

TEST(CliTest, SameInputGivesByteIdenticalOutput) {
  const std::string args =
      "simulate " + kTestDataDir + "/scenarios/valid.json --engine analytic --json";
  EXPECT_EQ(run_capsim(args).out, run_capsim(args).out);
}

// --set makes a what-if of one scenario: faster NICs change the time, and the output says the
// scenario was changed. A bad --set is exit 2 with a message naming it.
TEST(CliTest, SimulateSetMakesAWhatIf) {
  const std::string base =
      "simulate " + kSourceDir +
      "/scenarios/gpt3-175b-selene-1024/scenario.json --engine analytic --json";
  const auto plain = run_capsim(base);
  const auto faster = run_capsim(base + " --set cluster.inter_node.nic_bandwidth=400Gbps");
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(faster.exit_code, 0) << faster.out;
  const auto a = nlohmann::json::parse(plain.out);
  const auto b = nlohmann::json::parse(faster.out);
  EXPECT_LT(b.at("iteration_time_s").get<double>(), a.at("iteration_time_s").get<double>());
  EXPECT_NE(b.at("notes").dump().find(
                "scenario changed by --set: cluster.inter_node.nic_bandwidth=400Gbps"),
            std::string::npos);
  // A JSON object (commas and all) is one value: here the GPUs described by their figures.
  const auto defined = run_capsim(
      base + " --set 'cluster.gpu={\"name\": \"CliSet-A100\", \"architecture\": \"ampere\", " +
      "\"peak_bf16\": \"312TFLOPS\", \"hbm_capacity\": \"80GiB\", \"hbm_bandwidth\": " +
      "\"2039GBps\", \"sms\": 108, \"nvlink_bandwidth\": \"300GBps\"}'");
  ASSERT_EQ(defined.exit_code, 0) << defined.out;
  const auto defined_json = nlohmann::json::parse(defined.out);
  EXPECT_EQ(defined_json.at("profile"), "datasheet:CliSet-A100+infiniband");
  // The notes say what an unmeasured profile rests on.
  EXPECT_NE(defined_json.at("notes").dump().find(
                "from the GPU's datasheet figures, not fitted to measurements of it"),
            std::string::npos);
  EXPECT_EQ(a.at("notes").dump().find("datasheet"), std::string::npos);
  const auto ethernet = run_capsim(base + " --set cluster.inter_node.fabric=ethernet");
  ASSERT_EQ(ethernet.exit_code, 0) << ethernet.out;
  EXPECT_NE(
      nlohmann::json::parse(ethernet.out)
          .at("notes")
          .dump()
          .find("a100-ib+datasheet-ethernet: inter-node collectives from the datasheet model"),
      std::string::npos)
      << ethernet.out;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {" --set nokey", "--set nokey: no '='"},
      {" --set model.num_layers.x=1", "/model/num_layers/x: --set cannot set this key"},
      {" --set parallelism.data=3", "/parallelism/data: tensor"},
  };
  for (const auto& [arguments, message] : bad) {
    const auto r = run_capsim(base + arguments, true);
    EXPECT_EQ(r.exit_code, 2) << arguments;
    EXPECT_NE(r.out.find(message), std::string::npos) << arguments << "\n" << r.out;
  }
}

// A rack-scale NVLink domain is one node: 72 GB200 (described by their figures) behind one set
// of NVSwitches with a NIC each, eight such racks. Both engines run it and agree.
TEST(CliTest, SeventyTwoGpuNvlinkDomainsSimulate) {
  const std::string base = "simulate " + kTestDataDir + "/scenarios/gb200-nvl72.json --json";
  const auto event = run_capsim(base);
  const auto analytic = run_capsim(base + " --engine analytic");
  ASSERT_EQ(event.exit_code, 0) << event.out;
  ASSERT_EQ(analytic.exit_code, 0) << analytic.out;
  const double e = nlohmann::json::parse(event.out).at("iteration_time_s").get<double>();
  const double a = nlohmann::json::parse(analytic.out).at("iteration_time_s").get<double>();
  EXPECT_NEAR(e, a, 0.01 * a);
  EXPECT_EQ(nlohmann::json::parse(event.out).at("num_gpus"), 576);
}

// The same racks as they are built: 144 trays of 4 GPUs, each with its own NICs, joined by
// nvlink_domain 72. TP 8 and each stage's DP 9 stay inside a rack and the PP hops cross racks at
// one GPU's NIC, as with racks as nodes: both engines agree, and the analytic times match.
TEST(CliTest, NvlinkDomainsOfTraysSimulateOnBothEngines) {
  const std::string base = "simulate " + kTestDataDir + "/scenarios/gb200-nvl72-trays.json --json";
  const auto event = run_capsim(base);
  const auto analytic = run_capsim(base + " --engine analytic");
  const auto racks = run_capsim("simulate " + kTestDataDir +
                                "/scenarios/gb200-nvl72.json --json --engine analytic");
  ASSERT_EQ(event.exit_code, 0) << event.out;
  ASSERT_EQ(analytic.exit_code, 0) << analytic.out;
  ASSERT_EQ(racks.exit_code, 0) << racks.out;
  const double e = nlohmann::json::parse(event.out).at("iteration_time_s").get<double>();
  const double a = nlohmann::json::parse(analytic.out).at("iteration_time_s").get<double>();
  const double r = nlohmann::json::parse(racks.out).at("iteration_time_s").get<double>();
  EXPECT_NEAR(e, a, 0.01 * a);
  EXPECT_NEAR(a, r, 1e-6 * r);
  EXPECT_EQ(nlohmann::json::parse(event.out).at("num_gpus"), 576);
}

// The datasheet check of new hardware (GB200 described inline in every case) runs whole.
TEST(CliTest, NewHardwareCheckRunsEveryCase) {
  const auto r = run_capsim("validate " + kSourceDir +
                            "/scenarios/validation/gb200-datasheet-check.json --engine analytic "
                            "--json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("summary").at("n"), 6);
}

// A bad case (unknown GPU) is reported and left out; the good ones are still predicted, and the
// exit code says the file had bad input.
TEST(CliTest, ValidateReportsABadCaseAndPredictsTheOthers) {
  std::ifstream in(kSourceDir + "/data/validation/dev.json");
  nlohmann::json dev = nlohmann::json::parse(in);
  nlohmann::json small = {{"schema", "capsim.validation/v1"}, {"cases", nlohmann::json::array()}};
  for (int i = 0; i < 3; ++i)
    small["cases"].push_back(dev["cases"][i]);
  small["cases"][1]["scenario"]["cluster"]["gpu"] = "V100";
  const std::string path = ::testing::TempDir() + "capsim_validate_one_bad.json";
  std::ofstream(path) << small.dump(1);
  const auto r = run_capsim("validate " + path + " --engine analytic --json");
  EXPECT_EQ(r.exit_code, 2);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("cases").size(), 2u);
  EXPECT_EQ(j.at("summary").at("n").get<int>(), 2);
  ASSERT_EQ(j.at("not_predicted").size(), 1u);
  const auto& bad = j.at("not_predicted").at(0);
  EXPECT_EQ(bad.at("id"), dev["cases"][1]["id"]);
  EXPECT_EQ(bad.at("pointer"), "/cases/1");
  EXPECT_NE(bad.at("error").get<std::string>().find(path + ":/cases/1/scenario/cluster/gpu: "
                                                           "unknown GPU \"V100\""),
            std::string::npos)
      << bad.dump();
  const auto table = run_capsim("validate " + path + " --engine analytic", true);
  EXPECT_EQ(table.exit_code, 2);
  EXPECT_NE(table.out.find("rejected: " + path + ":/cases/1/scenario/cluster/gpu"),
            std::string::npos)
      << table.out;
}

// --cases keeps the cases whose id starts with a prefix; --set changes every kept scenario first,
// and the report lists the changes.
TEST(CliTest, ValidateCasesAndSetMakeAWhatIf) {
  const std::string base = "validate " + kSourceDir +
                           "/data/validation/dev.json --engine analytic --json --cases "
                           "dgxc2503-Llama3.170B";
  const auto plain = run_capsim(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  const auto p = nlohmann::json::parse(plain.out);
  ASSERT_EQ(p.at("cases").size(), 6u);
  EXPECT_FALSE(p.contains("overrides"));
  const auto overlapped = run_capsim(base + " --set parallelism.tp_comm_overlap=true");
  ASSERT_EQ(overlapped.exit_code, 0) << overlapped.out;
  const auto o = nlohmann::json::parse(overlapped.out);
  ASSERT_EQ(o.at("cases").size(), 6u);
  EXPECT_EQ(o.at("overrides"), nlohmann::json::array({"parallelism.tp_comm_overlap=true"}));
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_LT(o.at("cases")[i].at("predicted_iteration_time_s").get<double>(),
              p.at("cases")[i].at("predicted_iteration_time_s").get<double>());
  }
  // A bare word is a string: the GPU name reaches the scenario's rules.
  const auto renamed = run_capsim(base + " --set cluster.gpu=V100", true);
  EXPECT_EQ(renamed.exit_code, 2);
  EXPECT_NE(renamed.out.find("/cases/113/scenario/cluster/gpu: unknown GPU \"V100\""),
            std::string::npos)
      << renamed.out;
}

// Every bad --set or --cases is exit 2 with a message naming it.
TEST(CliTest, ValidateRejectsBadCasesAndSetArguments) {
  const std::string dev = "validate " + kSourceDir + "/data/validation/dev.json --engine analytic";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {" --set nokey", "--set nokey: no '='"},
      {" --set .tensor=2", "--set .tensor=2: an empty key in the path"},
      {" --set parallelism..tensor=2", "an empty key in the path"},
      {" --cases zzz", "dev.json:/cases: no case id starts with a --cases prefix"},
      {" --cases dgxc2503-Llama3.18B-BF16-8- --set parallelism.nonsense=1",
       "/cases/119/scenario/parallelism/nonsense: unknown key \"nonsense\""},
      {" --cases dgxc2503-Llama3.18B-BF16-8- --set model.num_layers.x=1",
       "/cases/119/scenario/model/num_layers/x: --set cannot set this key"},
  };
  for (const auto& [arguments, message] : bad) {
    const auto r = run_capsim(dev + arguments, true);
    EXPECT_EQ(r.exit_code, 2) << arguments;
    EXPECT_NE(r.out.find(message), std::string::npos) << arguments << "\n" << r.out;
  }
}

// The layout ranking of dev.json: the PTD-P and ZeRO-3 runs of GPT-175B on one cluster each are
// groups of two; its pick is the layout predicted fastest, its cost follows from the measured
// times, and the table prints each group.
TEST(CliTest, ValidateRanksRunsThatDifferOnlyInLayout) {
  const std::string file = kSourceDir + "/data/validation/dev.json";
  const auto r = run_capsim("validate " + file + " --engine analytic --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& c : j.at("cases"))
    by_id[c.at("id").get<std::string>()] = c;
  const auto& ranking = j.at("summary").at("layout_ranking");
  ASSERT_FALSE(ranking.empty());
  bool saw_175b = false;
  for (const auto& g : ranking) {
    EXPECT_GE(g.at("layouts").get<int>(), 2);
    const double rho = g.at("spearman").get<double>();
    EXPECT_TRUE(rho >= -1.0 && rho <= 1.0) << g;
    const auto& pick = by_id.at(g.at("pick").get<std::string>());
    const auto& best = by_id.at(g.at("best").get<std::string>());
    EXPECT_GE(g.at("pick_cost_pct").get<double>(), 0.0);
    if (g.at("pick") == g.at("best")) {
      EXPECT_EQ(g.at("pick_cost_pct").get<double>(), 0.0);
    }
    // One GPU count and, in these groups, one global batch: time per token is iteration time.
    if (g.at("label").get<std::string>() == "GPT-175B on 768 x A100-SXM4-80GB") {
      saw_175b = true;
      EXPECT_NEAR(g.at("pick_cost_pct").get<double>(),
                  100.0 * (pick.at("measured_iteration_time_s").get<double>() /
                               best.at("measured_iteration_time_s").get<double>() -
                           1.0),
                  0.01);
    }
  }
  EXPECT_TRUE(saw_175b);
  const auto table = run_capsim("validate " + file + " --engine analytic");
  EXPECT_NE(table.out.find("layout ranking (runs of one model on one cluster"), std::string::npos);
  EXPECT_NE(table.out.find("GPT-175B on 768 x A100-SXM4-80GB"), std::string::npos);
}

TEST(CliTest, ValidateAnalyticRunsEveryCase) {
  const auto r =
      run_capsim("validate " + kSourceDir + "/data/validation/dev.json --engine analytic --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("cases").size(), 124u);
  EXPECT_EQ(j.at("summary").at("n").get<int>(), 124);
  EXPECT_EQ(j.at("summary").at("by_group").size(), 3u);
  for (const auto& c : j.at("cases")) {
    for (const char* key :
         {"id", "group", "measured_iteration_time_s", "predicted_iteration_time_s", "error_pct",
          "predicted_peak_memory_gib", "fits_in_memory"}) {
      EXPECT_TRUE(c.contains(key)) << key;
    }
  }
  // Measured runs fit by definition: the summary counts the cases the memory model rejects.
  int misses = 0;
  for (const auto& c : j.at("cases")) {
    const bool fits = c.at("fits_in_memory").get<bool>();
    misses += fits ? 0 : 1;
    EXPECT_EQ(fits,
              c.at("predicted_peak_memory_gib").get<double>() <=
                  (c.at("id").get<std::string>().find("40gb") != std::string::npos ? 40.0 : 80.0))
        << c.at("id");
  }
  EXPECT_EQ(j.at("summary").at("predicted_out_of_memory").get<int>(), misses);
  // The summary's bias and hit count follow from the cases, overall and per group.
  std::map<std::string, std::pair<double, int>> by_group;  // signed sum, within 10%
  double signed_sum = 0.0;
  int within = 0;
  for (const auto& c : j.at("cases")) {
    const double e = c.at("error_pct").get<double>();
    signed_sum += e;
    within += std::fabs(e) <= 10.0 ? 1 : 0;
    auto& g = by_group[c.at("group").get<std::string>()];
    g.first += e;
    g.second += std::fabs(e) <= 10.0 ? 1 : 0;
  }
  const auto& s = j.at("summary");
  EXPECT_NEAR(s.at("mean_error_pct").get<double>(), signed_sum / 124.0, 0.01);
  EXPECT_EQ(s.at("within_10_pct").get<int>(), within);
  for (const auto& [name, g] : by_group) {
    const auto& sg = s.at("by_group").at(name);
    EXPECT_NEAR(sg.at("mean_error_pct").get<double>(), g.first / sg.at("n").get<int>(), 0.01);
    EXPECT_EQ(sg.at("within_10_pct").get<int>(), g.second) << name;
  }
}

}  // namespace
}  // namespace capsim

namespace capsim {
namespace {

// `capsim validate FILE --engine analytic --json` of a file under the source tree, parsed;
// null when it does not exit 0.
nlohmann::json validate_analytic(const std::string& file) {
  const auto r = run_capsim("validate " + kSourceDir + "/" + file + " --engine analytic --json");
  EXPECT_EQ(r.exit_code, 0) << file;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// The 52 published runs beyond dev.json (scenarios/validation/published-extra.json) are the
// calibration set: the shipped profiles' in-situ factor (software_efficiency) is fitted to them,
// one per GPU family (scripts/fit-profiles.sh, docs/calibration.md). They stay loadable and
// predicted, and their residual after that one-number fit stays small: 5.1% (analytic; 10.88%
// at benchmark speed). A model change that breaks how one factor explains
// both families' stacks fails here.
TEST(CliTest, CalibrationRunsFitWithOneFactorPerFamily) {
  const auto j = validate_analytic("scenarios/validation/published-extra.json");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j.at("summary").at("n").get<int>(), 52);
  EXPECT_TRUE(j.at("not_predicted").empty());
  EXPECT_LT(j.at("summary").at("mape_pct").get<double>(), 6.0);
  EXPECT_LT(std::fabs(j.at("summary").at("mean_error_pct").get<double>()), 3.0);
}

// Meta's LLaMA 65B rate (380 tokens/s per GPU on 2,048 A100, arXiv 2302.13971 section 2.4)
// at capsim's A100 defaults, with the micro-batch inferred: +12.1% (docs/validation.md, "Time
// to train"). Held within 20% either way, the tolerance of a case whose layout is partly
// inferred: it is the evidence that Meta's 2023 stack ran no slower than capsim's defaults.
TEST(CliTest, LlamaOneRateWithinTwentyPercent) {
  const auto j = validate_analytic("scenarios/validation/llama1-65b.json");
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j.at("cases").size(), 1U);
  EXPECT_LT(std::fabs(j.at("cases").at(0).at("error_pct").get<double>()), 20.0);
  EXPECT_TRUE(j.at("cases").at(0).at("fits_in_memory").get<bool>());
}

// torchtitan's published Llama 3.1 8B runs on 32 and 64 H200 (scenarios/validation/torchtitan.json)
// at the torchtitan stack's defaults: -4.7% and -6.3% (docs/validation.md, "Time to train").
// Held within 10%: the evidence that capsim's torchtitan runs at the speed torchtitan publishes,
// so the Llama 3 totals' gap is not the stack's.
TEST(CliTest, TorchtitanRunsWithinTenPercent) {
  const auto j = validate_analytic("scenarios/validation/torchtitan.json");
  ASSERT_FALSE(j.is_null());
  ASSERT_EQ(j.at("cases").size(), 2U);
  for (const auto& c : j.at("cases"))
    EXPECT_LT(std::fabs(c.at("error_pct").get<double>()), 10.0) << c.at("id");
}

// dev.json judges the model; nothing is fitted to it. The targets are a MAPE of at most 10% over
// all 124 cases and 15% in every group (docs/validation.md). Measured (analytic; the event
// engine agrees within 0.5% per case): all 12.37%, DGXC 7.5%, MPT 10.3%, Megatron SC'21 23.6%.
// The two groups that meet the target are held to it; the overall score and the Megatron
// group, which do not, are held to where they are so a regression fails here.
TEST(CliTest, DevSetScoresHoldTheirMarks) {
  const auto r =
      run_capsim("validate " + kSourceDir + "/data/validation/dev.json --engine analytic --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto s = nlohmann::json::parse(r.out).at("summary");
  EXPECT_LT(s.at("mape_pct").get<double>(), 13.0);
  const auto& groups = s.at("by_group");
  EXPECT_LE(groups.at("DGXC benchmarking").at("mape_pct").get<double>(), 15.0);
  EXPECT_LE(groups.at("MPT llm-foundry").at("mape_pct").get<double>(), 15.0);
  EXPECT_LT(groups.at("Megatron-LM SC'21").at("mape_pct").get<double>(), 25.0);
}

// dev.json with each group's stack named (scenarios/validation/dev-stacks.json,
// scripts/name-dev-stacks.py), nothing fitted to it: 6.0% over the file (target 8%), every group
// within 12% (DGXC 1.5%, MPT 6.4%, SC'21 6.7%) and every group's mean signed error within ±5%
// (+1.5%, -4.6%, -3.4%); in every group of layouts capsim's pick is the measured best (target:
// within 3%), and groups of five or more layouts (none in dev.json) rank at 0.9 or more.
// DeepSpeed's 2021 ZeRO-3, collectives tensor by tensor with a copy per rank at the in-situ
// factor of DeepSpeed's 2021 engine (fitted on MT-NLG), brings its six rows from 56% to 15.5%.
TEST(CliTest, DevSetWithStacksNamedHoldsItsMarks) {
  const auto j = validate_analytic("scenarios/validation/dev-stacks.json");
  ASSERT_FALSE(j.is_null());
  EXPECT_LE(j.at("summary").at("mape_pct").get<double>(), 8.0);
  for (const auto& [group, score] : j.at("summary").at("by_group").items()) {
    EXPECT_LE(score.at("mape_pct").get<double>(), 12.0) << group;
    EXPECT_LE(std::fabs(score.at("mean_error_pct").get<double>()), 5.0) << group;
  }
  const auto& ranking = j.at("summary").at("layout_ranking");
  ASSERT_FALSE(ranking.empty());
  for (const auto& g : ranking) {
    EXPECT_LE(g.at("pick_cost_pct").get<double>(), 3.0) << g.at("label");
    if (g.at("layouts").get<int>() >= 5) {
      EXPECT_GE(g.at("spearman").get<double>(), 0.9) << g.at("label");
    }
  }
  double zero3_abs = 0.0;
  int zero3 = 0;
  for (const auto& c : j.at("cases")) {
    if (c.at("id").get<std::string>().rfind("narayanan21-t2-zero3", 0) != 0)
      continue;
    zero3_abs += std::fabs(c.at("error_pct").get<double>());
    ++zero3;
  }
  ASSERT_EQ(zero3, 6);
  EXPECT_LT(zero3_abs / zero3, 16.0);
}

// dev-stacks.json is dev.json with only each case's training stack added, and the DGX Cloud
// recipes' loss kernel (scripts/name-dev-stacks.py): the same cases in the same order, every
// scenario equal once those are removed, so that it cannot drift from the file it stands for.
TEST(CliTest, DevStacksIsDevJsonWithStacksNamed) {
  std::ifstream dev_in(kSourceDir + "/data/validation/dev.json");
  std::ifstream stacks_in(kSourceDir + "/scenarios/validation/dev-stacks.json");
  const auto dev = nlohmann::json::parse(dev_in).at("cases");
  const auto named = nlohmann::json::parse(stacks_in).at("cases");
  ASSERT_EQ(dev.size(), named.size());
  for (size_t i = 0; i < dev.size(); ++i) {
    auto scenario = named[i].at("scenario");
    ASSERT_TRUE(scenario.contains("stack")) << named[i].at("id");
    scenario.erase("stack");
    // The DGX Cloud recipes' fused loss, which their stack's preset leaves off.
    const bool dgxc = named[i].at("id").get<std::string>().rfind("dgxc", 0) == 0;
    EXPECT_EQ(scenario.at("model").contains("cross_entropy"), dgxc) << named[i].at("id");
    if (dgxc)
      scenario["model"].erase("cross_entropy");
    EXPECT_EQ(scenario, dev[i].at("scenario")) << named[i].at("id");
    EXPECT_EQ(named[i].at("measured"), dev[i].at("measured")) << named[i].at("id");
  }
}

// Every published whole-run total of data/validation/time-to-train.json comes with a plan that
// capsim plans to a winner (scripts/time-to-train.py compares its all-in GPU-hours), whose
// all-in time includes the goodput model's losses.
TEST(CliTest, TimeToTrainPlansEachFindAWinner) {
  std::ifstream in(kSourceDir + "/data/validation/time-to-train.json");
  const auto cases = nlohmann::json::parse(in).at("cases");
  ASSERT_GE(cases.size(), 9U);
  for (const auto& c : cases) {
    const std::string plan = c.at("plan").get<std::string>();
    const auto r = run_capsim("plan " + kSourceDir + "/" + plan + " --engine analytic --json");
    ASSERT_EQ(r.exit_code, 0) << plan;
    const auto best = nlohmann::json::parse(r.out).at("best");
    ASSERT_TRUE(best.is_object()) << plan;
    EXPECT_GT(best.at("gpu_hours").get<double>(), best.at("steady_gpu_hours").get<double>())
        << plan;
    EXPECT_GT(best.at("num_gpus").get<int>(), 0) << plan;
  }
}

// Every event-engine case runs in its own child process; the report must not depend on which
// child finishes first.
TEST(CliTest, ValidateEventIsByteIdenticalAcrossRuns) {
  const std::string args = "validate " + std::string(CAPSIM_SOURCE_DIR) +
                           "/scenarios/validation/megatron-sc21-materialized.json --json";
  const auto first = testing::run_capsim(args);
  ASSERT_EQ(first.exit_code, 0);
  EXPECT_EQ(first.out, testing::run_capsim(args).out);
}

}  // namespace
}  // namespace capsim

namespace capsim {
namespace {

// `capsim simulate --json`'s iteration time of valid.json with `sets` applied, on `engine`.
double iteration_time_s(const std::string& engine, const std::string& sets) {
  const auto r = run_capsim("simulate " + kTestDataDir + "/scenarios/valid.json --engine " +
                            engine + " --json " + sets);
  EXPECT_EQ(r.exit_code, 0) << sets;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  return j.is_object() && j.contains("iteration_time_s") ? j.at("iteration_time_s").get<double>()
                                                         : 0.0;
}

// Omni-Path, Slingshot, TCPX and TCPXO read and simulate on both engines, costed by the
// datasheet network model with their figures (no measured profile ships for them): at the
// same NICs a step on TCPX is slower than on TCPXO, which is slower than on Omni-Path, and
// Slingshot costs as Omni-Path does (both take the RDMA figures).
TEST(CliTest, PublishedFabricsSimulateOnBothEngines) {
  for (const char* engine : {"event", "analytic"}) {
    const auto on = [&](const std::string& fabric) {
      return iteration_time_s(engine, "--set cluster.inter_node.fabric=" + fabric);
    };
    const double omni_path = on("omni-path");
    const double tcpxo = on("tcpxo");
    EXPECT_GT(on("tcpx"), tcpxo) << engine;
    EXPECT_GT(tcpxo, omni_path) << engine;
    EXPECT_GT(omni_path, 0.0) << engine;
    EXPECT_EQ(on("slingshot"), omni_path) << engine;
  }
}

// DeepSpeed's uniform split of valid.json's 40 layers on 2 stages (45 layer specs: 23 and 22)
// is 21 and 19 layers: the same run as stage_layers [21, 19], on both engines.
TEST(CliTest, PartitionMethodSplitsTheStagesAsDeepSpeed) {
  for (const char* engine : {"event", "analytic"}) {
    const double uniform = iteration_time_s(engine, "--set parallelism.partition_method=uniform");
    const double given = iteration_time_s(engine, "--set 'parallelism.stage_layers=[21,19]'");
    EXPECT_GT(uniform, 0.0) << engine;
    EXPECT_EQ(uniform, given) << engine;
    EXPECT_GT(iteration_time_s(engine, "--set parallelism.partition_method=parameters"), 0.0)
        << engine;
  }
  const auto both = run_capsim("simulate " + kTestDataDir +
                                   "/scenarios/valid.json --engine analytic --set "
                                   "parallelism.partition_method=uniform --set "
                                   "'parallelism.stage_layers=[21,19]'",
                               true);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.out.find(":/parallelism/partition_method: partition_method and stage_layers "
                          "both set"),
            std::string::npos)
      << both.out;
  // The stage-balance suggestion for a DeepSpeed split also drops the method, so it applies.
  const std::string uniform = "simulate " + kTestDataDir +
                              "/scenarios/valid.json --engine analytic --set "
                              "parallelism.partition_method=uniform";
  const auto suggested = run_capsim(uniform);
  const size_t at = suggested.out.find(": --set 'parallelism.stage_layers=");
  ASSERT_NE(at, std::string::npos) << suggested.out;
  const std::string sets = suggested.out.substr(at + 2, suggested.out.find('\n', at) - at - 2);
  EXPECT_NE(sets.find("--set parallelism.partition_method=null"), std::string::npos) << sets;
  EXPECT_EQ(run_capsim(uniform + " " + sets).exit_code, 0) << sets;
}

}  // namespace
}  // namespace capsim
