// The `capsim whatif` command end to end (exit codes, outputs), through the built binary.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/capsim_process.hpp"
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Outcome {
  int code;
  std::string out;
};

// Runs `capsim whatif ARGS` with `env` (VAR=value, or empty) in its environment.
Outcome capsim_with_env(const std::string& env, const std::string& args) {
  const std::string cmd =
      env + " " + std::string(CAPSIM_BINARY) + " whatif " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  const int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

Outcome capsim(const std::string& args) {
  return capsim_with_env("", args);
}

const std::string kDir = std::string(CAPSIM_TEST_DATA_DIR);

TEST(WhatIfCliTest, BadInputExitsTwo) {
  EXPECT_EQ(capsim(kDir + "/bad/whatif_bare_price.json").code, 2);
  EXPECT_EQ(capsim(kDir + "/bad/whatif_unknown_knob.json").code, 2);
  EXPECT_EQ(capsim("/no/such/file.json").code, 2);
  EXPECT_EQ(capsim("--seeds 0").code, 2);
  EXPECT_EQ(capsim("--policy nope").code, 2);
}

TEST(WhatIfCliTest, JsonHasTheContractKeys) {
  const Outcome r = capsim(kDir + "/whatif/tiny.json --json --seeds 2");
  ASSERT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("policies").size(), 2u);
  for (const auto& p : j.at("policies")) {
    for (const char* key :
         {"name", "cost_usd", "gpu_hours_billed", "gpu_hours_busy", "utilization",
          "queue_wait_p50_s", "queue_wait_p95_s", "jct_p50_s", "jct_p95_s", "jobs_finished",
          "goodput_lost_gpu_hours", "spread", "cost_by_pricing_usd", "scale_ups", "scale_downs",
          "queue_wait_max_s", "goodput_lost_by_cause_gpu_hours"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
  }
  EXPECT_EQ(j.at("seeds"), nlohmann::json({1, 2}));
}

TEST(WhatIfCliTest, TimelineAndReportFiles) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("capsim-whatif-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const Outcome r = capsim(kDir + "/whatif/tiny.json --timeline " + (dir / "t.csv").string() +
                           " --report " + (dir / "r.html").string());
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\nca "), std::string::npos);
  std::ifstream t(dir / "t.csv");
  std::string header;
  std::getline(t, header);
  EXPECT_EQ(header,
            "series,time_s,nodes_booting,nodes_idle,nodes_busy,nodes_draining,"
            "nodes_failed,gpus_busy,jobs_running,jobs_queued");
  std::stringstream html;
  html << std::ifstream(dir / "r.html").rdbuf();
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  EXPECT_NE(html.str().find("</html>"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(WhatIfCliTest, DefaultRunsWithoutAFile) {
  const Outcome r = capsim("--json --jobs 2");
  ASSERT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("name"), "philly-day-p4d");
  EXPECT_EQ(j.at("policies").size(), 8u);
}

}  // namespace

namespace {

TEST(WhatIfCliTest, SameSeedSameBytes) {
  const Outcome a = capsim("--json --seeds 2 --jobs 2");
  const Outcome b = capsim("--json --seeds 2 --jobs 1");
  ASSERT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(capsim("--json --seed 5").out, capsim("--json --seed 6").out);
}

TEST(WhatIfCliTest, SweepRunsOneVariantPerValue) {
  const Outcome r =
      capsim(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/whatif/sweep_ca_unneeded.json --json");
  ASSERT_EQ(r.code, 0);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("policies").size(), 4u);
  EXPECT_EQ(j.at("policies")[0].at("name"), "ca[scale_down_unneeded_time=1min]");
  // On this bursty trace a longer dwell only keeps idle nodes longer (docs/whatif.md).
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_GE(j.at("policies")[i].at("gpu_hours_billed").get<double>(),
              j.at("policies")[i - 1].at("gpu_hours_billed").get<double>());
  }
}

}  // namespace

namespace {

// Stopped by SIGTERM while its simulations run, `capsim whatif` ends by that signal, its
// children end with it, and it leaves nothing in TMPDIR (results come back on pipes).
TEST(WhatIfCliTest, SigtermLeavesNoChildAndNoFiles) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // its orphans become this test's
  const auto tmpdir = std::filesystem::path(::testing::TempDir()) /
                      ("capsim_whatif_sigterm_" + std::to_string(getpid()));
  std::filesystem::remove_all(tmpdir);
  std::filesystem::create_directories(tmpdir);
  capsim::testing::CapsimProcess whatif({"whatif", "--seeds", "50", "--jobs", "2"},
                                        tmpdir.string());
  const std::set<pid_t> children = whatif.first_children();
  ASSERT_FALSE(children.empty()) << "the what-if ended before it started a simulation";
  ASSERT_EQ(kill(whatif.pid(), SIGTERM), 0);
  const int status = whatif.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_TRUE(capsim::testing::all_end_within_a_second(children)) << "a child outlived it";
  EXPECT_TRUE(std::filesystem::is_empty(tmpdir));
  std::filesystem::remove_all(tmpdir);
}

}  // namespace

namespace {

// Under an MPI launcher only rank 0 runs the what-if and prints; the other ranks print nothing
// and exit 0 (each launcher announces the rank in its own variable).
TEST(WhatIfCliTest, OnlyLauncherRankZeroRunsAndPrints) {
  const Outcome alone = capsim(kDir + "/whatif/tiny.json --json");
  ASSERT_EQ(alone.code, 0);
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const std::string env = std::string(variable);
    const Outcome rank1 = capsim_with_env(env + "=1", kDir + "/whatif/tiny.json --json");
    EXPECT_EQ(rank1.code, 0) << variable;
    EXPECT_EQ(rank1.out, "") << variable;
    const Outcome rank0 = capsim_with_env(env + "=0", kDir + "/whatif/tiny.json --json");
    EXPECT_EQ(rank0.code, 0) << variable;
    EXPECT_EQ(rank0.out, alone.out) << variable;
  }
}

}  // namespace

namespace {

TEST(WhatIfCliTest, ReservedPoolIsBilledForEveryNodeAllRun) {
  const Outcome r = capsim(kDir + "/whatif/reserved.json --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto p = nlohmann::json::parse(r.out).at("policies").at(0);
  const double end_h = p.at("end_time_s").get<double>() / 3600.0;
  // p4d.24xlarge reserved: $13.92 per node-hour in the catalog (docs/planner.md), 3 nodes held
  EXPECT_NEAR(p.at("cost_by_pricing_usd").at("reserved").get<double>(), 3 * end_h * 13.92, 1e-6);
  EXPECT_NEAR(p.at("cost_usd").get<double>(), 3 * end_h * 13.92, 1e-6);
}

TEST(WhatIfCliTest, EmitWritesTheRecommendedPolicyBack) {
  const std::string dir = ::testing::TempDir() + "/capsim_emit";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const Outcome r = capsim(kDir + "/whatif/from_ca.json --json --emit " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  // the oracle is never recommended; the file's CA keeps fewer nodes than static
  EXPECT_EQ(j.at("recommended").at("policy"), "ca-file");
  EXPECT_EQ(j.at("recommended").at("file"), dir + "/cluster-autoscaler.flags");
  ASSERT_EQ(j.at("notes").size(), 1u);
  EXPECT_EQ(j.at("notes").at(0).at("pointer"), "line 2");
  std::ifstream in(dir + "/cluster-autoscaler.flags");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("--scale-down-unneeded-time=2m\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("--nodes=0:3:od\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("--expander=price\n"), std::string::npos) << text.str();
  // The file read is written back whole: its comment and the flags capsim does not model too.
  EXPECT_NE(text.str().find("# cluster-autoscaler flags\n--v=2\n"), std::string::npos)
      << text.str();
  EXPECT_EQ(capsim(kDir + "/whatif/from_ca.json --emit /no/such/folder").code, 2);
}

TEST(WhatIfCliTest, UnmodelledConfigurationKeysExitTwoUnlessAllowed) {
  const std::string file =
      std::string(CAPSIM_TEST_DATA_DIR) + "/autoscaler/bad/whatif_unmodelled.json";
  EXPECT_EQ(capsim(file).code, 2);
  const Outcome r = capsim(file + " --allow-unmodelled");
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("karpenter_cpu_limit.yaml:/spec/limits/cpu: not modelled"),
            std::string::npos)
      << r.out;
}

}  // namespace
