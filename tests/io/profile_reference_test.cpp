// A profile file named by an input: where it is found, and the GPU a profile of new hardware
// defines before the input naming that GPU is read. Each failure names its cause (the missing
// file at the input's pointer, the profile's own JSON), never the "unknown GPU" it leads to.
#include "io/profile_reference.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "tests/io/error_of.hpp"

namespace capsim {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, holding the input and the profile beside it.
fs::path folder(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("capsim_profile_reference_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

nlohmann::json gpu_definition(const std::string& name) {
  return {{"name", name},
          {"architecture", "blackwell"},
          {"peak_bf16", "2250TFLOPS"},
          {"peak_tf32", "1100TFLOPS"},
          {"hbm_capacity", "180GB"},
          {"hbm_bandwidth", "7.7TBps"},
          {"sms", 148},
          {"nvlink_bandwidth", "900GBps"}};
}

// A one-node scenario on `gpu` that names `profile`.
std::string scenario_text(const std::string& gpu, const std::string& profile) {
  const nlohmann::json s = {{"schema", "capsim.scenario/v1"},
                            {"model",
                             {{"num_layers", 24},
                              {"hidden_size", 2048},
                              {"num_attention_heads", 16},
                              {"seq_length", 2048},
                              {"vocab_size", 51200}}},
                            {"cluster", {{"gpu", gpu}, {"gpus_per_node", 8}, {"num_nodes", 1}}},
                            {"parallelism", {{"data", 8}, {"global_batch_size", 64}}},
                            {"profile", profile}};
  return s.dump();
}

using testing::error_of;

TEST(ProfileReferenceTest, FoundBesideTheInputBeforeTheWorkingFolder) {
  const fs::path dir = folder("beside");
  write(dir / "p.json", "{}");
  EXPECT_EQ(io::resolve_profile_path("p.json", (dir / "s.json").string(), "/profile"),
            (dir / "p.json").string());
  EXPECT_EQ(io::resolve_profile_path("", (dir / "s.json").string(), "/profile"), "");
}

TEST(ProfileReferenceTest, AMissingProfileIsReportedAtTheInputsPointer) {
  const fs::path dir = folder("missing");
  const std::string input = (dir / "plan.json").string();
  EXPECT_EQ(error_of([&] {
              Catalog catalog;
              io::define_gpu_of_profile("none.json", input, "/instances/2/profile", catalog);
            }),
            input +
                ":/instances/2/profile: profile file \"none.json\" not found (looked beside "
                "the input file and in the working folder)");
}

TEST(ProfileReferenceTest, AnUnparsableProfileIsReportedInTheProfile) {
  const fs::path dir = folder("unparsable");
  write(dir / "p.json", R"({"schema": "capsim.profile/v1", "gpu": {"name": "X")");
  const std::string message = error_of([&] {
    Catalog catalog;
    io::define_gpu_of_profile("p.json", (dir / "s.json").string(), "/profile", catalog);
  });
  EXPECT_EQ(message.rfind((dir / "p.json").string() + ": invalid JSON", 0), 0u) << message;
}

TEST(ProfileReferenceTest, DefinesTheGpuOfNewHardwareAndNothingForACatalogName) {
  const fs::path dir = folder("defines");
  write(dir / "new.json", nlohmann::json{{"gpu", gpu_definition("RefTest-GPU")}}.dump());
  write(dir / "named.json", nlohmann::json{{"gpu", "H100-SXM5-80GB"}}.dump());
  const std::string input = (dir / "s.json").string();
  Catalog catalog;
  io::define_gpu_of_profile("new.json", input, "/profile", catalog);
  ASSERT_NE(catalog.find_gpu("RefTest-GPU"), nullptr);
  EXPECT_EQ(catalog.find_gpu("RefTest-GPU")->num_sms, 148);
  EXPECT_EQ(builtin_catalog().find_gpu("RefTest-GPU"), nullptr);
  const auto before = catalog.gpu_names().size();
  io::define_gpu_of_profile("named.json", input, "/profile", catalog);
  EXPECT_EQ(catalog.gpu_names().size(), before);
}

// A scenario naming new hardware through a broken or missing profile is told what is wrong with
// the profile, not that its GPU is unknown.
TEST(ProfileReferenceTest, AScenarioOnNewHardwareHearsWhatIsWrongWithItsProfile) {
  const fs::path dir = folder("scenario");
  write(dir / "broken.json", R"({"gpu": )");
  write(dir / "s.json", scenario_text("RefTest-Unknown", "broken.json"));
  const std::string broken = error_of([&] { (void)io::load_scenario((dir / "s.json").string()); });
  EXPECT_EQ(broken.rfind((dir / "broken.json").string() + ": invalid JSON", 0), 0u) << broken;
  write(dir / "s.json", scenario_text("RefTest-Unknown", "gone.json"));
  EXPECT_EQ(error_of([&] { (void)io::load_scenario((dir / "s.json").string()); }),
            (dir / "s.json").string() +
                ":/profile: profile file \"gone.json\" not found (looked beside the input file "
                "and in the working folder)");
}

}  // namespace
}  // namespace capsim
