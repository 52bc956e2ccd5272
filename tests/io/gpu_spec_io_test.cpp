// GPUs described in inputs (new hardware): reading, the catalog the reading adds them to, and
// writing them back exactly.
#include "io/gpu_spec_io.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "models/catalog.hpp"

#include "io/input_error.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

nlohmann::json b200_like(const std::string& name) {
  return {{"name", name},
          {"architecture", "blackwell"},
          {"peak_bf16", "2250TFLOPS"},
          {"peak_fp8", "4.5PFLOPS"},
          {"hbm_capacity", "180GB"},
          {"hbm_bandwidth", "7.7TBps"},
          {"sms", 148},
          {"nvlink_bandwidth", "900GBps"},
          {"nvls", true}};
}

GpuSpec read(const nlohmann::json& doc) {
  io::JsonReader r(doc, "gpu.json");
  return io::read_gpu_spec(r);
}

TEST(GpuSpecIoTest, ReadsDatasheetFiguresInSiUnits) {
  const GpuSpec g = read(b200_like("Read-B200"));
  EXPECT_EQ(g.name, "Read-B200");
  EXPECT_EQ(g.architecture, "blackwell");
  EXPECT_DOUBLE_EQ(g.peak_bf16_flop_per_s, 2250e12);
  EXPECT_DOUBLE_EQ(g.peak_fp8_flop_per_s, 4.5e15);
  EXPECT_DOUBLE_EQ(g.hbm_capacity_bytes, 180e9);
  EXPECT_DOUBLE_EQ(g.hbm_bandwidth_bytes_per_s, 7.7e12);
  EXPECT_EQ(g.num_sms, 148);
  EXPECT_DOUBLE_EQ(g.nvlink_bandwidth_bytes_per_s, 900e9);
  EXPECT_TRUE(g.has_nvls);
}

// Datasheet conventions for what a definition leaves out: fp16 runs at the bf16 rate, TF32 at
// half of it, no fp8 tensor cores, no NVLink SHARP.
TEST(GpuSpecIoTest, OmittedFiguresTakeTheDatasheetConventions) {
  nlohmann::json doc = b200_like("Defaults-GPU");
  doc.erase("peak_fp8");
  doc.erase("nvls");
  const GpuSpec g = read(doc);
  EXPECT_DOUBLE_EQ(g.peak_fp16_flop_per_s, 2250e12);
  EXPECT_DOUBLE_EQ(g.peak_tf32_flop_per_s, 1125e12);
  EXPECT_EQ(g.peak_fp8_flop_per_s, 0.0);
  EXPECT_DOUBLE_EQ(g.peak_flop_per_s(Precision::kFp8), 2250e12);  // falls back to bf16
  EXPECT_FALSE(g.has_nvls);
}

// Written figures read back bit for bit, awkward decimals included, so a definition copied
// into a profile or a plan's winning scenario defines the very same GPU again.
// A misspelt required figure whose value a later range check rejects: the key problem, never a
// lookup of the missing key (an input the gpu_spec fuzz target draws).
TEST(GpuSpecIoTest, AMisspeltFigureOutOfRangeIsAKeyProblem) {
  nlohmann::json doc = b200_like("X100");
  doc.erase("hbm_capacity");
  doc["hbm_capa/city"] = ".180GB";
  try {
    (void)read(doc);
    FAIL() << "accepted a GPU without hbm_capacity";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "gpu.json:/hbm_capa~1city: unknown key \"hbm_capa/city\"; did you mean "
              "\"hbm_capacity\"?");
  }
}

TEST(GpuSpecIoTest, WriteReadIsExact) {
  GpuSpec g = read(b200_like("RoundTrip-GPU"));
  for (const double x : {1.0 / 3.0, 0.1, 1.23456789012345, 7.7, 2.0 / 7.0}) {
    g.peak_bf16_flop_per_s = x * 1e15;
    g.peak_fp16_flop_per_s = x * 3e14;
    g.peak_tf32_flop_per_s = x * 1e14;
    g.peak_fp8_flop_per_s = x * 2e15;
    g.peak_fp4_flop_per_s = x * 4e15;
    g.hbm_capacity_bytes = x * 1e11;
    g.hbm_bandwidth_bytes_per_s = x * 1e13;
    g.nvlink_bandwidth_bytes_per_s = x * 1e12;
    EXPECT_EQ(read(io::gpu_spec_to_json(g)), g) << x;
  }
  EXPECT_EQ(io::gpu_spec_to_json(read(b200_like("RoundTrip-GPU"))).at("peak_bf16"), "2250TFLOPS");
}

// peak_fp4 is read when given and written only when the GPU has fp4 tensor cores.
TEST(GpuSpecIoTest, Fp4PeakIsOptional) {
  nlohmann::json doc = b200_like("Fp4-GPU");
  EXPECT_EQ(read(doc).peak_fp4_flop_per_s, 0.0);
  EXPECT_FALSE(io::gpu_spec_to_json(read(doc)).contains("peak_fp4"));
  doc["peak_fp4"] = "9PFLOPS";
  const GpuSpec g = read(doc);
  EXPECT_DOUBLE_EQ(g.peak_fp4_flop_per_s, 9e15);
  EXPECT_DOUBLE_EQ(g.peak_flop_per_s(Precision::kNvfp4), 9e15);
  EXPECT_EQ(io::gpu_spec_to_json(g).at("peak_fp4"), "9000TFLOPS");
}

// A "gpu" value may be a catalog name or a definition; a definition that clashes is an
// InputError at its name.
TEST(GpuSpecIoTest, NameOrDefinition) {
  const nlohmann::json doc = {{"a", "H100-SXM5-80GB"}, {"b", b200_like("Inline-GPU")}};
  io::JsonReader r(doc, "f.json");
  Catalog catalog;
  EXPECT_EQ(io::read_gpu_name_or_definition(r, "a", catalog),
            *builtin_catalog().find_gpu("H100-SXM5-80GB"));
  EXPECT_EQ(io::read_gpu_name_or_definition(r, "b", catalog).name, "Inline-GPU");
  EXPECT_NE(catalog.find_gpu("Inline-GPU"), nullptr);
  nlohmann::json clash = {{"gpu", b200_like("Inline-GPU")}};
  clash["gpu"]["sms"] = 100;
  io::JsonReader c(clash, "f.json");
  try {
    (void)io::read_gpu_name_or_definition(c, "gpu", catalog);
    FAIL() << "a clashing definition was accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.json:/gpu/name: GPU \"Inline-GPU\" is already defined with other figures");
  }
}

TEST(GpuSpecIoTest, ShippedExampleFileLoads) {
  Catalog catalog;
  EXPECT_EQ(io::load_gpu_definition(
                std::string(CAPSIM_SOURCE_DIR) + "/scenarios/hardware/b200.json", catalog)
                .name,
            "B200");
  EXPECT_EQ(catalog.find_gpu("B200")->num_sms, 148);
}

TEST(GpuSpecIoTest, FilesNeedTheirSchema) {
  const std::string path = ::testing::TempDir() + "capsim_gpu_no_schema.json";
  {
    std::ofstream out(path);
    out << b200_like("NoSchema-GPU").dump();
  }
  try {
    Catalog catalog;
    (void)io::load_gpu_definition(path, catalog);
    FAIL() << "a file without schema was accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":/schema: missing required key");
  }
}

// Outputs stay self-contained: a scenario or profile of defined hardware carries its
// definition, one of catalog hardware only the name.
TEST(GpuSpecIoTest, OutputsCarryTheDefinition) {
  EXPECT_EQ(io::gpu_reference_json(*builtin_catalog().find_gpu("H100-SXM5-80GB")),
            "H100-SXM5-80GB");
  const GpuSpec g = read(b200_like("Output-GPU"));
  EXPECT_EQ(io::gpu_reference_json(g), io::gpu_spec_to_json(g));

  HardwareProfile p = io::embedded_profile("h100-ib.json");
  p.gpu = g;
  const nlohmann::json written = io::profile_to_json(p);
  EXPECT_EQ(written.at("gpu").at("sms"), 148);
  io::JsonReader r(written, "p.json");
  EXPECT_EQ(io::read_profile(r).gpu, g);
}

// Reading a file that defines a GPU adds it to the catalog it was given and to no other: another
// input read into another catalog may define that name with other figures, and the built-ins
// never change.
TEST(GpuSpecIoTest, ReadingADefinitionChangesOnlyTheCatalogGiven) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "capsim_gpu_spec_catalogs";
  std::filesystem::create_directories(dir);
  const auto scenario_on = [&](const std::string& file, int sms) {
    nlohmann::json gpu = b200_like("Scoped-GPU");
    gpu["sms"] = sms;
    const nlohmann::json s = {{"schema", "capsim.scenario/v1"},
                              {"model",
                               {{"num_layers", 24},
                                {"hidden_size", 2048},
                                {"num_attention_heads", 16},
                                {"seq_length", 2048},
                                {"vocab_size", 51200}}},
                              {"cluster", {{"gpu", gpu}, {"gpus_per_node", 8}, {"num_nodes", 1}}},
                              {"parallelism",
                               {{"tensor", 1},
                                {"pipeline", 1},
                                {"data", 8},
                                {"micro_batch_size", 1},
                                {"global_batch_size", 64}}}};
    std::ofstream((dir / file).string()) << s.dump();
    return (dir / file).string();
  };
  const std::string first = scenario_on("first.json", 148);
  const std::string second = scenario_on("second.json", 100);

  Catalog one;
  Catalog other;
  EXPECT_EQ(io::load_scenario(first, one).cluster.gpu.num_sms, 148);
  ASSERT_NE(one.find_gpu("Scoped-GPU"), nullptr);
  EXPECT_EQ(other.find_gpu("Scoped-GPU"), nullptr);
  EXPECT_EQ(builtin_catalog().find_gpu("Scoped-GPU"), nullptr);
  EXPECT_EQ(builtin_catalog().gpu_names().size(), builtin_gpus().size());

  EXPECT_EQ(io::load_scenario(second, other).cluster.gpu.num_sms, 100);
  EXPECT_EQ(one.find_gpu("Scoped-GPU")->num_sms, 148);
  EXPECT_EQ(other.find_gpu("Scoped-GPU")->num_sms, 100);
  // Read without a catalog, each file has one of its own.
  EXPECT_EQ(io::load_scenario(second).cluster.gpu.num_sms, 100);
  EXPECT_EQ(io::load_scenario(first).cluster.gpu.num_sms, 148);
  // One catalog still refuses the name with other figures.
  try {
    (void)io::load_scenario(second, one);
    FAIL() << "one catalog took two definitions of one name";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              second +
                  ":/cluster/gpu/name: GPU \"Scoped-GPU\" is already defined with other "
                  "figures");
  }
}

}  // namespace
}  // namespace capsim
