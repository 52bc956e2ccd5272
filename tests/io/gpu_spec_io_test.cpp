// GPUs described in inputs (new hardware): reading, the catalog that learns them, and writing
// them back exactly. Every test defines GPUs under its own names, since the catalog lives for
// the whole process and the tests of this binary may share one.
#include "io/gpu_spec_io.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "models/extensible_catalog.hpp"

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
    g.hbm_capacity_bytes = x * 1e11;
    g.hbm_bandwidth_bytes_per_s = x * 1e13;
    g.nvlink_bandwidth_bytes_per_s = x * 1e12;
    EXPECT_EQ(read(io::gpu_spec_to_json(g)), g) << x;
  }
  EXPECT_EQ(io::gpu_spec_to_json(read(b200_like("RoundTrip-GPU"))).at("peak_bf16"), "2250TFLOPS");
}

TEST(GpuSpecIoTest, DefinedGpusJoinTheCatalog) {
  const GpuSpec g = read(b200_like("Catalog-GPU"));
  ASSERT_EQ(find_gpu("Catalog-GPU"), nullptr);
  EXPECT_EQ(define_gpu(g), "");
  ASSERT_NE(find_gpu("Catalog-GPU"), nullptr);
  EXPECT_EQ(*find_gpu("Catalog-GPU"), g);
  EXPECT_FALSE(is_builtin_gpu("Catalog-GPU"));
  EXPECT_TRUE(is_builtin_gpu("H100-SXM5-80GB"));
  const auto names = gpu_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "Catalog-GPU"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  // The same figures again change nothing; other figures under that name are refused.
  EXPECT_EQ(define_gpu(g), "");
  GpuSpec other = g;
  other.num_sms = 132;
  EXPECT_EQ(define_gpu(other), "GPU \"Catalog-GPU\" is already defined with other figures");
  GpuSpec builtin = g;
  builtin.name = "A100-SXM4-80GB";
  EXPECT_EQ(define_gpu(builtin),
            "\"A100-SXM4-80GB\" is a built-in GPU; give the definition another name");
}

struct Named {
  std::string name;
  int value = 0;
  bool operator==(const Named& other) const = default;
};

TEST(GpuSpecIoTest, ExtensibleCatalogsStopAtTheirCapacity) {
  static const std::array<Named, 1> kBuiltin{{{"built-in", 0}}};
  ExtensibleCatalog<Named, 2> catalog(kBuiltin);
  EXPECT_EQ(catalog.define({"a", 1}, "GPU"), "");
  EXPECT_EQ(catalog.define({"b", 2}, "GPU"), "");
  EXPECT_EQ(catalog.define({"c", 3}, "GPU"), "more than 2 GPUs defined");
  EXPECT_EQ(catalog.find("c"), nullptr);
  EXPECT_EQ(catalog.find("b")->value, 2);
  EXPECT_EQ(catalog.names(), (std::vector<std::string>{"built-in", "a", "b"}));
}

// Readers scan while a writer defines (the planner's screen threads look GPUs up for every
// candidate): every name a reader finds is fully written, and each is found once defined.
TEST(GpuSpecIoTest, ExtensibleCatalogsReadWhileDefining) {
  static const std::array<Named, 1> kBuiltin{{{"built-in", 0}}};
  ExtensibleCatalog<Named, 64> catalog(kBuiltin);
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        for (int i = 0; i < 64; ++i) {
          const Named* found = catalog.find("entry-" + std::to_string(i));
          if (found != nullptr && found->value != i)
            ++torn;
        }
      }
    });
  }
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(catalog.define({"entry-" + std::to_string(i), i}, "GPU"), "");
  done = true;
  for (auto& reader : readers)
    reader.join();
  EXPECT_EQ(torn.load(), 0);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(catalog.find("entry-" + std::to_string(i))->value, i);
}

// A "gpu" value may be a catalog name or a definition; a definition that clashes is an
// InputError at its name.
TEST(GpuSpecIoTest, NameOrDefinition) {
  const nlohmann::json doc = {{"a", "H100-SXM5-80GB"}, {"b", b200_like("Inline-GPU")}};
  io::JsonReader r(doc, "f.json");
  EXPECT_EQ(io::read_gpu_name_or_definition(r, "a"), "H100-SXM5-80GB");
  EXPECT_EQ(io::read_gpu_name_or_definition(r, "b"), "Inline-GPU");
  EXPECT_NE(find_gpu("Inline-GPU"), nullptr);
  nlohmann::json clash = {{"gpu", b200_like("Inline-GPU")}};
  clash["gpu"]["sms"] = 100;
  io::JsonReader c(clash, "f.json");
  try {
    (void)io::read_gpu_name_or_definition(c, "gpu");
    FAIL() << "a clashing definition was accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.json:/gpu/name: GPU \"Inline-GPU\" is already defined with other figures");
  }
}

TEST(GpuSpecIoTest, ShippedExampleFileLoads) {
  EXPECT_EQ(
      io::load_gpu_definition(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/hardware/b200.json"),
      "B200");
  EXPECT_EQ(find_gpu("B200")->num_sms, 148);
}

TEST(GpuSpecIoTest, FilesNeedTheirSchema) {
  const std::string path = ::testing::TempDir() + "capsim_gpu_no_schema.json";
  {
    std::ofstream out(path);
    out << b200_like("NoSchema-GPU").dump();
  }
  try {
    (void)io::load_gpu_definition(path);
    FAIL() << "a file without schema was accepted";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":/schema: missing required key");
  }
}

// Outputs stay self-contained: a scenario or profile of defined hardware carries its
// definition, one of catalog hardware only the name.
TEST(GpuSpecIoTest, OutputsCarryTheDefinition) {
  EXPECT_EQ(io::gpu_reference_json("H100-SXM5-80GB"), "H100-SXM5-80GB");
  const GpuSpec g = read(b200_like("Output-GPU"));
  ASSERT_EQ(define_gpu(g), "");
  EXPECT_EQ(io::gpu_reference_json("Output-GPU"), io::gpu_spec_to_json(g));

  HardwareProfile p = io::embedded_profile("h100-ib.json");
  p.gpu = "Output-GPU";
  const nlohmann::json written = io::profile_to_json(p);
  EXPECT_EQ(written.at("gpu").at("sms"), 148);
  io::JsonReader r(written, "p.json");
  EXPECT_EQ(io::read_profile(r).gpu, "Output-GPU");
}

}  // namespace
}  // namespace capsim
