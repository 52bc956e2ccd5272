// `capsim calibrate` end to end through the built binary: exit codes, outputs, report.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/cli/run_capsim.hpp"

namespace capsim {
namespace {

using testing::run_capsim;

const std::string kLogs = std::string(CAPSIM_DATA_DIR) + "/nccl/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("capsim_calibrate_test_" + name)).string();
}

TEST(CalibrateCommandTest, FitWritesProfileAndReport) {
  const std::string profile = temp_path("p.json");
  const std::string report = temp_path("r.html");
  const auto r =
      run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt " + kLogs +
                 "a100_1node_allreduce_mpi8_thanos.txt --gpu A100-SXM4-80GB " +
                 "--fabric efa --node-nic-bandwidth 400Gbps -o " + profile + " --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(read(profile).find("\"schema\": \"capsim.profile/v1\""), std::string::npos);
  const std::string html = read(report);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("a100_p4de_2node_allreduce_awsome.txt"), std::string::npos);
  EXPECT_NE(r.out.find("MAPE"), std::string::npos);
}

TEST(CalibrateCommandTest, BadInputExitsTwoWithMessage) {
  const std::string bad = std::string(CAPSIM_TEST_DATA_DIR) + "/nccl_bad/bad_time_allreduce.txt";
  auto r = run_capsim("calibrate fit " + bad + " -o " + temp_path("x.json"), true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(bad + ":7: expected a number"), std::string::npos) << r.out;
  r = run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt --gpu " +
                     "A100-SXM4-80GB -o " + temp_path("x.json"),
                 true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--fabric"), std::string::npos) << r.out;
  r = run_capsim("calibrate fit " + kLogs + "a100_1node_allreduce_mpi8_thanos.txt", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("missing -o PROFILE.json"), std::string::npos) << r.out;
  r = run_capsim("calibrate frobnicate", true);
  EXPECT_EQ(r.exit_code, 2);
}

TEST(CalibrateCommandTest, ValidateReportsHeldOutLogs) {
  const auto r =
      run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt " +
                 "--gpu A100-SXM4-80GB --fabric efa --node-nic-bandwidth 400Gbps " + "--validate " +
                 kLogs + "a100_p4d_2node_allreduce_awsdlami2024.txt -o " + temp_path("v.json"));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("held-out"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace capsim
