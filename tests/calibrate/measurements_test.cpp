#include "calibrate/measurements.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/profile_fit.hpp"

#include "io/input_error.hpp"

namespace capsim::calibrate {
namespace {

nlohmann::json valid_measurements() {
  return nlohmann::json::parse(R"({
    "schema": "capsim.measurements/v1",
    "machine": {"gpu": "NVIDIA H100 80GB HBM3", "gpus_per_node": 8, "nodes": 2,
                "nccl_version": "2.23.4", "env": {"NCCL_ALGO": "ring"}},
    "nccl": [{"collective": "all_reduce", "ranks": 16, "nodes": 2,
              "samples": [{"bytes": 8, "time_s": 7e-5},
                          {"bytes": 1048576, "time_s": 1.5e-4, "time_in_place_s": 1.4e-4}]}],
    "gemm": [{"dtype": "bf16", "m": 4096, "n": 4096, "k": 4096, "time_s": 2e-4}]
  })");
}

// capsim-calibrate overlap output: 132 SMs; 132 x (1 - 1e-3 / 1.22e-3) = 23.8 -> 24,
// 132 x (1 - 1e-3 / 1.2e-3) = 22; the median of 22 and 24 is 23.
nlohmann::json valid_overlap() {
  return nlohmann::json::parse(R"({
    "schema": "capsim.measurements/v1",
    "machine": {"gpu": "NVIDIA H100 80GB HBM3", "gpus_per_node": 8, "nodes": 1},
    "overlap": {"sms": 132, "ranks": 8, "collective_bytes": 268435456, "dtype": "bf16",
                "sms_taken": 23,
                "samples": [{"collective": "all_reduce", "m": 8192, "n": 8192, "k": 8192,
                             "batch": 1, "time_alone_s": 1e-3, "time_beside_s": 1.22e-3,
                             "sms_taken": 24},
                            {"collective": "all_gather", "m": 8192, "n": 8192, "k": 8192,
                             "time_alone_s": 1e-3, "time_beside_s": 1.2e-3, "sms_taken": 22}]}
  })");
}

std::string error_of(const nlohmann::json& doc) {
  try {
    (void)read_measurements_json(doc, "m.json");
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MeasurementsTest, ReadsAndRoundTrips) {
  const Measurements m = read_measurements_json(valid_measurements(), "m.json");
  ASSERT_EQ(m.collectives.size(), 1U);
  EXPECT_EQ(m.collectives[0].ranks_per_node, 8);
  EXPECT_EQ(m.collectives[0].gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(m.collectives[0].samples[1].best_time_s(), 1.4e-4);
  EXPECT_EQ(m.machine.env.at("NCCL_ALGO"), "ring");
  ASSERT_EQ(m.gemms.size(), 1U);
  EXPECT_NEAR(m.gemms[0].flop_per_s, 2.0 * 4096.0 * 4096 * 4096 / 2e-4, 1.0);
  const Measurements again = read_measurements_json(measurements_to_json(m), "again.json");
  EXPECT_EQ(measurements_to_json(again), measurements_to_json(m));
}

TEST(MeasurementsTest, RulesHaveExactMessages) {
  auto doc = valid_measurements();
  doc["schema"] = "capsim.measurements/v2";
  EXPECT_EQ(error_of(doc),
            "m.json:/schema: expected \"capsim.measurements/v1\", got \"capsim.measurements/v2\"");
  doc = valid_measurements();
  doc["nccl"][0]["nodes"] = 3;
  EXPECT_EQ(error_of(doc), "m.json:/nccl/0/nodes: ranks (16) must be a multiple of nodes (3)");
  doc = valid_measurements();
  doc["nccl"][0]["ranks"] = 1;
  EXPECT_EQ(error_of(doc), "m.json:/nccl/0/ranks: expected an integer in [2, 1000000], got 1");
  doc = valid_measurements();
  doc["nccl"][0]["samples"][1]["bytes"] = 8;
  EXPECT_EQ(error_of(doc), "m.json:/nccl/0/samples/1/bytes: sizes must increase within a curve");
  doc = valid_measurements();
  doc["nccl"][0]["samples"][1]["time_in_place_s"] = 1e-308;
  EXPECT_EQ(error_of(doc),
            "m.json:/nccl/0/samples/1/time_in_place_s: expected 0 (not measured) or "
            "a time in [1e-09, 1e+06]");
  doc = valid_measurements();
  doc["nccl"][0]["collective"] = "allreduce";
  EXPECT_EQ(error_of(doc),
            "m.json:/nccl/0/collective: expected one of all_reduce, all_gather, reduce_scatter, "
            "alltoall, broadcast, send_recv, got \"allreduce\"");
  doc = valid_measurements();
  doc["gemm"][0]["dtype"] = "int8";
  EXPECT_EQ(error_of(doc),
            "m.json:/gemm/0/dtype: expected one of bf16, fp16, fp8_e4m3, fp8_e5m2, tf32, got "
            "\"int8\"");
  doc = valid_measurements();
  doc["machine"]["env"]["NCCL_ALGO"] = 1;
  EXPECT_EQ(error_of(doc), "m.json:/machine/env/NCCL_ALGO: expected a string, got 1");
  doc = valid_measurements();
  doc.erase("nccl");
  doc.erase("gemm");
  EXPECT_EQ(error_of(doc),
            "m.json:/: no measurements: expected a non-empty \"nccl\" or \"gemm\" array or an "
            "\"overlap\" object");
}

TEST(MeasurementsTest, ReadsAndRoundTripsOverlap) {
  const Measurements m = read_measurements_json(valid_overlap(), "o.json");
  EXPECT_TRUE(m.collectives.empty());
  EXPECT_TRUE(m.gemms.empty());
  ASSERT_TRUE(m.overlap.has_value());
  EXPECT_EQ(m.overlap->sms, 132);
  EXPECT_EQ(m.overlap->ranks, 8);
  EXPECT_EQ(m.overlap->source, "o.json");
  ASSERT_EQ(m.overlap->samples.size(), 2U);
  EXPECT_EQ(m.overlap->samples[1].collective, CollectiveKind::kAllGather);
  EXPECT_DOUBLE_EQ(m.overlap->samples[1].batch, 1.0);
  EXPECT_EQ(m.overlap->sms_taken, 23);
  const Measurements again = read_measurements_json(measurements_to_json(m), "again.json");
  EXPECT_EQ(measurements_to_json(again), measurements_to_json(m));
  // Alongside nccl and gemm sections in one file.
  auto both = valid_measurements();
  both["overlap"] = valid_overlap()["overlap"];
  EXPECT_TRUE(read_measurements_json(both, "b.json").overlap.has_value());
}

TEST(MeasurementsTest, OverlapRulesHaveExactMessages) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& j) { j["overlap"]["bogus"] = 1; },
       "m.json:/overlap/bogus: unknown key \"bogus\"; allowed keys: collective_bytes, dtype, "
       "ranks, samples, sms, sms_taken"},
      {[](nlohmann::json& j) { j["overlap"]["samples"][0]["time_s"] = 1; },
       "m.json:/overlap/samples/0/time_s: unknown key \"time_s\"; allowed keys: batch, "
       "collective, k, m, n, sms_taken, time_alone_s, time_beside_s"},
      {[](nlohmann::json& j) { j["overlap"] = 3; }, "m.json:/overlap: expected an object, got 3"},
      {[](nlohmann::json& j) { j["overlap"].erase("sms"); },
       "m.json:/overlap/sms: missing required key"},
      {[](nlohmann::json& j) { j["overlap"]["sms"] = 1; },
       "m.json:/overlap/sms: expected an integer in [2, 100000], got 1"},
      {[](nlohmann::json& j) { j["overlap"]["ranks"] = 1; },
       "m.json:/overlap/ranks: expected an integer in [2, 100000], got 1"},
      {[](nlohmann::json& j) { j["overlap"]["collective_bytes"] = 0; },
       "m.json:/overlap/collective_bytes: expected a number in [1, 1e+15], got 0"},
      {[](nlohmann::json& j) { j["overlap"]["dtype"] = "int8"; },
       "m.json:/overlap/dtype: expected one of bf16, fp16, fp8_e4m3, fp8_e5m2, tf32, got "
       "\"int8\""},
      {[](nlohmann::json& j) { j["overlap"]["samples"] = nlohmann::json::array(); },
       "m.json:/overlap/samples: expected at least 1 element(s)"},
      {[](nlohmann::json& j) { j["overlap"]["samples"][0]["collective"] = "allreduce"; },
       "m.json:/overlap/samples/0/collective: expected one of all_reduce, all_gather, "
       "reduce_scatter, alltoall, broadcast, send_recv, got \"allreduce\""},
      {[](nlohmann::json& j) { j["overlap"]["samples"][1]["time_beside_s"] = 0; },
       "m.json:/overlap/samples/1/time_beside_s: expected a number in [1e-09, 1e+06], got 0"},
      {[](nlohmann::json& j) { j["overlap"]["samples"][0]["sms_taken"] = 132; },
       "m.json:/overlap/samples/0/sms_taken: expected an integer in [0, 131], got 132"},
      {[](nlohmann::json& j) { j["overlap"]["samples"][0]["sms_taken"] = 30; },
       "m.json:/overlap/samples/0/sms_taken: expected round(sms x (1 - time_alone_s / "
       "time_beside_s)) in [0, 131] = 24, got 30"},
      {[](nlohmann::json& j) { j["overlap"]["samples"][1]["time_beside_s"] = 0.9e-3; },
       "m.json:/overlap/samples/1/sms_taken: expected round(sms x (1 - time_alone_s / "
       "time_beside_s)) in [0, 131] = 0, got 22"},
      {[](nlohmann::json& j) { j["overlap"]["sms_taken"] = 24; },
       "m.json:/overlap/sms_taken: expected the median of the samples' sms_taken, 23, got 24"},
      {[](nlohmann::json& j) { j["overlap"]["sms_taken"] = -1; },
       "m.json:/overlap/sms_taken: expected an integer in [0, 131], got -1"},
  };
  for (const auto& [mutate, message] : cases) {
    auto doc = valid_overlap();
    mutate(doc);
    EXPECT_EQ(error_of(doc), message);
  }
}

TEST(MeasurementsTest, DeviceNamesMapToTheCatalog) {
  EXPECT_EQ(catalog_gpu_for_device("NVIDIA A100-SXM4-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(catalog_gpu_for_device("A100-SXM4-40GB"), "A100-SXM4-40GB");
  EXPECT_EQ(catalog_gpu_for_device("NVIDIA A100-SXM-80GB"), "A100-SXM4-80GB");
  EXPECT_EQ(catalog_gpu_for_device("NVIDIA H100 80GB HBM3"), "H100-SXM5-80GB");
  EXPECT_EQ(catalog_gpu_for_device("Tesla V100"), "");
}

}  // namespace
}  // namespace capsim::calibrate
