#include "whatif/whatif_io.hpp"

#include <string>

#include <gtest/gtest.h>

#include "io/input_error.hpp"

namespace capsim::whatif {
namespace {

const std::string kDir = std::string(CAPSIM_TEST_DATA_DIR) + "/whatif";

nlohmann::json base() {
  return nlohmann::json::parse(R"({
    "schema": "capsim.whatif/v1",
    "pools": [ { "name": "od", "instance": "p4d.24xlarge", "pricing": "on-demand",
                 "max_nodes": 4 } ],
    "jobs": { "format": "capsim-csv", "path": "jobs.csv" }
  })");
}

std::string error_of(const nlohmann::json& j) {
  try {
    (void)read_whatif(j, "w.json", kDir);
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(WhatIfIoTest, ReadsTheTinyFileWithDefaults) {
  const WhatIf w = load_whatif(kDir + "/tiny.json");
  EXPECT_EQ(w.name, "tiny");
  ASSERT_EQ(w.pools.size(), 1u);
  EXPECT_DOUBLE_EQ(w.pools[0].price_usd_per_hour, 21.957642);  // catalog on-demand price
  EXPECT_DOUBLE_EQ(w.pools[0].boot.median_s, 300.0);
  EXPECT_EQ(w.jobs.size(), 3u);
  ASSERT_EQ(w.policies.size(), 2u);
  EXPECT_EQ(w.policies[1].name, "ca");
  EXPECT_DOUBLE_EQ(w.policies[1].loop.dwell_s, 600.0);
  EXPECT_EQ(w.seed, 1u);
}

TEST(WhatIfIoTest, NoPoliciesMeansEveryPreset) {
  const WhatIf w = read_whatif(base(), "w.json", kDir);
  EXPECT_EQ(w.policies.size(), 8u);
}

// A pool may run an instance type the catalog lacks, described in the file (new hardware or
// another cloud's node); it has no catalog price, so the pool gives one.
TEST(WhatIfIoTest, PoolOfADefinedInstance) {
  auto j = base();
  j["pools"][0]["instance"] = nlohmann::json::parse(R"({
    "name": "whatif-b200-node",
    "gpu": {"name": "WhatIf-B200", "architecture": "blackwell", "peak_bf16": "2250TFLOPS",
            "hbm_capacity": "180GB", "hbm_bandwidth": "7.7TBps", "sms": 148,
            "nvlink_bandwidth": "900GBps"},
    "gpus_per_node": 8,
    "inter_node": {"fabric": "infiniband", "nics_per_node": 8, "nic_bandwidth": "400Gbps"}})");
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/price: a pool of an instance defined here needs \"price\"");
  j["pools"][0]["price"] = "$100/h";
  const WhatIf w = read_whatif(j, "w.json", kDir);
  EXPECT_EQ(w.pools[0].instance.name, "whatif-b200-node");
  EXPECT_EQ(w.pools[0].instance.gpu.name, "WhatIf-B200");
  EXPECT_DOUBLE_EQ(w.pools[0].price_usd_per_hour, 100.0);
}

TEST(WhatIfIoTest, EveryRuleHasItsMessage) {
  auto j = base();
  j["schema"] = "capsim.whatif/v2";
  EXPECT_EQ(error_of(j), "w.json:/schema: expected \"capsim.whatif/v1\", got \"capsim.whatif/v2\"");
  j = base();
  j["colour"] = "blue";
  EXPECT_EQ(error_of(j).rfind("w.json:/colour: unknown key \"colour\"; allowed keys: ", 0), 0u);
  j = base();
  j["pools"] = nlohmann::json::array();
  EXPECT_EQ(error_of(j), "w.json:/pools: expected at least 1 element(s)");
  j = base();
  j["pools"][0]["instance"] = "p9.huge";
  EXPECT_EQ(error_of(j).rfind("w.json:/pools/0/instance: unknown instance \"p9.huge\" (known: "
                              "p4d.24xlarge, ",
                              0),
            0u);
  j = base();
  j["pools"][0]["pricing"] = "savings-plan";
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/pricing: expected one of on-demand, spot, "
            "capacity-block, reserved, got \"savings-plan\"");
  j = base();
  j["pools"][0]["instance"] = "dgx-h100";
  j["pools"][0]["pricing"] = "reserved";
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/price: the catalog has no reserved price for dgx-h100; give "
            "\"price\"");
  j = base();
  j["pools"][0]["pricing"] = "spot";
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/price: a spot pool needs \"price\" (spot prices move; "
            "see docs/whatif.md)");
  j = base();
  j["pools"][0]["instance"] = "p5en.48xlarge";
  j["pools"][0]["pricing"] = "capacity-block";
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/price: the catalog has no capacity-block price for "
            "p5en.48xlarge; give \"price\"");
  for (const char* price : {"$0/h", "$2e6/h"}) {
    j = base();
    j["pools"][0]["price"] = price;
    EXPECT_EQ(error_of(j), std::string("w.json:/pools/0/price: expected a positive price of at "
                                       "most $1000000/h, got \"") +
                               price + "\"");
  }
  j = base();
  j["pools"][0]["min_nodes"] = 5;
  EXPECT_EQ(error_of(j), "w.json:/pools/0/min_nodes: min_nodes (5) must be <= max_nodes (4)");
  j = base();
  j["pools"][0]["spot"] = {{"notice", "2min"}};
  EXPECT_EQ(error_of(j), "w.json:/pools/0/spot: a \"spot\" section needs \"pricing\": \"spot\"");
  j = base();
  j["pools"][0]["provisioning"] = {{"boot", {{"median", "10min"}, {"p95", "5min"}}}};
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/provisioning/boot/p95: p95 must be >= median (\"5min\" "
            "< \"10min\")");
  j = base();
  j["pools"][0]["provisioning"] = {{"boot", 300}};
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/provisioning/boot: expected a duration like \"30d\", "
            "got 300");
  j = base();
  j["pools"][0]["capacity"] = {{"ice_probability", 1.5}};
  EXPECT_EQ(error_of(j),
            "w.json:/pools/0/capacity/ice_probability: expected a number in [0, 1], "
            "got 1.5");
  j = base();
  j["pools"].push_back(j["pools"][0]);
  EXPECT_EQ(error_of(j), "w.json:/pools/1/name: duplicate pool name \"od\"");
  j = base();
  j["jobs"]["format"] = "slurm-sacct";
  EXPECT_EQ(error_of(j),
            "w.json:/jobs/format: expected one of capsim-csv, philly-pollux, "
            "alibaba-openb, pollux-workload, helios, got \"slurm-sacct\"");
  j = base();
  j["jobs"]["path"] = "missing.csv";
  EXPECT_EQ(error_of(j),
            "w.json:/jobs/path: job trace \"" + kDir + "/missing.csv\" does not exist");
  j = base();
  j["pools"][0]["max_nodes"] = 1;
  EXPECT_EQ(error_of(j), "w.json:/jobs: job b needs 16 GPUs but the largest pool holds 8");
  j = base();
  j["failures"] = {{"checkpoint_interval", "young-daly"}};
  EXPECT_EQ(error_of(j),
            "w.json:/failures/checkpoint_interval: \"young-daly\" needs a positive "
            "\"gpu_mtbf\" and \"checkpoint_cost\"");
  j = base();
  j["failures"] = {{"checkpoint_interval", "0s"}};
  EXPECT_EQ(error_of(j),
            "w.json:/failures/checkpoint_interval: expected a duration of at least 1s or "
            "\"young-daly\"");
  j = base();
  j["policies"] = {{{"preset", "yarn"}}};
  EXPECT_EQ(error_of(j),
            "w.json:/policies/0/preset: expected one of static, cluster-autoscaler, "
            "ray-v1, kuberay-v2, karpenter, slurm-power-save, kuberay-ca-asg, oracle, got "
            "\"yarn\"");
  j = base();
  j["policies"] = {{{"preset", "static"}}, {{"preset", "static"}}};
  EXPECT_EQ(error_of(j), "w.json:/policies/1/name: duplicate policy name \"static\"");
  j = base();
  j["policies"] = {{{"preset", "cluster-autoscaler"}, {"knobs", {{"scan_interval", 10}}}}};
  EXPECT_EQ(error_of(j),
            "w.json:/policies/0/knobs/scan_interval: expected a duration like "
            "\"30d\", got 10");
  j = base();
  j["policies"] = {{{"preset", "kuberay-ca-asg"}, {"knobs", {{"asg_actuation_delay", "366d"}}}}};
  EXPECT_EQ(error_of(j),
            "w.json:/policies/0/knobs/asg_actuation_delay: expected a duration of at most 365d");
  j = base();
  j["sweep"] = {{"policy", "nope"}, {"knob", "idle_timeout"}, {"values", {"1min"}}};
  EXPECT_EQ(error_of(j),
            "w.json:/sweep/policy: no policy named \"nope\" (policies: static, "
            "cluster-autoscaler, ray-v1, kuberay-v2, karpenter, slurm-power-save, "
            "kuberay-ca-asg, oracle)");
  j = base();
  j["sweep"] = {{"policy", "ray-v1"}, {"knob", "idle_timeout"}, {"values", {"1min", 5}}};
  EXPECT_EQ(error_of(j),
            "w.json:/sweep/values/1/knobs/idle_timeout: expected a duration like "
            "\"30d\", got 5");
  j = base();
  j["pools"][0]["name"] = "";
  EXPECT_EQ(error_of(j), "w.json:/pools/0/name: pool name must not be empty");
  j = base();
  j["jobs"]["path"] = "empty.csv";
  EXPECT_EQ(error_of(j), "w.json:/jobs/path: the job trace holds no jobs");
  j = base();
  j["jobs"]["time_scale"] = 0;
  EXPECT_EQ(error_of(j), "w.json:/jobs/time_scale: expected a number in [1e-06, 1e+06], got 0");
  j = base();
  j["timeline_interval"] = "0s";
  EXPECT_EQ(error_of(j), "w.json:/timeline_interval: expected a duration of at least 1s");
  // Below a second the engine's clock cannot advance (1ns would hang the run).
  j = base();
  j["timeline_interval"] = "1ns";
  EXPECT_EQ(error_of(j), "w.json:/timeline_interval: expected a duration of at least 1s");
  j = base();
  j["horizon"] = "1ns";
  EXPECT_EQ(error_of(j), "w.json:/horizon: expected a duration of at least 1s");
  j = base();
  j["failures"] = {{"checkpoint_interval", "1e-300s"}};
  EXPECT_EQ(error_of(j),
            "w.json:/failures/checkpoint_interval: expected a duration of at least 1s or "
            "\"young-daly\"");
}

TEST(WhatIfIoTest, BadFilesNameFileAndPointer) {
  const std::string bad = std::string(CAPSIM_TEST_DATA_DIR) + "/bad/";
  try {
    (void)load_whatif(bad + "whatif_bare_price.json");
    FAIL() << "accepted a bare price";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), bad +
                                         "whatif_bare_price.json:/pools/0/price: expected a "
                                         "price like \"$32.77/h\", got 32.77");
  }
  try {
    (void)load_whatif(bad + "whatif_unknown_knob.json");
    FAIL() << "accepted an unknown knob";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              bad +
                  "whatif_unknown_knob.json:/policies/0/knobs/idle_timeout_minutes: unknown key "
                  "\"idle_timeout_minutes\"; allowed keys: idle_timeout, max_concurrent_launches, "
                  "node_start_wait, update_interval, upscaling_initial_num_nodes, "
                  "upscaling_speed");
  }
  try {
    (void)load_whatif(bad + "whatif_jobs_path_folder.json");
    FAIL() << "accepted a folder as the job trace";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), bad + "whatif_jobs_path_folder.json:/jobs/path: job trace \"" +
                                         std::string(CAPSIM_TEST_DATA_DIR) +
                                         "/whatif\" is not a file");
  }
}

// Every unknown knob of a policy is reported in one run, a near miss with the knob it means.
TEST(WhatIfIoTest, EveryUnknownKnobAtOnce) {
  auto j = base();
  j["policies"] = {{{"preset", "ray-v1"}, {"knobs", {{"idle_timeut", "5m"}, {"colour", 1}}}}};
  EXPECT_EQ(error_of(j),
            "w.json:/policies/0/knobs/colour: unknown key \"colour\"; allowed keys: idle_timeout, "
            "max_concurrent_launches, node_start_wait, update_interval, "
            "upscaling_initial_num_nodes, upscaling_speed\n"
            "w.json:/policies/0/knobs/idle_timeut: unknown key \"idle_timeut\"; did you mean "
            "\"idle_timeout\"?");
}

TEST(WhatIfIoTest, SweepExpandsIntoNamedVariants) {
  auto j = base();
  j["policies"] = {{{"preset", "ray-v1"}}, {{"preset", "static"}}};
  j["sweep"] = {{"policy", "ray-v1"}, {"knob", "idle_timeout"}, {"values", {"1min", "10min"}}};
  const WhatIf w = read_whatif(j, "w.json", kDir);
  const auto variants = expand_policies(w);
  ASSERT_EQ(variants.size(), 3u);
  EXPECT_EQ(variants[0].name, "ray-v1[idle_timeout=1min]");
  EXPECT_DOUBLE_EQ(variants[0].loop.dwell_s, 60.0);
  EXPECT_DOUBLE_EQ(variants[1].loop.dwell_s, 600.0);
  EXPECT_EQ(variants[2].name, "static");  // not swept: runs beside the variants
}

TEST(WhatIfIoTest, DefaultWhatIfIsEmbedded) {
  const WhatIf w = default_whatif();
  EXPECT_EQ(w.name, "philly-day-p4d");
  EXPECT_EQ(w.jobs.size(), 364u);
  EXPECT_EQ(w.policies.size(), 8u);
  EXPECT_EQ(w.pools.size(), 2u);
}

}  // namespace
}  // namespace capsim::whatif

namespace capsim::whatif {
namespace {

TEST(WhatIfIoTest, InlineJobs) {
  auto j = base();
  j["jobs"] = nlohmann::json::parse(R"([
    {"job_id": "b", "submit": "1h", "gpus": 8, "duration": "2h"},
    {"job_id": "a", "submit": "0s", "gpus": 16, "min_gpus": 8, "max_gpus": 32, "duration": "1h"}
  ])");
  const WhatIf w = read_whatif(j, "w.json", kDir);
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.jobs[0].id, "a");
  EXPECT_TRUE(w.jobs[0].is_elastic());
  EXPECT_DOUBLE_EQ(w.jobs[1].duration_s, 7200.0);
  j["jobs"][0].erase("duration");
  EXPECT_EQ(error_of(j),
            "w.json:/jobs/0/duration: a job has either \"duration\" (rigid) or "
            "\"scenario\" and \"tokens\"");
  j["jobs"][0]["duration"] = "2h";
  j["jobs"][0]["user"] = "x";
  EXPECT_EQ(error_of(j).rfind("w.json:/jobs/0/user: unknown key \"user\"", 0), 0u);
  j["jobs"][0].erase("user");
  j["jobs"][1]["job_id"] = "b";
  EXPECT_EQ(error_of(j), "w.json:/jobs/1/job_id: duplicate job id \"b\"");
  j["jobs"][1]["job_id"] = "a";
  j["jobs"][0]["submit"] = "3651d";
  EXPECT_EQ(error_of(j), "w.json:/jobs/0/submit: expected a submit time between 0 and 3650 days");
}

}  // namespace
}  // namespace capsim::whatif

namespace capsim::whatif {
namespace {

TEST(WhatIfIoTest, ReservedPoolTakesTheCatalogReservedPrice) {
  nlohmann::json j = base();
  j["pools"][0]["pricing"] = "reserved";
  const WhatIf w = read_whatif(j, "w.json", kDir);
  EXPECT_EQ(w.pools[0].pricing, Pricing::kReserved);
  EXPECT_DOUBLE_EQ(w.pools[0].price_usd_per_hour, 13.92);  // p4d.24xlarge, docs/planner.md
}

}  // namespace
}  // namespace capsim::whatif
