// The low-precision recipe names in scenarios: read, written back, and the GPUs that run them.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "tests/io/read_doc.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kTestDataDir;
using capsim::testing::read_doc;

// valid.json's layout on eight-GPU B200 nodes of the built-in catalog.
nlohmann::json b200_doc(const std::string& precision) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["cluster"]["gpu"] = "B200-SXM-180GB";
  doc["cluster"].erase("intra_node");
  doc["parallelism"]["precision"] = precision;
  return doc;
}

TEST(ScenarioPrecisionTest, EveryRecipeNameRoundTrips) {
  for (const char* name : {"bf16", "fp16", "fp8", "fp8-cs", "fp8-blockwise", "mxfp8", "nvfp4"}) {
    const Scenario s = read_doc(b200_doc(name));
    EXPECT_EQ(std::string(to_string(s.parallelism.precision)), name);
    const nlohmann::json written = io::scenario_to_json(s);
    EXPECT_EQ(written.at("parallelism").at("precision"), name);
    EXPECT_EQ(written.at("cluster").at("gpu"), "B200-SXM-180GB");
    const Scenario again = read_doc(written);
    EXPECT_EQ(again.parallelism, s.parallelism) << name;
    EXPECT_EQ(again.cluster.gpu, s.cluster.gpu) << name;
  }
}

TEST(ScenarioPrecisionTest, Fp8ParametersNeedAnFp8Recipe) {
  for (const char* name : {"fp8", "fp8-cs", "fp8-blockwise", "mxfp8"}) {
    nlohmann::json doc = b200_doc(name);
    doc["parallelism"]["fp8_params"] = true;
    EXPECT_TRUE(read_doc(doc).parallelism.fp8_params) << name;
  }
  nlohmann::json doc = b200_doc("nvfp4");
  doc["parallelism"]["fp8_params"] = true;
  try {
    (void)read_doc(doc);
    ADD_FAILURE() << "nvfp4 with fp8_params was accepted";
  } catch (const io::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("doc.json:/parallelism/fp8_params: "), std::string::npos)
        << e.what();
  }
}

TEST(ScenarioPrecisionTest, ABlockScaledRecipeOnHopperIsRejected) {
  nlohmann::json doc = b200_doc("mxfp8");
  doc["cluster"]["gpu"] = "H200-SXM-141GB";
  try {
    (void)read_doc(doc);
    ADD_FAILURE() << "mxfp8 on H200 was accepted";
  } catch (const io::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("doc.json:/parallelism/precision: precision \"mxfp8\" "
                                         "needs tensor cores with hardware block scaling"),
              std::string::npos)
        << e.what();
  }
  doc["parallelism"]["precision"] = "fp8-blockwise";
  EXPECT_EQ(read_doc(doc).parallelism.precision, Precision::kFp8Blockwise);
}

}  // namespace
}  // namespace capsim
