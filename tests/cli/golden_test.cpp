// Golden tests: every shipped scenario runs end to end through the CLI and its JSON is compared
// with scenarios/<name>/expected/<engine>.json by parsed value (numbers within a relative
// 1e-6: the output itself is rounded to 6 significant digits). Regenerate with
// CAPSIM_UPDATE_GOLDEN=1 ctest -R Golden and review the diff.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_capsim.hpp"

namespace capsim {
namespace {

namespace fs = std::filesystem;
const fs::path kScenarios = fs::path(CAPSIM_SOURCE_DIR) / "scenarios";

void expect_same(const nlohmann::json& expected, const nlohmann::json& actual,
                 const std::string& where) {
  if (expected.is_number() && actual.is_number()) {
    const double e = expected.get<double>();
    const double a = actual.get<double>();
    EXPECT_LE(std::fabs(a - e), 1e-6 * std::max(std::fabs(e), 1e-12)) << where;
    return;
  }
  ASSERT_EQ(expected.type(), actual.type()) << where;
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      ASSERT_TRUE(actual.contains(key)) << where << "/" << key;
      expect_same(value, actual.at(key), where + "/" + key);
    }
    EXPECT_EQ(expected.size(), actual.size()) << where;
  } else if (expected.is_array()) {
    ASSERT_EQ(expected.size(), actual.size()) << where;
    for (size_t i = 0; i < expected.size(); ++i) {
      expect_same(expected[i], actual[i], where + "/" + std::to_string(i));
    }
  } else {
    EXPECT_EQ(expected, actual) << where;
  }
}

// The shipped cluster files' outputs: scenarios/cluster/expected/<name>.json.
void run_golden_cluster(const std::string& name) {
  const fs::path dir = kScenarios / "cluster";
  const auto result =
      testing::run_capsim("simulate " + (dir / (name + ".json")).string() + " --json");
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const nlohmann::json actual = nlohmann::json::parse(result.out);
  const fs::path golden = dir / "expected" / (name + ".json");
  if (std::getenv("CAPSIM_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden) << actual.dump(2) << "\n";
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in.good()) << "missing " << golden << "; run with CAPSIM_UPDATE_GOLDEN=1";
  expect_same(nlohmann::json::parse(in), actual, name);
}

void run_golden(const std::string& scenario, const std::string& engine) {
  const fs::path dir = kScenarios / scenario;
  const auto result = testing::run_capsim("simulate " + (dir / "scenario.json").string() +
                                          " --engine " + engine + " --json");
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const nlohmann::json actual = nlohmann::json::parse(result.out);
  const fs::path golden = dir / "expected" / (engine + ".json");
  if (std::getenv("CAPSIM_UPDATE_GOLDEN") != nullptr) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden) << actual.dump(2) << "\n";
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in.good()) << "missing " << golden << "; run with CAPSIM_UPDATE_GOLDEN=1";
  const nlohmann::json expected = nlohmann::json::parse(in);
  expect_same(expected, actual, scenario);
}

TEST(GoldenTest, Gpt3175bSeleneAnalytic) {
  run_golden("gpt3-175b-selene-1024", "analytic");
}
TEST(GoldenTest, Gpt30bP4dAnalytic) {
  run_golden("gpt-30b-p4d", "analytic");
}
TEST(GoldenTest, Llama3_70bP5Analytic) {
  run_golden("llama3-70b-p5", "analytic");
}
TEST(GoldenTest, Llama3_70bB200Analytic) {
  run_golden("llama3-70b-b200", "analytic");
}
TEST(GoldenTest, DeepseekV3H100Analytic) {
  run_golden("deepseek-v3-h100", "analytic");
}
TEST(GoldenTest, Qwen3_235bH100Analytic) {
  run_golden("qwen3-235b-h100", "analytic");
}
TEST(GoldenTest, Mixtral8x7bH100Analytic) {
  run_golden("mixtral-8x7b-h100", "analytic");
}
TEST(GoldenTest, Gpt3175bSeleneEvent) {
  run_golden("gpt3-175b-selene-1024", "event");
}
TEST(GoldenTest, Gpt30bP4dEvent) {
  run_golden("gpt-30b-p4d", "event");
}
TEST(GoldenTest, Llama3_70bP5Event) {
  run_golden("llama3-70b-p5", "event");
}

TEST(GoldenTest, Llama3_70bB200Event) {
  run_golden("llama3-70b-b200", "event");
}
TEST(GoldenTest, DeepseekV3H100Event) {
  run_golden("deepseek-v3-h100", "event");
}
TEST(GoldenTest, Qwen3_235bH100Event) {
  run_golden("qwen3-235b-h100", "event");
}
TEST(GoldenTest, Mixtral8x7bH100Event) {
  run_golden("mixtral-8x7b-h100", "event");
}

TEST(GoldenTest, ClusterTwoJobsOversubscribed) {
  run_golden_cluster("two-jobs-oversubscribed");
}

}  // namespace
}  // namespace capsim
