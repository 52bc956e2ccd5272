// `capsim plan` end to end through the binary: exit codes, JSON on stdout, the winner written as
// a scenario that `capsim simulate` accepts.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"
#include <unistd.h>

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using capsim::testing::kTestDataDir;

const std::string kBinary = CAPSIM_BINARY;

using CliRun = testing::CommandResult;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `capsim ARGS` with stderr discarded and returns its exit code and stdout.
CliRun run(const std::string& args) {
  return testing::run_capsim(args);
}

// --list-instances prints the catalog's instances with their prices and sources, and exits.
TEST(PlanCliTest, ListInstances) {
  const CliRun table = run("plan --list-instances");
  ASSERT_EQ(table.exit_code, 0) << table.out;
  for (const char* name : {"p5.48xlarge", "p6-b200.48xlarge", "gb200-nvl72", "coreweave-b200"})
    EXPECT_NE(table.out.find(name), std::string::npos) << name;
  EXPECT_NE(table.out.find("$113.93"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("AWS us-east-1 on-demand after 2025-06 cut"), std::string::npos)
      << table.out;
  const CliRun json = run("plan --list-instances --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& list = j.at("instances");
  ASSERT_EQ(list.size(), builtin_catalog().instance_names().size());
  for (const nlohmann::json& i : list) {
    if (i.at("name") == "gb300-nvl72") {
      EXPECT_EQ(i.at("gpu"), "GB300-NVL-288GB");
      EXPECT_EQ(i.at("gpus_per_node"), 4);
      EXPECT_EQ(i.at("nvlink_domain"), 72);
      EXPECT_EQ(i.at("nic_bandwidth"), "800Gbps");
    }
    if (i.at("name") == "p5.48xlarge") {
      EXPECT_EQ(i.at("nvlink_domain"), 8);
    }
  }
  EXPECT_EQ(
      run("plan --list-instances " + kTestDataDir + "/plans/small-defined-instance.json").exit_code,
      2);
}

TEST(PlanCliTest, JsonAndWinningScenario) {
  const std::string out = ::testing::TempDir() + "capsim_plan_best.json";
  std::filesystem::remove(out);
  const CliRun r =
      run("plan " + kTestDataDir + "/plans/small.json --engine analytic --json --top 3 " +
          "--out-scenario " + out);
  ASSERT_EQ(r.exit_code, 0);
  const auto j = io::JsonReader::parse_text(r.out, "stdout");
  EXPECT_LE(j.at("ranked").size(), 3u);
  EXPECT_EQ(j.at("best").at("engine"), "analytic");
  const Scenario best = io::load_scenario(out);
  EXPECT_EQ(best.cluster.num_nodes, j.at("best").at("num_nodes").get<int>());
  EXPECT_EQ(best.cluster.instance, j.at("best").at("instance").get<std::string>());
  // The written scenario replays to the plan's numbers (both JSON outputs round alike).
  const CliRun sim = run("simulate " + out + " --engine analytic --json");
  ASSERT_EQ(sim.exit_code, 0);
  const auto simulated = io::JsonReader::parse_text(sim.out, "simulate");
  EXPECT_EQ(simulated.at("iteration_time_s"), j.at("best").at("iteration_time_s"));
  EXPECT_EQ(simulated.at("memory").at("peak_gib_per_gpu"), j.at("best").at("peak_memory_gib"));
}

// The same with the event engine: the plan's confirmation of the winner is a `capsim simulate`
// of the scenario it writes, so simulating that file gives the plan's numbers.
TEST(PlanCliTest, WinningScenarioReplaysToThePlansEventNumbers) {
  const std::string out = ::testing::TempDir() + "capsim_plan_best_event.json";
  std::filesystem::remove(out);
  const CliRun r = run("plan " + kTestDataDir + "/plans/small.json --json --out-scenario " + out);
  ASSERT_EQ(r.exit_code, 0);
  const auto best = io::JsonReader::parse_text(r.out, "stdout").at("best");
  ASSERT_EQ(best.at("engine"), "event");
  const CliRun sim = run("simulate " + out + " --json");
  ASSERT_EQ(sim.exit_code, 0);
  const auto simulated = io::JsonReader::parse_text(sim.out, "simulate");
  EXPECT_EQ(simulated.at("iteration_time_s"), best.at("iteration_time_s"));
  EXPECT_EQ(simulated.at("mfu"), best.at("mfu"));
}

// An instance may carry a calibrated profile (e.g. from `capsim calibrate step`): here the
// shipped a100-efa profile with software_efficiency 0.5, well below the shipped in-situ factor.
// The plan is costed with it, screen and event confirmation alike, and the winning scenario
// names it.
TEST(PlanCliTest, InstanceProfileIsUsed) {
  const CliRun shipped = run("plan " + kTestDataDir + "/plans/small.json --json");
  const CliRun slow = run("plan " + kTestDataDir + "/plans/small-calibrated.json --json");
  ASSERT_EQ(shipped.exit_code, 0);
  ASSERT_EQ(slow.exit_code, 0);
  const auto a = io::JsonReader::parse_text(shipped.out, "shipped").at("best");
  const auto b = io::JsonReader::parse_text(slow.out, "slow").at("best");
  EXPECT_EQ(b.at("engine"), "event");
  // Kernels slower by shipped/0.5: compute-bound layouts take about that much longer.
  const double slowdown = io::embedded_profile("a100-efa.json").software_efficiency / 0.5;
  EXPECT_GT(b.at("iteration_time_s").get<double>(),
            0.9 * slowdown * a.at("iteration_time_s").get<double>());
  EXPECT_NE(b.at("scenario").at("profile").get<std::string>().find("a100-efa-half-speed.json"),
            std::string::npos);
  EXPECT_FALSE(a.at("scenario").contains("profile"));
}

// The winning scenario names the instance's profile relative to itself, so that it loads from
// any folder, also when the plan was given by a path relative to the working folder.
TEST(PlanCliTest, WinnerFindsTheInstanceProfileFromAnyFolder) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("capsim_plan_profile_out_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "best.json").string();
  const std::string plan = "cd " + kTestDataDir + " && " + kBinary +
                           " plan plans/small-calibrated.json --engine analytic --out-scenario " +
                           out + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(plan.c_str()), 0);
  const std::string simulate =
      "cd / && " + kBinary + " simulate " + out + " --engine analytic >/dev/null 2>&1";
  EXPECT_EQ(std::system(simulate.c_str()), 0);
  const Scenario best = io::load_scenario(out);
  EXPECT_EQ(std::filesystem::canonical(best.profile_path),
            std::filesystem::canonical(kTestDataDir + "/plans/a100-efa-half-speed.json"));
}

TEST(PlanCliTest, SameInputSameBytes) {
  const std::string args = "plan " + kTestDataDir + "/plans/small.json --engine analytic --json";
  const CliRun a = run(args + " --jobs 1");
  const CliRun b = run(args + " --jobs 2");
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(PlanCliTest, BadInputExitsTwo) {
  EXPECT_EQ(run("plan " + kTestDataDir + "/bad/plan_instance_unknown.json").exit_code, 2);
  EXPECT_EQ(run("plan /nonexistent/plan.json").exit_code, 2);
  EXPECT_EQ(run("plan --top -1").exit_code, 2);
  EXPECT_EQ(run("plan --engine magic").exit_code, 2);
  EXPECT_EQ(run("plan --help").exit_code, 0);
}

// A plan may define an instance the catalog lacks, GPU included (new hardware): it is screened
// and confirmed like the others, the closing notes say it is costed from its datasheet (with the
// shipped profiles' in-situ factor, so that it is compared at their stack speed), and the
// winning scenario carries the hardware in full, so a fresh process simulates it alone.
TEST(PlanCliTest, DefinedInstanceWinsAsAStandaloneScenario) {
  const std::string out = ::testing::TempDir() + "capsim_plan_defined.json";
  std::filesystem::remove(out);
  const CliRun r = run("plan " + kTestDataDir + "/plans/small-defined-instance.json --json " +
                       "--out-scenario " + out);
  ASSERT_EQ(r.exit_code, 0);
  const auto j = io::JsonReader::parse_text(r.out, "stdout");
  EXPECT_EQ(j.at("best").at("instance"), "b200-node");
  EXPECT_EQ(j.at("best").at("engine"), "event");
  const std::string notes = j.at("notes").dump();
  EXPECT_NE(notes.find("instance b200-node: its GPU is defined in the plan"), std::string::npos);
  EXPECT_NE(notes.find("software_efficiency 0.658636: the blackwell family's, fitted to published "
                       "runs on it"),
            std::string::npos)
      << notes;
  const auto written = io::JsonReader::parse_file(out);
  EXPECT_FALSE(written.at("cluster").contains("instance"));
  EXPECT_EQ(written.at("cluster").at("gpu").at("name"), "PlanTest-B200");
  EXPECT_EQ(written.at("cluster").at("gpu").at("hbm_capacity"), "180GB");
  const CliRun alone = run("simulate " + out + " --json");
  ASSERT_EQ(alone.exit_code, 0);
  EXPECT_DOUBLE_EQ(
      io::JsonReader::parse_text(alone.out, "simulate").at("iteration_time_s").get<double>(),
      j.at("best").at("iteration_time_s").get<double>());
}

// A plan's own instance with a catalog GPU on a network no shipped profile measured (H100 on
// RoCE): its kernels are the family's shipped ones, so on one node it is costed exactly as a
// catalog H100 node with the same NVLink; only its inter-node collectives come from the
// datasheet model, and the notes say so.
TEST(PlanCliTest, ACatalogGpuOnAnUnmeasuredNetworkKeepsItsFamilysKernels) {
  const CliRun r = run("plan " + kTestDataDir + "/plans/small-roce-instance.json --json --top 40");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = io::JsonReader::parse_text(r.out, "stdout");
  EXPECT_NE(j.at("notes").dump().find("instance roce-h100-node: no roce measurement of its GPU "
                                      "family ships with capsim"),
            std::string::npos);
  std::map<std::string, double> one_node;  // the fastest one-node candidate of each instance
  for (const auto& c : j.at("ranked")) {
    if (c.at("num_nodes").get<int>() != 1)
      continue;
    const auto instance = c.at("instance").get<std::string>();
    const double t = c.at("iteration_time_s").get<double>();
    one_node[instance] = one_node.count(instance) > 0 ? std::min(one_node[instance], t) : t;
  }
  ASSERT_EQ(one_node.size(), 2U);
  EXPECT_EQ(one_node.at("roce-h100-node"), one_node.at("dgx-h100"));
}

// A GB300 tray's candidates run at GB300's fitted tensor speed and the notes say so; a GB200
// tray's, whose GPU has none, do not. On the same layout the GB300 candidate is the faster.
TEST(PlanCliTest, Gb300CandidatesRunAtItsTensorSpeed) {
  const CliRun r = run("plan " + kTestDataDir + "/plans/small-gb300.json --engine analytic --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = io::JsonReader::parse_text(r.out, "stdout");
  const std::string notes = j.at("notes").dump();
  EXPECT_NE(notes.find("instance gb300-nvl72: tensor_speed 1.34324: GB300-NVL-288GB's tensor "
                       "cores over its datasheet peaks"),
            std::string::npos)
      << notes;
  EXPECT_EQ(notes.find("instance gb200-nvl72"), std::string::npos) << notes;
  std::map<std::string, double> fastest;
  for (const auto& c : j.at("ranked")) {
    const auto instance = c.at("instance").get<std::string>();
    const double t = c.at("iteration_time_s").get<double>();
    fastest[instance] = fastest.count(instance) > 0 ? std::min(fastest[instance], t) : t;
  }
  ASSERT_EQ(fastest.size(), 2U);
  EXPECT_LT(fastest.at("gb300-nvl72"), fastest.at("gb200-nvl72"));
}

// Every key of `before` is in `after` with the same bytes; `after` may add keys of its own.
void expect_contains(const nlohmann::json& before, const nlohmann::json& after,
                     const std::string& where) {
  if (before.is_object() && after.is_object()) {
    for (const auto& [key, value] : before.items()) {
      ASSERT_TRUE(after.contains(key)) << where << "/" << key;
      expect_contains(value, after.at(key), where + "/" + key);
    }
  } else if (before.is_array() && after.is_array()) {
    ASSERT_EQ(before.size(), after.size()) << where;
    for (size_t i = 0; i < before.size(); ++i)
      expect_contains(before[i], after[i], where + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(before.dump(), after.dump()) << where;
  }
}

// "failure_model": "none" gives the steady-state plan: every key and number of the steady-state
// JSON recorded in tests/data/plans/expected/small-steady-state.json is there byte for byte
// (the goodput model only adds keys).
TEST(PlanCliTest, FailureModelNoneGivesTheSteadyStateNumbers) {
  const CliRun r = run("plan " + kTestDataDir + "/plans/small-no-goodput.json --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto now = io::JsonReader::parse_text(r.out, "stdout");
  const auto before =
      io::JsonReader::parse_file(kTestDataDir + "/plans/expected/small-steady-state.json");
  expect_contains(before, now, "");
  EXPECT_FALSE(now.at("best").contains("goodput"));
  EXPECT_EQ(now.at("best").at("time_to_train_days"), now.at("best").at("failure_free_days"));
}

// By default the plan is all-in: its days, cost and GPU-hours include the goodput model's
// losses, which the JSON breaks down and the table lists for the winner.
TEST(PlanCliTest, DefaultPlanIsAllIn) {
  const CliRun r = run("plan " + kTestDataDir + "/plans/small.json --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto best = io::JsonReader::parse_text(r.out, "stdout").at("best");
  const double steady = best.at("steady_days").get<double>();
  const double all_in = best.at("all_in_days").get<double>();
  EXPECT_GT(all_in, steady);
  EXPECT_EQ(best.at("time_to_train_days"), best.at("all_in_days"));
  EXPECT_GT(best.at("cost_usd").get<double>(), best.at("steady_cost_usd").get<double>());
  EXPECT_GT(best.at("gpu_hours").get<double>(), best.at("steady_gpu_hours").get<double>());
  const auto& g = best.at("goodput");
  double parts = 0.0;
  for (const char* key : {"steady_h", "stragglers_h", "batch_ramp_h", "startup_h", "evaluation_h",
                          "checkpoint_writes_h", "lost_work_h", "restarts_h"})
    parts += g.at(key).get<double>();
  EXPECT_NEAR(parts, g.at("all_in_h").get<double>(), 1e-4 * parts);
  EXPECT_NEAR(g.at("all_in_h").get<double>() / 24.0, all_in, 1e-4 * all_in);
  const CliRun table = run("plan " + kTestDataDir + "/plans/small.json");
  EXPECT_NE(table.out.find("goodput of the best: "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("all-in (steady state: "), std::string::npos) << table.out;
}

// Every (instance, pricing) pair the plan asked for and could not price is listed with why.
TEST(PlanCliTest, SkippedPricingPairsSayWhy) {
  const CliRun r = run("plan " + kSourceDir +
                       "/scenarios/plans/llama70b-pareto.json --engine "
                       "analytic --json --top 1");
  ASSERT_EQ(r.exit_code, 0);
  const auto skipped = io::JsonReader::parse_text(r.out, "stdout").at("skipped_prices");
  ASSERT_FALSE(skipped.empty());
  bool p5_reserved = false;
  for (const auto& k : skipped) {
    if (k.at("instance") == "p5.48xlarge" && k.at("pricing") == "reserved") {
      p5_reserved = true;
      EXPECT_NE(k.at("reason").get<std::string>().find("no reserved price in the catalog (AWS"),
                std::string::npos);
    }
  }
  EXPECT_TRUE(p5_reserved) << skipped.dump();
  const CliRun table = run("plan " + kSourceDir +
                           "/scenarios/plans/llama70b-pareto.json "
                           "--engine analytic --top 1");
  EXPECT_NE(table.out.find("pricing options skipped:\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\n  p4de.24xlarge capacity-block: no capacity-block price in the "
                           "catalog"),
            std::string::npos)
      << table.out;
}

// A winner with less free HBM than memory_warning_headroom gets a warning; one with more none.
TEST(PlanCliTest, WarnsWhenTheWinnerLeavesLittleMemoryFree) {
  std::string plan = read_file(kTestDataDir + "/plans/small.json");
  const std::string path = ::testing::TempDir() + "small-warn.json";
  std::ofstream(path) << plan.insert(plan.rfind('}'), R"(, "memory_warning_headroom": "79GiB")");
  const CliRun r = run("plan " + path + " --engine analytic --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto warnings = io::JsonReader::parse_text(r.out, "stdout").at("warnings");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].get<std::string>().find("less than the 79 GiB memory_warning_headroom"),
            std::string::npos);
  EXPECT_NE(run("plan " + path + " --engine analytic").out.find("warning: the winner leaves"),
            std::string::npos);
  // The default (4 GiB): the small plan's winner leaves far more free.
  const CliRun fine = run("plan " + kTestDataDir + "/plans/small.json --engine analytic --json");
  EXPECT_TRUE(io::JsonReader::parse_text(fine.out, "stdout").at("warnings").empty());
}

// The small plan on exactly 4 nodes, with a shared fabric of 2-node leaves, 8:1 oversubscribed.
std::string shared_fabric_plan(const std::string& fabric) {
  std::string plan = read_file(kTestDataDir + "/plans/small.json");
  plan.replace(plan.find("\"min\": 1"), 8, "\"min\": 4");
  // Named after the test: ctest runs the tests that write such a plan at once.
  const std::string path = ::testing::TempDir() + "small-shared-fabric-" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                           ".json";
  std::ofstream(path) << plan.insert(plan.rfind('}'), ", \"shared_fabric\": " + fabric);
  return path;
}

// The winner's 4 nodes packed two per leaf, or fragmented one per leaf: its DP flows between
// leaves get 2, respectively 1, nodes' share of uplinks 8 times thinner than its NICs, so the
// fragmented placement is slower and costs more than the packed one, which is slower than on a
// non-blocking fabric. The table and the HTML report say it in one line.
TEST(PlanCliTest, SharedFabricStatesWhatItDoesToTheWinner) {
  const std::string path = shared_fabric_plan(R"({"nodes_per_leaf": 2, "oversubscription": 8})");
  const CliRun r = run("plan " + path + " --engine analytic --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = io::JsonReader::parse_text(r.out, "stdout");
  ASSERT_EQ(j.at("best").at("num_nodes").get<int>(), 4);
  const nlohmann::json& f = j.at("shared_fabric");
  EXPECT_EQ(f.at("nodes_per_leaf"), 2);
  const nlohmann::json& packed = f.at("packed");
  const nlohmann::json& fragmented = f.at("fragmented");
  EXPECT_EQ(packed.at("nodes_per_leaf"), 2);
  EXPECT_EQ(fragmented.at("nodes_per_leaf"), 1);
  EXPECT_GT(packed.at("slowdown").get<double>(), 1.0);
  EXPECT_GT(fragmented.at("slowdown").get<double>(), packed.at("slowdown").get<double>() * 1.01);
  EXPECT_GT(fragmented.at("cost_usd").get<double>(), packed.at("cost_usd").get<double>());
  EXPECT_GT(packed.at("cost_usd").get<double>(), j.at("best").at("cost_usd").get<double>());
  const CliRun table = run("plan " + path + " --engine analytic");
  EXPECT_NE(table.out.find("shared fabric (leaves of 2 nodes, 8:1 oversubscribed): the winner "
                           "packed (2 node(s) per leaf)"),
            std::string::npos)
      << table.out;
  const std::string html = ::testing::TempDir() + "small-shared-fabric.html";
  ASSERT_EQ(run("plan " + path + " --engine analytic --report " + html).exit_code, 0);
  EXPECT_NE(read_file(html).find("id=\"shared-fabric\""), std::string::npos);
  // Without the key there is no such line.
  EXPECT_FALSE(
      io::JsonReader::parse_text(
          run("plan " + kTestDataDir + "/plans/small.json --engine analytic --json").out, "stdout")
          .contains("shared_fabric"));
}

TEST(PlanCliTest, BadSharedFabricExitsTwoWithItsPointer) {
  const CliRun missing =
      testing::run_capsim("plan " + shared_fabric_plan(R"({"nodes_per_leaf": 2})"), true);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find(".json:/shared_fabric/oversubscription: "), std::string::npos)
      << missing.out;
  const CliRun zero = testing::run_capsim(
      "plan " + shared_fabric_plan(R"({"nodes_per_leaf": 0, "oversubscription": 2})"), true);
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.out.find("/shared_fabric/nodes_per_leaf: "), std::string::npos) << zero.out;
}

// The winner's Megatron-LM arguments are in the JSON and the table.
TEST(PlanCliTest, WinnerHasMegatronArguments) {
  const CliRun r = run("plan " + kTestDataDir + "/plans/small.json --engine analytic --json");
  const auto best = io::JsonReader::parse_text(r.out, "stdout").at("best");
  const std::string args = best.at("megatron_arguments").get<std::string>();
  EXPECT_NE(args.find("--tensor-model-parallel-size " +
                      std::to_string(best.at("layout").at("tensor").get<int>())),
            std::string::npos)
      << args;
  EXPECT_NE(run("plan " + kTestDataDir + "/plans/small.json --engine analytic")
                .out.find("run it with Megatron-LM: --num-layers 24"),
            std::string::npos);
}

// --emit writes the winner's launch files; each reads back as the winning scenario, a rerun
// leaves identical files, and a folder with other files or other content is refused.
TEST(PlanCliTest, EmitWritesLaunchFilesThatReadBackAsTheWinner) {
  namespace fs = std::filesystem;
  const std::string dir = ::testing::TempDir() + "capsim_plan_emit_" + std::to_string(getpid());
  const std::string best = dir + ".json";
  fs::remove_all(dir);
  const std::string plan = "plan " + kTestDataDir + "/plans/small.json --engine analytic ";
  const CliRun r = run(plan + "--out-scenario " + best +
                       " --emit megatron,bridge --emit sbatch --emit-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Scenario winner = io::load_scenario(best);
  ASSERT_FALSE(winner.cluster.instance.empty());
  const std::string on_cluster = "--instance " + winner.cluster.instance + " --nodes " +
                                 std::to_string(winner.cluster.num_nodes) + " --name " +
                                 winner.name;
  for (const auto& [format, file] :
       std::vector<std::pair<std::string, std::string>>{{"megatron", "megatron.args"},
                                                        {"bridge", "bridge.yaml"},
                                                        {"megatron", "train.sbatch"}}) {
    SCOPED_TRACE(file);
    const CliRun back = run("import " + format + " " + dir + "/" + file + " " + on_cluster);
    ASSERT_EQ(back.exit_code, 0);
    nlohmann::json a = nlohmann::json::parse(back.out);
    nlohmann::json b = io::scenario_to_json(winner);
    for (nlohmann::json* s : {&a, &b}) {
      s->erase("profile");
      s->at("model").erase("name");
    }
    EXPECT_EQ(a.dump(1), b.dump(1));
  }
  const std::string before = read_file(dir + "/bridge.yaml");
  EXPECT_EQ(run(plan + "--emit bridge,megatron,sbatch --emit-dir " + dir).exit_code, 0);
  EXPECT_EQ(read_file(dir + "/bridge.yaml"), before);
  std::ofstream(dir + "/bridge.yaml", std::ios::app) << "# edited\n";
  EXPECT_EQ(run(plan + "--emit bridge,megatron,sbatch --emit-dir " + dir).exit_code, 2);
  EXPECT_NE(read_file(dir + "/bridge.yaml").find("# edited"), std::string::npos);
  // A file the command does not write is refused before the search.
  const CliRun other = testing::run_capsim(plan + "--emit bridge --emit-dir " + dir, true);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.out.find(", which this command does not write; give an empty or new folder"),
            std::string::npos)
      << other.out;
  EXPECT_EQ(run(plan + "--emit slurm --emit-dir " + dir + "-new").exit_code, 2);
  EXPECT_EQ(run(plan + "--emit bridge").exit_code, 2);
  EXPECT_FALSE(fs::exists(dir + "-new"));
  fs::remove_all(dir);
  fs::remove(best);
}

}  // namespace
}  // namespace capsim
