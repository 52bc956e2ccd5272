// The embedded default what-if, end to end, against scenarios/whatif/expected/default.json
// (parsed values, relative tolerance 1e-9). Regenerate: CAPSIM_UPDATE_GOLDEN=1 ctest -R golden
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "whatif/results.hpp"
#include "whatif/runner.hpp"
#include "whatif/whatif_io.hpp"

namespace capsim::whatif {
namespace {

void expect_close(const nlohmann::json& want, const nlohmann::json& got, const std::string& at) {
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    EXPECT_LE(std::abs(a - b), 1e-9 * std::max(1.0, std::abs(a))) << at << ": " << a << " vs " << b;
    return;
  }
  ASSERT_EQ(want.type(), got.type()) << at;
  if (want.is_object()) {
    ASSERT_EQ(want.size(), got.size()) << at;
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << at << "/" << k;
      expect_close(v, got.at(k), at + "/" + k);
    }
  } else if (want.is_array()) {
    ASSERT_EQ(want.size(), got.size()) << at;
    for (std::size_t i = 0; i < want.size(); ++i)
      expect_close(want[i], got[i], at + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(want, got) << at;
  }
}

TEST(GoldenTest, DefaultWhatIf) {
  const WhatIf w = default_whatif();
  const auto got = summary_json(w, run_all(w, expand_policies(w), 1, 2));
  const std::string path =
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/whatif/expected/default.json";
  if (std::getenv("CAPSIM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << got.dump(2) << "\n";
    GTEST_SKIP() << "golden updated: " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << "; run with CAPSIM_UPDATE_GOLDEN=1";
  const auto want = nlohmann::json::parse(in);
  expect_close(want, got, "");
  // The contract keys of docs/design/json-output.md §4.
  for (const auto& p : got.at("policies")) {
    for (const char* key : {"name", "cost_usd", "gpu_hours_billed", "gpu_hours_busy", "utilization",
                            "queue_wait_p50_s", "queue_wait_p95_s", "jct_p50_s", "jct_p95_s",
                            "jobs_finished", "goodput_lost_gpu_hours"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
  }
}

}  // namespace
}  // namespace capsim::whatif
