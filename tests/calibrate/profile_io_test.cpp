#include "io/profile_io.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/collective_cost.hpp"
#include "models/datasheet_profile.hpp"
#include "models/gpu_catalog.hpp"
#include "models/training_stack.hpp"

#include "io/in_situ_prior.hpp"
#include "io/input_error.hpp"
#include "io/text_format.hpp"

namespace capsim {
namespace {

// A small valid profile; each rule test breaks one thing.
nlohmann::json valid_profile() {
  return nlohmann::json::parse(R"({
    "schema": "capsim.profile/v1", "name": "t", "gpu": "A100-SXM4-80GB", "fabric": "efa",
    "reference_node_nic_bandwidth": "50GBps", "per_microbatch_overhead": "0us",
    "datasheet_default": false,
    "gemm": {"max_efficiency": 0.8, "k_half": 64, "launch_overhead": "6us",
             "memory_efficiency": 0.8, "misaligned_64": 0.9, "misaligned_8": 0.7},
    "attention": {"forward_efficiency_hd128": 0.7, "forward_efficiency_hd64": 0.55,
                  "backward_efficiency_hd128": 0.55, "backward_efficiency_hd64": 0.42},
    "collectives": [
      {"collective": "all_reduce", "scope": "intra_node", "mape_pct": 1.5, "algorithms": [
        {"algorithm": "ring", "base_latency": "8.4us", "intra_step_latency": "3.4us",
         "inter_step_latency": "0us", "bus_bandwidth": "230GBps"}]},
      {"collective": "all_reduce", "scope": "inter_node", "algorithms": [
        {"algorithm": "tree", "base_latency": "6.8us", "intra_step_latency": "0.6us",
         "inter_step_latency": "80us", "bus_bandwidth": "76GBps"}]}],
    "provenance": ["test"],
    "fit_quality": [{"curve": "c", "source": "s", "points": 3, "points_large": 1,
                     "mape_pct": 1, "mape_large_pct": 2, "max_abs_error_pct": 3}]
  })");
}

std::string error_of(const nlohmann::json& doc) {
  try {
    io::JsonReader reader(doc, "p.json");
    (void)io::read_profile(reader);
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ProfileIoTest, ReadsValidProfile) {
  const nlohmann::json doc = valid_profile();
  io::JsonReader reader(doc, "p.json");
  const HardwareProfile p = io::read_profile(reader);
  EXPECT_EQ(p.gpu.name, "A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(p.reference_node_nic_bandwidth_bytes_per_s, 50e9);
  ASSERT_EQ(p.collectives.size(), 2U);
  EXPECT_DOUBLE_EQ(p.collectives[0].algorithms[0].base_latency_s, 8.4e-6);
  EXPECT_DOUBLE_EQ(p.collectives[0].algorithms[0].bus_bandwidth_bytes_per_s, 230e9);
  EXPECT_EQ(p.collectives[1].algorithms[0].algorithm, CollectiveAlgorithm::kTree);
  EXPECT_DOUBLE_EQ(p.gemm.launch_overhead_s, 6e-6);
  ASSERT_EQ(p.fit_quality.size(), 1U);
  EXPECT_EQ(p.fit_quality[0].points_large, 1);
}

TEST(ProfileIoTest, WriteReadWriteIsByteStable) {
  const nlohmann::json doc = valid_profile();
  io::JsonReader reader(doc, "p.json");
  const HardwareProfile p = io::read_profile(reader);
  const std::string first = io::profile_to_text(p);
  const nlohmann::json again = io::JsonReader::parse_text(first, "again.json");
  io::JsonReader reader2(again, "again.json");
  EXPECT_EQ(io::profile_to_text(io::read_profile(reader2)), first);
}

TEST(ProfileIoTest, ShippedProfilesRoundTripByteForByte) {
  ASSERT_EQ(io::embedded_profiles().size(), 5U);
  for (const auto& e : io::embedded_profiles()) {
    const HardwareProfile p = io::embedded_profile(std::string(e.file));
    EXPECT_EQ(io::profile_to_text(p), std::string(e.text)) << e.file;
    // The embedded copy is the file in scenarios/profiles/.
    std::ifstream in(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/" + std::string(e.file));
    std::stringstream file;
    file << in.rdbuf();
    EXPECT_EQ(file.str(), std::string(e.text)) << e.file;
    EXPECT_FALSE(p.is_datasheet_default);
    EXPECT_FALSE(p.provenance.empty());
  }
}

TEST(ProfileIoTest, RoundTripsEveryFittedNumberToSixDigits) {
  HardwareProfile p = io::embedded_profile("h100-efa.json");
  p.collectives[0].algorithms[0].bus_bandwidth_bytes_per_s = 123.456789e9;
  p.gemm.k_half = 77.7777777;
  const nlohmann::json doc = io::profile_to_json(p);
  io::JsonReader reader(doc, "x.json");
  const HardwareProfile q = io::read_profile(reader);
  EXPECT_NEAR(q.collectives[0].algorithms[0].bus_bandwidth_bytes_per_s, 123.457e9, 1.0);
  EXPECT_DOUBLE_EQ(q.gemm.k_half, 77.7778);
}

// A profile's tensor speed is written only where it is not 1 (the shipped profiles' text stays
// as it is) and reads back to six digits.
TEST(ProfileIoTest, TensorSpeedIsWrittenWhereItIsNotOne) {
  HardwareProfile p = io::embedded_profile("h100-ib.json");
  EXPECT_FALSE(io::profile_to_json(p).contains("tensor_speed"));
  p.tensor_speed = 1.234567891;
  const nlohmann::json doc = io::profile_to_json(p);
  io::JsonReader reader(doc, "x.json");
  EXPECT_DOUBLE_EQ(io::read_profile(reader).tensor_speed, 1.23457);
}

struct Rule {
  const char* name;
  void (*mutate)(nlohmann::json&);
  const char* message;
};

const Rule kRules[] = {
    {"schema", [](nlohmann::json& j) { j["schema"] = "capsim.profile/v2"; },
     "p.json:/schema: expected \"capsim.profile/v1\", got \"capsim.profile/v2\""},
    {"unknown_key", [](nlohmann::json& j) { j["bogus"] = 1; },
     "p.json:/bogus: unknown key \"bogus\"; allowed keys: attention, collective_sms, "
     "collectives, datasheet_default, fabric, fit_quality, gemm, gpu, name, "
     "per_microbatch_overhead, provenance, reference_node_nic_bandwidth, schema, "
     "software_efficiency, tensor_speed"},
    {"gpu", [](nlohmann::json& j) { j["gpu"] = "V100"; },
     "p.json:/gpu: unknown GPU \"V100\"; known GPUs: A100-SXM4-40GB, A100-SXM4-80GB, "
     "A800-SXM4-80GB, B200-SXM-180GB, B300-SXM-288GB, GB200-NVL-186GB, GB300-NVL-288GB, "
     "H100-SXM5-80GB, H200-SXM-141GB, H800-SXM5-80GB (or describe new hardware with an object, "
     "docs/scenario.md)"},
    {"fabric", [](nlohmann::json& j) { j["fabric"] = "myrinet"; },
     "p.json:/fabric: expected one of nvswitch, infiniband, roce, efa, ethernet, omni-path, "
     "slingshot, tcpx, tcpxo, got \"myrinet\""},
    {"bare_bandwidth",
     [](nlohmann::json& j) { j["collectives"][0]["algorithms"][0]["bus_bandwidth"] = 230; },
     "p.json:/collectives/0/algorithms/0/bus_bandwidth: expected a bandwidth like \"200Gbps\", "
     "got 230"},
    {"bad_latency",
     [](nlohmann::json& j) { j["collectives"][0]["algorithms"][0]["base_latency"] = "fast"; },
     "p.json:/collectives/0/algorithms/0/base_latency: expected a duration like \"30d\", got "
     "\"fast\""},
    {"latency_too_large",
     [](nlohmann::json& j) { j["collectives"][0]["algorithms"][0]["base_latency"] = "20s"; },
     "p.json:/collectives/0/algorithms/0/base_latency: expected at most 10s, got 2e+07us"},
    {"intra_with_inter_latency",
     [](nlohmann::json& j) { j["collectives"][0]["algorithms"][0]["inter_step_latency"] = "3us"; },
     "p.json:/collectives/0/algorithms/0/inter_step_latency: must be 0us in an intra_node fit, "
     "got 3us"},
    {"algorithm",
     [](nlohmann::json& j) { j["collectives"][0]["algorithms"][0]["algorithm"] = "pat"; },
     "p.json:/collectives/0/algorithms/0/algorithm: expected one of ring, tree, nvls, got \"pat\""},
    {"nvls_on_ampere",
     [](nlohmann::json& j) { j["collectives"][0]["algorithms"][0]["algorithm"] = "nvls"; },
     "p.json:/collectives/0/algorithms/0/algorithm: nvls needs a GPU with NVLink SHARP; "
     "A100-SXM4-80GB has none"},
    {"collective", [](nlohmann::json& j) { j["collectives"][0]["collective"] = "allreduce"; },
     "p.json:/collectives/0/collective: expected one of all_reduce, all_gather, reduce_scatter, "
     "alltoall, broadcast, send_recv, got \"allreduce\""},
    {"scope", [](nlohmann::json& j) { j["collectives"][0]["scope"] = "global"; },
     "p.json:/collectives/0/scope: expected one of intra_node, inter_node, got \"global\""},
    {"duplicate", [](nlohmann::json& j) { j["collectives"][1]["scope"] = "intra_node"; },
     "p.json:/collectives/1/collective: duplicate fit for all_reduce intra_node (also at "
     "/collectives/0)"},
    {"no_algorithms",
     [](nlohmann::json& j) { j["collectives"][0]["algorithms"] = nlohmann::json::array(); },
     "p.json:/collectives/0/algorithms: expected at least 1 element(s)"},
    {"no_collectives", [](nlohmann::json& j) { j["collectives"] = nlohmann::json::array(); },
     "p.json:/collectives: expected at least 1 element(s)"},
    {"missing_nic", [](nlohmann::json& j) { j.erase("reference_node_nic_bandwidth"); },
     "p.json:/reference_node_nic_bandwidth: required when the profile has inter_node fits"},
    {"efficiency_range", [](nlohmann::json& j) { j["gemm"]["max_efficiency"] = 1.2; },
     "p.json:/gemm/max_efficiency: expected a number in [0.001, 1], got 1.2"},
    {"fp8_efficiency_range", [](nlohmann::json& j) { j["gemm"]["fp8_max_efficiency"] = 0; },
     "p.json:/gemm/fp8_max_efficiency: expected a number in [0.001, 1], got 0"},
    {"launch_overhead", [](nlohmann::json& j) { j["gemm"]["launch_overhead"] = 6; },
     "p.json:/gemm/launch_overhead: expected a duration like \"30d\", got 6"},
    {"attention_range", [](nlohmann::json& j) { j["attention"]["forward_efficiency_hd64"] = 0; },
     "p.json:/attention/forward_efficiency_hd64: expected a number in [0.001, 1], got 0"},
    {"missing_gemm", [](nlohmann::json& j) { j.erase("gemm"); },
     "p.json:/gemm: missing required key"},
    {"provenance_type", [](nlohmann::json& j) { j["provenance"][0] = 3; },
     "p.json:/provenance/0: expected a string, got 3"},
    {"collective_sms_range", [](nlohmann::json& j) { j["collective_sms"] = 108; },
     "p.json:/collective_sms: expected an integer in [0, 107], got 108"},
    {"collective_sms_type", [](nlohmann::json& j) { j["collective_sms"] = "24"; },
     "p.json:/collective_sms: expected an integer, got \"24\""},
    {"software_efficiency_range", [](nlohmann::json& j) { j["software_efficiency"] = 0.05; },
     "p.json:/software_efficiency: expected a number in [0.1, 2], got 0.05"},
    {"tensor_speed_range", [](nlohmann::json& j) { j["tensor_speed"] = 3; },
     "p.json:/tensor_speed: expected a number in [0.5, 2], got 3"},
    {"no_intra_all_reduce", [](nlohmann::json& j) { j["collectives"].erase(0); },
     "p.json:/collectives: needs an all_reduce intra_node fit (the fallback for the other "
     "collectives)"},
    {"no_inter_all_reduce",
     [](nlohmann::json& j) { j["collectives"][1]["collective"] = "all_gather"; },
     "p.json:/collectives: needs an all_reduce inter_node fit (the fallback for the other "
     "collectives)"},
    {"microbatch_overhead_too_large",
     [](nlohmann::json& j) { j["per_microbatch_overhead"] = "20s"; },
     "p.json:/per_microbatch_overhead: expected at most 10s, got 2e+07us"},
    {"fit_points", [](nlohmann::json& j) { j["fit_quality"][0]["points_large"] = 4; },
     "p.json:/fit_quality/0/points_large: expected an integer in [0, 3], got 4"},
};

class ProfileRuleTest : public ::testing::TestWithParam<Rule> {};

TEST_P(ProfileRuleTest, ExactMessage) {
  nlohmann::json doc = valid_profile();
  GetParam().mutate(doc);
  EXPECT_EQ(error_of(doc), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Rules, ProfileRuleTest, ::testing::ValuesIn(kRules),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(ProfileIoTest, LoadProfileNamesFileOnSyntaxErrors) {
  try {
    (void)io::load_profile(std::string(CAPSIM_TEST_DATA_DIR) + "/nccl_bad/empty_allreduce.txt");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_EQ(e.file(), std::string(CAPSIM_TEST_DATA_DIR) + "/nccl_bad/empty_allreduce.txt");
  }
}

Scenario scenario_on(const GpuSpec& gpu, bool inter, Fabric fabric) {
  Scenario s;
  s.name = "s.json";
  s.cluster.gpu = gpu;
  s.cluster.has_inter_node = inter;
  s.cluster.inter_node_fabric = fabric;
  s.cluster.num_nodes = inter ? 4 : 1;
  s.cluster.nics_per_node = 4;
  s.cluster.nic_bandwidth_bytes_per_s = 12.5e9;
  s.cluster.intra_node_bandwidth_bytes_per_s = 300e9;
  return s;
}

Scenario scenario_on(const std::string& builtin_gpu, bool inter, Fabric fabric) {
  return scenario_on(*builtin_catalog().find_gpu(builtin_gpu), inter, fabric);
}

TEST(ResolveProfileTest, PicksShippedProfileByFamilyAndFabric) {
  EXPECT_EQ(io::resolve_profile(scenario_on("A100-SXM4-40GB", true, Fabric::kEfa)).name,
            "a100-efa");
  EXPECT_EQ(io::resolve_profile(scenario_on("A100-SXM4-80GB", true, Fabric::kInfiniband)).name,
            "a100-ib");
  EXPECT_EQ(io::resolve_profile(scenario_on("A100-SXM4-80GB", true, Fabric::kRoce)).name,
            "a100-roce");
  EXPECT_EQ(io::resolve_profile(scenario_on("H100-SXM5-80GB", true, Fabric::kEfa)).name,
            "h100-efa");
  EXPECT_EQ(io::resolve_profile(scenario_on("H200-SXM-141GB", true, Fabric::kInfiniband)).name,
            "h100-ib");
  // Single node without an inter-node section: the family's InfiniBand profile.
  EXPECT_EQ(io::resolve_profile(scenario_on("H100-SXM5-80GB", false, Fabric::kInfiniband)).name,
            "h100-ib");
  // No shipped profile for H100 + RoCE or any GPU + Ethernet: the family's kernels with the
  // datasheet network.
  EXPECT_EQ(io::resolve_profile(scenario_on("H100-SXM5-80GB", true, Fabric::kRoce)).name,
            "h100-ib+datasheet-roce");
  EXPECT_EQ(io::resolve_profile(scenario_on("A100-SXM4-40GB", true, Fabric::kEthernet)).name,
            "a100-ib+datasheet-ethernet");
}

// H800 is H100 with NVLink cut to 200 GB/s per direction: it takes the H100 profile, whose
// intra-node fits (measured at H100's 450 GB/s) are scaled to its links; a large all-reduce
// inside the node takes 450/200 as long, the inter-node fits stay.
TEST(ResolveProfileTest, H800TakesTheH100ProfileWithItsNvlink) {
  Scenario h800 = scenario_on("H800-SXM5-80GB", true, Fabric::kInfiniband);
  Scenario h100 = scenario_on("H100-SXM5-80GB", true, Fabric::kInfiniband);
  h800.cluster.intra_node_bandwidth_bytes_per_s = 200e9;
  h100.cluster.intra_node_bandwidth_bytes_per_s = 450e9;
  const HardwareProfile p800 = io::resolve_profile(h800);
  const HardwareProfile p100 = io::resolve_profile(h100);
  EXPECT_EQ(p800.name, "h100-ib");
  EXPECT_EQ(p800.software_efficiency, p100.software_efficiency);
  GroupShape node;
  node.ranks = 8;
  node.ranks_per_node = 8;
  node.nodes = 1;
  const double bytes = 64e9;
  EXPECT_NEAR(collective_time_s(p800, CollectiveKind::kAllReduce, bytes, node) /
                  collective_time_s(p100, CollectiveKind::kAllReduce, bytes, node),
              450.0 / 200.0, 0.01);
}

// Kernels and NVLink belong to the GPU and the stack: a fabric without a measurement of its own
// changes only the inter-node fits, which come from the datasheet model at the cluster's NICs.
TEST(ResolveProfileTest, AFabricWithoutMeasurementsKeepsTheFamilysKernels) {
  const Scenario roce = scenario_on("H100-SXM5-80GB", true, Fabric::kRoce);
  const HardwareProfile p = io::resolve_profile(roce);
  const HardwareProfile ib =
      io::resolve_profile(scenario_on("H100-SXM5-80GB", true, Fabric::kInfiniband));
  EXPECT_FALSE(p.is_datasheet_default);
  EXPECT_TRUE(p.has_datasheet_network);
  EXPECT_FALSE(ib.has_datasheet_network);
  EXPECT_EQ(p.fabric, "roce");
  EXPECT_EQ(p.software_efficiency, ib.software_efficiency);
  EXPECT_EQ(p.gemm.max_efficiency, ib.gemm.max_efficiency);
  EXPECT_EQ(p.gemm.k_half, ib.gemm.k_half);
  EXPECT_EQ(p.attention.forward_efficiency_hd128, ib.attention.forward_efficiency_hd128);
  EXPECT_EQ(p.reference_node_nic_bandwidth_bytes_per_s, 4 * 12.5e9);

  std::vector<CollectiveFit> intra_ib;
  std::copy_if(ib.collectives.begin(), ib.collectives.end(), std::back_inserter(intra_ib),
               [](const CollectiveFit& f) { return !f.inter_node; });
  std::vector<CollectiveFit> intra;
  std::vector<CollectiveFit> inter;
  for (const CollectiveFit& f : p.collectives)
    (f.inter_node ? inter : intra).push_back(f);
  ASSERT_EQ(intra.size(), intra_ib.size());
  for (size_t i = 0; i < intra.size(); ++i) {
    EXPECT_EQ(intra[i].kind, intra_ib[i].kind);
    EXPECT_EQ(intra[i].algorithms.size(), intra_ib[i].algorithms.size());
  }
  const std::vector<CollectiveFit> datasheet = datasheet_inter_node_fits(roce.cluster);
  ASSERT_EQ(inter.size(), datasheet.size());
  for (size_t i = 0; i < inter.size(); ++i) {
    EXPECT_EQ(inter[i].kind, datasheet[i].kind);
    EXPECT_EQ(inter[i].algorithms.front().bus_bandwidth_bytes_per_s,
              datasheet[i].algorithms.front().bus_bandwidth_bytes_per_s);
  }
  for (const FitRecord& r : p.fit_quality)
    EXPECT_EQ(r.curve.find("inter_node"), std::string::npos) << r.curve;
  EXPECT_FALSE(p.fit_quality.empty());
  EXPECT_NE(p.provenance.back().find("datasheet model for roce"), std::string::npos);
}

// A GPU a scenario defines is not the hardware any shipped profile measured.
TEST(ResolveProfileTest, ADefinedGpuGetsItsDatasheetProfile) {
  GpuSpec gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  gpu.name = "resolve-test-h100";
  EXPECT_TRUE(
      io::resolve_profile(scenario_on(gpu, true, Fabric::kInfiniband)).is_datasheet_default);
}

// The in-situ loss belongs to the training stacks, fitted on every shipped family: hardware no
// step was measured on borrows it, its family's when capsim ships one, else the families' mean,
// so a plan compares it with the catalog's GPUs at the same stack speed.
TEST(ResolveProfileTest, ADefinedGpuBorrowsTheShippedInSituFactor) {
  const double a100 = io::embedded_profile("a100-ib.json").software_efficiency;
  const double h100 = io::embedded_profile("h100-ib.json").software_efficiency;
  ASSERT_LT(a100, 1.0);
  ASSERT_LT(h100, 1.0);
  ASSERT_NE(a100, h100);  // else the mean could not be told from either

  GpuSpec hopper = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  hopper.name = "prior-test-hopper";
  const HardwareProfile own_family =
      io::resolve_profile(scenario_on(hopper, true, Fabric::kInfiniband));
  EXPECT_EQ(own_family.software_efficiency, h100);
  EXPECT_NE(own_family.provenance.back().find("borrowed from the shipped h100-ib.json"),
            std::string::npos)
      << own_family.provenance.back();

  // Blackwell has no shipped kernel profile but a factor fitted to published runs on it.
  GpuSpec blackwell = hopper;
  blackwell.name = "prior-test-blackwell";
  blackwell.architecture = "blackwell";
  const HardwareProfile fitted =
      io::resolve_profile(scenario_on(blackwell, true, Fabric::kInfiniband));
  EXPECT_EQ(fitted.software_efficiency, io::in_situ_prior("blackwell").factor);
  EXPECT_NE(fitted.provenance.back().find("the blackwell family's, fitted to published runs"),
            std::string::npos)
      << fitted.provenance.back();
  // A stack whose published Blackwell runs fitted a factor of its own gets it; another stack
  // gets the family's.
  Scenario on_blackwell = scenario_on(blackwell, true, Fabric::kInfiniband);
  on_blackwell.stack = find_training_stack("megatron-bridge");
  const HardwareProfile bridge = io::resolve_profile(on_blackwell);
  EXPECT_EQ(bridge.software_efficiency, io::in_situ_prior("blackwell", "megatron-bridge").factor);
  EXPECT_NE(bridge.software_efficiency, fitted.software_efficiency);
  EXPECT_NE(bridge.provenance.back().find("fitted to published megatron-bridge runs"),
            std::string::npos)
      << bridge.provenance.back();
  on_blackwell.stack = find_training_stack("nemo");
  EXPECT_EQ(io::resolve_profile(on_blackwell).software_efficiency, fitted.software_efficiency);

  GpuSpec unknown = hopper;
  unknown.name = "prior-test-next";
  unknown.architecture = "next-generation";
  const HardwareProfile other =
      io::resolve_profile(scenario_on(unknown, true, Fabric::kInfiniband));
  EXPECT_NEAR(other.software_efficiency, std::sqrt(a100 * h100), 5e-7);
  EXPECT_EQ(other.software_efficiency,
            std::stod(io::printf_string("%.6g", other.software_efficiency)))
      << "rounded as a profile file holds it";
  EXPECT_EQ(io::in_situ_prior("next-generation").factor, other.software_efficiency);
  EXPECT_TRUE(other.provenance.back().starts_with("software_efficiency ")) << "step replaces it";
  EXPECT_NE(other.provenance.back().find("geometric mean"), std::string::npos);
  EXPECT_NE(other.provenance.back().find("a100-ib.json"), std::string::npos);
  EXPECT_NE(other.provenance.back().find("h100-ib.json"), std::string::npos);
}

// A GB300 scenario's datasheet profile takes the tensor speed its published runs fitted, with
// its provenance; other GPUs keep 1.
TEST(ResolveProfileTest, Gb300TakesItsFittedTensorSpeed) {
  const GpuSpec gb300 = *builtin_catalog().find_gpu("GB300-NVL-288GB");
  const HardwareProfile p = io::resolve_profile(scenario_on(gb300, true, Fabric::kInfiniband));
  ASSERT_TRUE(io::tensor_speed_prior(gb300.name).has_value());
  EXPECT_EQ(p.tensor_speed, io::tensor_speed_prior(gb300.name)->factor);
  EXPECT_GT(p.tensor_speed, 1.0);
  EXPECT_TRUE(p.provenance.back().starts_with("tensor_speed ")) << p.provenance.back();
  const GpuSpec gb200 = *builtin_catalog().find_gpu("GB200-NVL-186GB");
  EXPECT_EQ(io::resolve_profile(scenario_on(gb200, true, Fabric::kInfiniband)).tensor_speed, 1.0);
}

// A scenario naming a stack whose published runs on the GPU's family fitted a factor of its own
// gets that factor on the shipped profile (with the shipped network or the datasheet one); other
// stacks, and a profile the scenario names, keep theirs.
TEST(ResolveProfileTest, AStackWithFittedRunsTakesItsFactorOnAShippedProfile) {
  const double shipped = io::embedded_profile("a100-ib.json").software_efficiency;
  Scenario s = scenario_on("A100-SXM4-80GB", true, Fabric::kInfiniband);
  s.stack = find_training_stack("megatron-deepspeed");
  const HardwareProfile deepspeed = io::resolve_profile(s);
  EXPECT_EQ(deepspeed.name, "a100-ib");
  EXPECT_EQ(deepspeed.software_efficiency,
            io::in_situ_prior("ampere", "megatron-deepspeed").factor);
  EXPECT_LT(deepspeed.software_efficiency, shipped - 0.1);
  EXPECT_NE(deepspeed.provenance.back().find("fitted to published megatron-deepspeed runs"),
            std::string::npos)
      << deepspeed.provenance.back();
  s.stack = find_training_stack("pytorch-fsdp");
  EXPECT_EQ(io::resolve_profile(s).software_efficiency, shipped);
  // A factor fitted to one version's runs (DeepSpeed of 2021, on MT-NLG) is that version's.
  s.stack = find_training_stack("deepspeed", "2021");
  const HardwareProfile deepspeed_2021 = io::resolve_profile(s);
  EXPECT_EQ(deepspeed_2021.software_efficiency,
            io::in_situ_prior("ampere", "deepspeed", "2021").factor);
  EXPECT_LT(deepspeed_2021.software_efficiency, shipped - 0.1);
  EXPECT_NE(deepspeed_2021.provenance.back().find("fitted to published deepspeed 2021 runs"),
            std::string::npos)
      << deepspeed_2021.provenance.back();
  s.stack = find_training_stack("deepspeed");
  EXPECT_EQ(io::resolve_profile(s).software_efficiency, shipped);
  s.stack = nullptr;
  EXPECT_EQ(io::resolve_profile(s).software_efficiency, shipped);

  Scenario roce = scenario_on("H100-SXM5-80GB", true, Fabric::kRoce);
  roce.stack = find_training_stack("megatron-bridge");
  const HardwareProfile bridge = io::resolve_profile(roce);
  EXPECT_TRUE(bridge.has_datasheet_network);
  EXPECT_EQ(bridge.software_efficiency, io::in_situ_prior("hopper", "megatron-bridge").factor);

  s.stack = find_training_stack("megatron-deepspeed");
  s.profile_path = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/a100-ib.json";
  EXPECT_EQ(io::resolve_profile(s).software_efficiency, shipped);
}

TEST(ResolveProfileTest, ScenarioProfileFileWins) {
  Scenario s = scenario_on("A100-SXM4-80GB", true, Fabric::kEfa);
  s.profile_path = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/a100-ib.json";
  EXPECT_EQ(io::resolve_profile(s).name, "a100-ib");  // not the shipped a100-efa
  s.profile_path = "/nonexistent/profile.json";
  EXPECT_THROW((void)io::resolve_profile(s), io::InputError);
}

// A profile without inter-node fits cannot time a multi-node scenario's collectives.
TEST(ResolveProfileTest, RejectsASingleNodeProfileForSeveralNodes) {
  nlohmann::json doc = valid_profile();
  doc["collectives"].erase(1);
  const std::string path = ::testing::TempDir() + "single_node_profile.json";
  std::ofstream(path) << doc.dump();
  Scenario s = scenario_on("A100-SXM4-80GB", true, Fabric::kEfa);
  s.profile_path = path;
  try {
    (void)io::resolve_profile(s);
    FAIL() << "no error";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ":/collectives: profile \"t\" has no inter_node fit, but scenario \"s.json\" "
                  "runs on 4 nodes");
  }
  s.cluster.num_nodes = 1;
  EXPECT_EQ(io::resolve_profile(s).name, "t");
}

// A profile of another architecture describes other hardware: rejected, never used silently.
TEST(ResolveProfileTest, RejectsAProfileOfAnotherArchitecture) {
  Scenario s = scenario_on("A100-SXM4-80GB", true, Fabric::kEfa);
  s.profile_path = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/h100-ib.json";
  try {
    (void)io::resolve_profile(s);
    FAIL() << "no error";
  } catch (const io::InputError& e) {
    EXPECT_EQ(e.file(), s.profile_path);
    EXPECT_EQ(e.pointer(), "/gpu");
    EXPECT_EQ(e.message(),
              "profile \"h100-ib\" is for H100-SXM5-80GB, the scenario's GPUs are A100-SXM4-80GB");
  }
}

}  // namespace
}  // namespace capsim
