#include "calibrate/measurements.hpp"

#include <string>

#include <gtest/gtest.h>

#include "calibrate/profile_fit.hpp"
#include "models/io/input_error.hpp"

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

std::string error_of(const nlohmann::json& doc) {
  try {
    (void)read_measurements_json(doc, "m.json");
  } catch (const InputError& e) {
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
  doc["nccl"][0]["samples"][1]["bytes"] = 8;
  EXPECT_EQ(error_of(doc), "m.json:/nccl/0/samples/1/bytes: sizes must increase within a curve");
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
            "m.json:/: no measurements: expected a non-empty \"nccl\" or \"gemm\" array");
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
