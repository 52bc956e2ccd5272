// A scenario and its profile read together, as `capsim simulate` reads them: the profile the
// scenario gets or the one a command line names, a GPU that profile defines, and the order of
// the errors.
#include "io/simulation_input.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/io/error_of.hpp"
#include "tests/test_paths.hpp"

namespace capsim::simulation_input_test {
namespace {

using capsim::testing::kTestDataDir;

namespace fs = std::filesystem;

const std::string kProfiles = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/";

fs::path folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("capsim_simulation_input_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string write(const fs::path& path, const nlohmann::json& doc) {
  std::ofstream(path) << doc.dump(2);
  return path.string();
}

// valid.json on `gpu`, on one node of 8 GPUs.
nlohmann::json one_node_scenario(const std::string& gpu) {
  nlohmann::json s = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  s["cluster"] = {{"gpu", gpu}, {"gpus_per_node", 8}, {"num_nodes", 1}};
  s["parallelism"]["data"] = 1;
  s.erase("profile");
  return s;
}

using testing::error_of;

TEST(SimulationInputTest, TheScenarioAndTheProfileItGets) {
  const std::string path = kTestDataDir + "/scenarios/valid.json";
  const io::SimulationInput input = io::load_simulation_input(path, {}, std::nullopt);
  const Scenario scenario = io::load_scenario(path);
  EXPECT_EQ(io::scenario_to_json(input.scenario), io::scenario_to_json(scenario));
  EXPECT_EQ(io::profile_to_json(input.profile), io::profile_to_json(io::resolve_profile(scenario)));
}

TEST(SimulationInputTest, AProfileFileReplacesTheScenarios) {
  const std::string path = kTestDataDir + "/scenarios/valid.json";
  const std::string efa = kProfiles + "a100-efa.json";
  const io::SimulationInput input = io::load_simulation_input(path, {}, efa);
  EXPECT_EQ(input.scenario.profile_path, efa);
  EXPECT_EQ(input.profile.name, "a100-efa");
  // An empty one leaves the choice to the scenario's hardware.
  const io::SimulationInput chosen = io::load_simulation_input(path, {}, std::string());
  EXPECT_EQ(chosen.scenario.profile_path, "");
  EXPECT_EQ(chosen.profile.name, io::resolve_profile(io::load_scenario(path)).name);
}

// A profile fitted on new hardware defines its GPU before the scenario naming it is read.
TEST(SimulationInputTest, AProfileFileDefinesTheGpuTheScenarioNames) {
  const fs::path dir = folder("defines");
  nlohmann::json profile = io::JsonReader::parse_file(kProfiles + "a100-ib.json");
  profile["gpu"] = {{"name", "SimInput-A100"},
                    {"architecture", "ampere"},
                    {"peak_bf16", "312TFLOPS"},
                    {"peak_tf32", "156TFLOPS"},
                    {"hbm_capacity", "80GB"},
                    {"hbm_bandwidth", "2TBps"},
                    {"sms", 108},
                    {"nvlink_bandwidth", "300GBps"}};
  const std::string profile_path = write(dir / "p.json", profile);
  const std::string scenario_path = write(dir / "s.json", one_node_scenario("SimInput-A100"));
  const io::SimulationInput input = io::load_simulation_input(scenario_path, {}, profile_path);
  EXPECT_EQ(input.scenario.cluster.gpu.name, "SimInput-A100");
  EXPECT_EQ(input.profile.gpu.name, "SimInput-A100");
}

// The profile file's absence comes first, then the scenario's errors, then the profile's own.
TEST(SimulationInputTest, ErrorsInOrder) {
  const fs::path dir = folder("order");
  const std::string good = kTestDataDir + "/scenarios/valid.json";
  nlohmann::json bad_scenario = io::JsonReader::parse_file(good);
  bad_scenario["parallelism"]["data"] = 3;
  const std::string bad_scenario_path = write(dir / "s.json", bad_scenario);
  nlohmann::json bad_profile = io::JsonReader::parse_file(kProfiles + "a100-ib.json");
  bad_profile["colour"] = "blue";
  const std::string bad_profile_path = write(dir / "p.json", bad_profile);

  EXPECT_EQ(error_of([&] { (void)io::load_simulation_input(bad_scenario_path, {}, "nope.json"); }),
            "profile file \"nope.json\" not found (looked beside the input file and in the "
            "working folder)");
  EXPECT_EQ(error_of([&] {
              (void)io::load_simulation_input(bad_scenario_path, {}, bad_profile_path);
            }).rfind(bad_scenario_path + ":/parallelism/data: ", 0),
            0u);
  EXPECT_EQ(error_of([&] {
              (void)io::load_simulation_input(good, {}, bad_profile_path);
            }).rfind(bad_profile_path + ":/colour: unknown key \"colour\"", 0),
            0u);
  // A profile of another GPU family is rejected at its "gpu".
  EXPECT_EQ(
      error_of([&] { (void)io::load_simulation_input(good, {}, kProfiles + "h100-ib.json"); }),
      kProfiles +
          "h100-ib.json:/gpu: profile \"h100-ib\" is for H100-SXM5-80GB, the "
          "scenario's GPUs are A100-SXM4-80GB");
}

// A parsed document reads as its file does; its profile path resolves against the folder of the
// name it is given, and errors carry that name.
TEST(SimulationInputTest, ADocumentReadsAsItsFile) {
  const fs::path dir = folder("document");
  nlohmann::json scenario = one_node_scenario("A100-SXM4-80GB");
  fs::copy_file(kProfiles + "a100-efa.json", dir / "mine.json");
  scenario["profile"] = "mine.json";
  const std::string path = write(dir / "s.json", scenario);
  const io::SimulationInput from_file = io::load_simulation_input(path, {}, std::nullopt);
  const io::SimulationInput from_doc = io::read_simulation_input(scenario, path);
  EXPECT_EQ(io::scenario_to_json(from_doc.scenario), io::scenario_to_json(from_file.scenario));
  EXPECT_EQ(io::profile_to_json(from_doc.profile), io::profile_to_json(from_file.profile));
  EXPECT_EQ(from_doc.profile.name, "a100-efa");

  scenario["parallelism"]["data"] = 3;
  EXPECT_EQ(error_of([&] {
              (void)io::read_simulation_input(scenario, "<scenario>");
            }).rfind("<scenario>:/parallelism/data: ", 0),
            0u);
  EXPECT_EQ(error_of([&] {
              (void)io::read_simulation_input(nlohmann::json::array(), "<s>");
            }).rfind("<s>", 0),
            0u);
}

}  // namespace
}  // namespace capsim::simulation_input_test
