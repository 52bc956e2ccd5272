// `capsim plan` end to end through the binary: exit codes, JSON on stdout, the winner written as
// a scenario that `capsim simulate` accepts.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/cli/run_capsim.hpp"
#include <unistd.h>

namespace capsim {
namespace {

const std::string kBinary = CAPSIM_BINARY;
const std::string kDataDir = CAPSIM_TEST_DATA_DIR;

using CliRun = testing::CommandResult;

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
      run("plan --list-instances " + kDataDir + "/plans/small-defined-instance.json").exit_code, 2);
}

TEST(PlanCliTest, JsonAndWinningScenario) {
  const std::string out = ::testing::TempDir() + "capsim_plan_best.json";
  std::filesystem::remove(out);
  const CliRun r = run("plan " + kDataDir + "/plans/small.json --engine analytic --json --top 3 " +
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
  const CliRun r = run("plan " + kDataDir + "/plans/small.json --json --out-scenario " + out);
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
  const CliRun shipped = run("plan " + kDataDir + "/plans/small.json --json");
  const CliRun slow = run("plan " + kDataDir + "/plans/small-calibrated.json --json");
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
  const std::string plan = "cd " + kDataDir + " && " + kBinary +
                           " plan plans/small-calibrated.json --engine analytic --out-scenario " +
                           out + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(plan.c_str()), 0);
  const std::string simulate =
      "cd / && " + kBinary + " simulate " + out + " --engine analytic >/dev/null 2>&1";
  EXPECT_EQ(std::system(simulate.c_str()), 0);
  const Scenario best = io::load_scenario(out);
  EXPECT_EQ(std::filesystem::canonical(best.profile_path),
            std::filesystem::canonical(kDataDir + "/plans/a100-efa-half-speed.json"));
}

TEST(PlanCliTest, SameInputSameBytes) {
  const std::string args = "plan " + kDataDir + "/plans/small.json --engine analytic --json";
  const CliRun a = run(args + " --jobs 1");
  const CliRun b = run(args + " --jobs 2");
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(PlanCliTest, BadInputExitsTwo) {
  EXPECT_EQ(run("plan " + kDataDir + "/bad/plan_instance_unknown.json").exit_code, 2);
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
  const CliRun r = run("plan " + kDataDir + "/plans/small-defined-instance.json --json " +
                       "--out-scenario " + out);
  ASSERT_EQ(r.exit_code, 0);
  const auto j = io::JsonReader::parse_text(r.out, "stdout");
  EXPECT_EQ(j.at("best").at("instance"), "b200-node");
  EXPECT_EQ(j.at("best").at("engine"), "event");
  const std::string notes = j.at("notes").dump();
  EXPECT_NE(notes.find("instance b200-node: its GPU is defined in the plan"), std::string::npos);
  EXPECT_NE(notes.find("in-situ factor borrowed from the shipped profiles, 0.891"),
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
  const CliRun r = run("plan " + kDataDir + "/plans/small-roce-instance.json --json --top 40");
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

}  // namespace
}  // namespace capsim
