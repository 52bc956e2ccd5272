// cluster.nvlink_domain: its default, what it accepts, and that it is written back only when set.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "tests/io/read_doc.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kTestDataDir;
using capsim::testing::read_doc;

// valid.json: 4 nodes of 8 GPUs, TP 4 x PP 2 x DP 4.
nlohmann::json valid_doc() {
  return io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
}

TEST(ScenarioNvlinkDomainTest, DefaultsToTheNodeAndIsNotWritten) {
  const Scenario s = read_doc(valid_doc());
  EXPECT_EQ(s.cluster.nvlink_domain, 0);
  EXPECT_EQ(s.cluster.nvlink_domain_gpus(), 8);
  EXPECT_FALSE(io::scenario_to_json(s).at("cluster").contains("nvlink_domain"));
}

TEST(ScenarioNvlinkDomainTest, DomainOfWholeNodesReadsAndRoundTrips) {
  nlohmann::json doc = valid_doc();
  doc["cluster"]["nvlink_domain"] = 16;
  const Scenario s = read_doc(doc);
  EXPECT_EQ(s.cluster.nvlink_domain, 16);
  EXPECT_EQ(s.cluster.nvlink_domain_gpus(), 16);
  const nlohmann::json written = io::scenario_to_json(s);
  EXPECT_EQ(written.at("cluster").at("nvlink_domain"), 16);
  EXPECT_EQ(read_doc(written).cluster, s.cluster);
}

// A job of 64 GPUs on trays of 4 inside one NVL72 rack: the job fits in one domain.
TEST(ScenarioNvlinkDomainTest, JobInsideOneDomainNeedNotFillIt) {
  nlohmann::json doc = valid_doc();
  doc["cluster"]["gpus_per_node"] = 4;
  doc["cluster"]["num_nodes"] = 8;
  doc["cluster"]["inter_node"]["nics_per_node"] = 4;
  doc["cluster"]["nvlink_domain"] = 72;
  EXPECT_EQ(read_doc(doc).cluster.nvlink_domain_gpus(), 72);
}

TEST(ScenarioNvlinkDomainTest, NonPositiveDomainIsRejectedAtItsPointer) {
  nlohmann::json doc = valid_doc();
  doc["cluster"]["nvlink_domain"] = 0;
  try {
    (void)read_doc(doc);
    FAIL() << "nvlink_domain 0 was accepted";
  } catch (const io::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("doc.json:/cluster/nvlink_domain:"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace capsim

namespace capsim {
namespace {

// valid.json's layout (TP 4 x PP 2 x DP 4, 32 GPUs) on a catalog NVL72 tray instance.
nlohmann::json tray_doc(int trays) {
  nlohmann::json doc = io::JsonReader::parse_file(kTestDataDir + "/scenarios/valid.json");
  doc["cluster"] = {{"instance", "gb200-nvl72"}, {"num_nodes", trays}};
  doc["parallelism"]["data"] = trays * 4 / 8;
  doc["parallelism"]["global_batch_size"] = trays * 4 / 8 * 8;
  return doc;
}

// An NVL72 tray instance brings its rack's domain; a job that neither fits in one rack nor
// fills whole racks must say which domain it has.
TEST(ScenarioNvlinkDomainTest, TrayInstanceBringsItsRacksDomain) {
  EXPECT_EQ(read_doc(tray_doc(8)).cluster.nvlink_domain, 72);
  EXPECT_EQ(read_doc(tray_doc(36)).cluster.nvlink_domain, 72);
  try {
    (void)read_doc(tray_doc(20));
    FAIL() << "80 GPUs on 72-GPU racks";
  } catch (const io::InputError& e) {
    EXPECT_EQ(e.pointer(), "/cluster/num_nodes");
    EXPECT_NE(std::string(e.what()).find("give cluster.nvlink_domain"), std::string::npos)
        << e.what();
  }
  nlohmann::json explicit_domain = tray_doc(20);
  explicit_domain["cluster"]["nvlink_domain"] = 16;
  EXPECT_EQ(read_doc(explicit_domain).cluster.nvlink_domain, 16);
}

}  // namespace
}  // namespace capsim
