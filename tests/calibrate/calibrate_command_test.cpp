// `capsim calibrate` end to end through the built binary: exit codes, outputs, report.
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/in_situ_prior.hpp"
#include "tests/cli/run_capsim.hpp"

namespace capsim::calibrate_command_test {
namespace {

using testing::run_capsim;

const std::string kLogs = std::string(CAPSIM_DATA_DIR) + "/nccl/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("capsim_calibrate_test_" + name)).string();
}

TEST(CalibrateCommandTest, FitWritesProfileAndReport) {
  const std::string profile = temp_path("p.json");
  const std::string report = temp_path("r.html");
  const auto r =
      run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt " + kLogs +
                 "a100_1node_allreduce_mpi8_thanos.txt --gpu A100-SXM4-80GB " +
                 "--fabric efa --node-nic-bandwidth 400Gbps -o " + profile + " --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(read(profile).find("\"schema\": \"capsim.profile/v1\""), std::string::npos);
  const std::string html = read(report);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("a100_p4de_2node_allreduce_awsome.txt"), std::string::npos);
  // The intra-node fit has a latency-only regime (tens of MB/s): its bus bandwidth, a row's last
  // cell, shows significant figures rather than "0.0".
  EXPECT_EQ(html.find("<td>0.0</td></tr>"), std::string::npos);
  EXPECT_NE(r.out.find("MAPE"), std::string::npos);
}

// Any fabric a scenario can name is a fit's fabric, and the profile says it: a run of the same
// logs differs only where the fabric's net-plugin latency splits the fitted latency (TCPX's
// plugin adds a latency per network step, InfiniBand's verbs transport none).
TEST(CalibrateCommandTest, FitTakesEveryFabricAScenarioNames) {
  const auto fit = [](const std::string& fabric) {
    const std::string profile = temp_path(fabric + ".json");
    const auto r = run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt " +
                              "--gpu A100-SXM4-80GB --fabric " + fabric +
                              " --node-nic-bandwidth 400Gbps -o " + profile);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(read(profile));
  };
  const nlohmann::json tcpx = fit("tcpx");
  const nlohmann::json ib = fit("infiniband");
  EXPECT_EQ(tcpx.at("fabric"), "tcpx");
  EXPECT_EQ(ib.at("fabric"), "infiniband");
  EXPECT_EQ(fit("slingshot").at("fabric"), "slingshot");
  EXPECT_NE(tcpx.at("collectives"), ib.at("collectives"));
  const auto bad =
      run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt " +
                     "--gpu A100-SXM4-80GB --fabric myrinet --node-nic-bandwidth 400Gbps "
                     "-o " +
                     temp_path("myrinet.json"),
                 true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--fabric: expected nvswitch, infiniband, roce, efa, ethernet, "
                         "omni-path, slingshot, tcpx, tcpxo, got \"myrinet\""),
            std::string::npos)
      << bad.out;
}

// The report lists every GEMM row against the model, and the fp8 row that bounds the fp8
// ceiling (not a fitted row) with the model's fp8 throughput for it.
TEST(CalibrateCommandTest, ReportTablesEveryGemmRow) {
  const std::string report = temp_path("gemm.html");
  const auto r =
      run_capsim("calibrate fit " + kLogs + "h100_p5_1node_allreduce_awsbatch.txt " +
                 std::string(CAPSIM_DATA_DIR) + "/gemm/gemm_measurements.csv " +
                 "--gpu H100-SXM5-80GB " + "--fabric efa --node-nic-bandwidth 3200Gbps -o " +
                 temp_path("gemm.json") + " --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = read(report);
  const auto table = html.find("<h3>GEMM rows</h3>");
  ASSERT_NE(table, std::string::npos);
  // MAMF's best bf16 shape (fitted) and its best fp8 shape (the fp8 bound), with their numbers.
  EXPECT_NE(html.find("<td>bf16</td><td>2048 &times; 2048 &times; 13312</td><td>794.5</td>", table),
            std::string::npos);
  const auto fp8 = html.find("<td>bounds the fp8 ceiling</td>", table);
  ASSERT_NE(fp8, std::string::npos);
  EXPECT_NE(
      html.find("<td>fp8_e4m3</td><td>1024 &times; 9216 &times; 14336</td><td>1402.6</td>", fp8),
      std::string::npos);
}

// A measurement file with every section (machine header, four collectives, bf16 and fp8 GEMMs,
// overlap) fits, and the GEMM fit's quality row names the file its rows came from, not the
// shipped CSV.
TEST(CalibrateCommandTest, GemmFitRecordNamesItsFile) {
  const auto r = run_capsim("calibrate fit " + std::string(CAPSIM_TEST_DATA_DIR) +
                            "/measurements/every-optional-key.json -o " + temp_path("m.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto gemm = r.out.find("gemm hopper fp16/bf16");
  ASSERT_NE(gemm, std::string::npos) << r.out;
  const std::string row = r.out.substr(gemm, r.out.find('\n', gemm) - gemm);
  EXPECT_NE(row.find("every-optional-key.json"), std::string::npos) << row;
  EXPECT_EQ(row.find("gemm_measurements.csv"), std::string::npos) << row;
}

// A GEMM source longer than the report's columns is cut between UTF-8 characters, never inside
// one: 59 ASCII bytes, then "é" (2 bytes) straddles the 60-byte cut of the rows table.
TEST(CalibrateCommandTest, ReportCutsLongSourcesBetweenCharacters) {
  const std::string csv = temp_path("utf8.csv");
  const std::string source = std::string(59, 'a') + "\xC3\xA9" + std::string(40, 'b');
  {
    std::ofstream out(csv);
    out << "gpu,dtype,M,N,K,tflops,source,batch,library,note\n";
    for (int size : {1024, 2048, 4096, 8192})
      out << "H100-SXM,bf16," << size << "," << size << "," << size << ",600," << source
          << ",1,cuBLAS,\n";
  }
  const std::string report = temp_path("utf8.html");
  const auto r =
      run_capsim("calibrate fit " + kLogs + "h100_p5_1node_allreduce_awsbatch.txt " + csv +
                 " --gpu H100-SXM5-80GB -o " + temp_path("utf8.json") + " --report " + report);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string html = read(report);
  EXPECT_NE(html.find("<tr><td>" + std::string(59, 'a') + "</td>"), std::string::npos);
  EXPECT_NE(
      html.find("<tr><td>" + std::string(59, 'a') + "\xC3\xA9" + std::string(29, 'b') + "</td>"),
      std::string::npos);  // the sources table cuts at 90 bytes
}

TEST(CalibrateCommandTest, BadInputExitsTwoWithMessage) {
  const std::string bad = std::string(CAPSIM_TEST_DATA_DIR) + "/nccl_bad/bad_time_allreduce.txt";
  auto r = run_capsim("calibrate fit " + bad + " -o " + temp_path("x.json"), true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(bad + ":7: expected a number"), std::string::npos) << r.out;
  r = run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt --gpu " +
                     "A100-SXM4-80GB -o " + temp_path("x.json"),
                 true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--fabric"), std::string::npos) << r.out;
  r = run_capsim("calibrate fit " + kLogs + "a100_1node_allreduce_mpi8_thanos.txt", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("capsim calibrate: error: -o: missing PROFILE.json, the profile to write\n"),
            std::string::npos)
      << r.out;
  r = run_capsim("calibrate fit", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("capsim calibrate: error: LOG_OR_JSON...: missing argument: the "
                       "measurement files to fit; see --help\n"),
            std::string::npos)
      << r.out;
  r = run_capsim("calibrate frobnicate", true);
  EXPECT_EQ(r.exit_code, 2);
}

// Every option the logs need is named in one run, not one per run.
TEST(CalibrateCommandTest, FitNamesEveryMissingOptionAtOnce) {
  const std::string log = kLogs + "a100_p4de_2node_allreduce_awsome.txt";  // no device line
  auto r = run_capsim("calibrate fit " + log, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("capsim calibrate: error: -o: missing PROFILE.json, the profile to write\n"
                       "capsim calibrate: error: --gpu: the logs name no known GPU; pass --gpu"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ncapsim calibrate: error: --fabric: inter-node logs need the fabric they "
                       "ran on: infiniband, roce, efa, ethernet, omni-path, slingshot, tcpx or "
                       "tcpxo\ncapsim calibrate: error: "
                       "--node-nic-bandwidth: inter-node logs need the aggregate NIC bandwidth "
                       "per node they ran with, e.g. 400Gbps\n"),
            std::string::npos)
      << r.out;
  r = run_capsim(
      "calibrate fit " + log + " --gpu A100-SXM4-80GB --fabric efa -o " + temp_path("missing.json"),
      true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("error: --node-nic-bandwidth: inter-node logs need"), std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(temp_path("missing.json")));
}

// Logs of an A100 40 GB and an A100 80 GB fit together, with a warning naming both; a log of
// one GPU fitted as another warns too.
TEST(CalibrateCommandTest, FitWarnsWhenLogsOfDifferentGpusAreMixed) {
  const std::string gpu80 = kLogs + "a100_1node_allreduce_mpi8_thanos.txt";
  const std::string gpu40 = kLogs + "a100_oci_1node_allreduce_10G_ocitut.txt";
  auto r =
      run_capsim("calibrate fit " + gpu80 + " " + gpu40 + " -o " + temp_path("mixed.json"), true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("capsim calibrate: warning: the inputs mix GPUs: A100-SXM4-80GB "
                       "(a100_1node_allreduce_mpi8_thanos.txt), A100-SXM4-40GB "
                       "(a100_oci_1node_allreduce_10G_ocitut.txt); the profile is fitted for "
                       "A100-SXM4-80GB from all of them"),
            std::string::npos)
      << r.out;
  r = run_capsim("calibrate fit " + gpu40 + " --gpu A100-SXM4-80GB -o " + temp_path("other.json"),
                 true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("warning: the inputs were measured on A100-SXM4-40GB "
                       "(a100_oci_1node_allreduce_10G_ocitut.txt), the profile is fitted for "
                       "A100-SXM4-80GB (--gpu)"),
            std::string::npos)
      << r.out;
  // The GEMM CSV's A100 rows of no stated memory size are no second GPU.
  r = run_capsim("calibrate fit " + gpu80 + " " + std::string(CAPSIM_DATA_DIR) +
                     "/gemm/gemm_measurements.csv -o " + temp_path("one.json"),
                 true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
}

TEST(CalibrateCommandTest, AFolderGivenForLogsIsNamedAsOne) {
  const std::string dir = temp_path("logs_folder");
  std::filesystem::create_directories(dir);
  auto r = run_capsim("calibrate fit " + dir + " -o " + temp_path("folder.json"), true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(dir + ": is a folder, not a measurement file; name the files in it (e.g. " +
                       dir + "/*.txt)"),
            std::string::npos)
      << r.out;
  r = run_capsim("calibrate fit " + dir + "/ -o " + temp_path("folder.json"), true);
  EXPECT_NE(r.out.find(dir + "/: is a folder, not a measurement file; name the files in it (e.g. " +
                       dir + "/*.txt)"),
            std::string::npos)
      << r.out;
  r = run_capsim("calibrate fit " + kLogs + "a100_1node_allreduce_mpi8_thanos.txt --validate " +
                     dir + " -o " + temp_path("folder.json"),
                 true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(dir + ": is a folder, not a log"), std::string::npos) << r.out;
}

// A profile written over a measurement file, or a report over the profile, is refused before
// the fit, and the files stay as they were.
TEST(CalibrateCommandTest, FitOutputsMayNotReplaceItsInputsOrEachOther) {
  const std::string measurements = temp_path("in_place.json");
  std::filesystem::remove(measurements);
  std::filesystem::copy_file(
      std::string(CAPSIM_TEST_DATA_DIR) + "/measurements/every-optional-key.json", measurements);
  const std::string before = read(measurements);
  auto r = run_capsim("calibrate fit " + measurements + " -o " + measurements, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(measurements +
                       ": cannot write file: -o names an input of the command (the "
                       "input " +
                       measurements + ")"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(read(measurements), before);
  const std::string profile = temp_path("twice.json");
  std::filesystem::remove(profile);
  r = run_capsim("calibrate fit " + kLogs + "a100_1node_allreduce_mpi8_thanos.txt -o " + profile +
                     " --report " + profile,
                 true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("-o and --report name the same file"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(profile));
}

// Logs without an intra-node all_reduce (the fallback for every other collective) make a
// profile simulate and plan reject: fit still writes it (per-log fit reports and --validate
// need that) but warns, and simulate then exits 2 with the same reason.
TEST(CalibrateCommandTest, FitWarnsAboutAProfileThatWouldNotLoad) {
  const std::string profile = temp_path("unloadable.json");
  for (const std::string& args :
       {kLogs + "a100_p4de_2node_allreduce_awsome.txt --fabric efa --node-nic-bandwidth 400Gbps",
        kLogs + "a100_1node_sendrecv_liplus.txt"}) {
    const auto r =
        run_capsim("calibrate fit " + args + " --gpu A100-SXM4-80GB -o " + profile, true);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("warning: " + profile +
                         " is for fit reports only; simulate and plan "
                         "will reject it (/collectives: needs an all_reduce intra_node fit"),
              std::string::npos)
        << r.out;
    const auto sim = run_capsim("simulate " + std::string(CAPSIM_SOURCE_DIR) +
                                    "/scenarios/gpt-30b-p4d/scenario.json --profile " + profile,
                                true);
    EXPECT_EQ(sim.exit_code, 2) << sim.out;
  }
  const auto ok =
      run_capsim("calibrate fit " + kLogs +
                     "a100_1node_allreduce_mpi8_thanos.txt --gpu A100-SXM4-80GB -o " + profile,
                 true);
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out.find("warning"), std::string::npos) << ok.out;
}

TEST(CalibrateCommandTest, OverlapMeasurementSetsCollectiveSms) {
  // capsim-calibrate overlap output for an A100 (108 SMs): 108 x (1 - 1 / 1.25) = 21.6 -> 22
  // beside all-reduce, 108 x (1 - 1 / 1.2) = 18 beside all-gather; median 20.
  const std::string overlap = temp_path("overlap.json");
  {
    std::ofstream out(overlap);
    out << R"({"schema": "capsim.measurements/v1",
      "machine": {"hostname": "node7", "gpu": "NVIDIA A100-SXM4-80GB", "gpus_per_node": 8,
                  "nodes": 1, "nccl_version": "2.23.4"},
      "overlap": {"sms": 108, "ranks": 8, "collective_bytes": 268435456, "dtype": "bf16",
                  "sms_taken": 20, "samples": [
        {"collective": "all_reduce", "m": 8192, "n": 8192, "k": 8192,
         "time_alone_s": 0.001, "time_beside_s": 0.00125, "sms_taken": 22},
        {"collective": "all_gather", "m": 8192, "n": 8192, "k": 8192,
         "time_alone_s": 0.001, "time_beside_s": 0.0012, "sms_taken": 18}]}})";
  }
  const std::string log = kLogs + "a100_1node_allreduce_mpi8_thanos.txt ";
  const std::string profile = temp_path("ovl_profile.json");
  auto r = run_capsim("calibrate fit " + log + overlap + " -o " + profile);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::string text = read(profile);
  EXPECT_NE(text.find("\"collective_sms\": 20,"), std::string::npos) << text;
  EXPECT_NE(text.find("collective_sms 20: measured in situ by capsim-calibrate overlap"),
            std::string::npos);
  EXPECT_NE(text.find("capsim_calibrate_test_overlap.json: capsim-calibrate overlap, 20 of 108 "
                      "SMs taken (median of 2 bf16 GEMM x all_reduce/all_gather pairs; 256 MiB "
                      "over 8 ranks)"),
            std::string::npos);
  // Alone it fits nothing: each input is named.
  r = run_capsim("calibrate fit " + overlap + " " + overlap + " -o " + profile, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("capsim calibrate: error: " + overlap +
                       ": no collective or GEMM measurement to fit\ncapsim calibrate: error: " +
                       overlap + ": no collective or GEMM measurement to fit\n"),
            std::string::npos)
      << r.out;
  // Without it: the default, said so.
  r = run_capsim("calibrate fit " + log + "-o " + profile);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  text = read(profile);
  EXPECT_NE(text.find("\"collective_sms\": 24,"), std::string::npos);
  EXPECT_NE(text.find("collective_sms 24: not measured (no capsim-calibrate overlap input)"),
            std::string::npos);
  // The catalog GPU given explicitly; measured on an A100 (108 SMs) but fitted as an H100:
  // exit 2 naming file and pointer.
  r = run_capsim("calibrate fit " + log + overlap + " --gpu A100-SXM4-80GB -o " + profile, true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = run_capsim("calibrate fit " + log + overlap + " --gpu H100-SXM5-80GB -o " + profile, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(overlap +
                       ":/overlap/sms: measured on a GPU with 108 SMs, but H100-SXM5-80GB has 132"),
            std::string::npos)
      << r.out;
}

// `calibrate step --set` fits to the runs as changed: here with the training stack they ran
// named, which the provenance line records; a change the runs' rules reject is bad input.
TEST(CalibrateCommandTest, StepFitsTheRunsAsSetChangesThem) {
  const std::string runs = std::string(CAPSIM_DATA_DIR) + "/validation/dev.json";
  const std::string base = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/a100-ib.json";
  const std::string as_stated = temp_path("step-stated.json");
  const std::string with_stack = temp_path("step-stack.json");
  const std::string args = "calibrate step " + runs + " --cases narayanan21-t1 --profile " + base;
  ASSERT_EQ(run_capsim(args + " -o " + as_stated).exit_code, 0);
  const auto r = run_capsim(args + " --set stack.name=megatron-core --set stack.version=2021 -o " +
                            with_stack);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto stated = nlohmann::json::parse(read(as_stated));
  const auto stacked = nlohmann::json::parse(read(with_stack));
  // The 2021 stack's slower kernels (materialised attention, unfused loss) leave less to the
  // in-situ factor.
  EXPECT_GT(stacked.at("software_efficiency").get<double>(),
            stated.at("software_efficiency").get<double>());
  EXPECT_NE(stacked.at("provenance")
                .dump()
                .find(", cases narayanan21-t1*, set stack.name=megatron-core, stack.version=2021"),
            std::string::npos)
      << stacked.at("provenance").dump();
  const auto bad = run_capsim(args + " --set stack=bogus -o " + with_stack, true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find(runs + ":/cases/0/scenario/stack: unknown training stack \"bogus\""),
            std::string::npos)
      << bad.out;
}

// `capsim calibrate step`: measured iterations of one stack (here the Megatron SC'21 runs, all
// A100 + HDR IB) set the profile's software_efficiency; the table shows before and after.
TEST(CalibrateCommandTest, StepFitsSoftwareEfficiency) {
  const std::string runs =
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/validation/megatron-sc21-materialized.json";
  const std::string profile = temp_path("step.json");
  std::filesystem::remove(profile);
  const auto r = run_capsim("calibrate step " + runs + " -o " + profile + " --cross-validate");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("software_efficiency 0."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cross-validation (fit on one run, predict the other 21)"),
            std::string::npos)
      << r.out;
  const auto j = nlohmann::json::parse(read(profile));
  EXPECT_LT(j.at("software_efficiency").get<double>(), 1.0);
  EXPECT_GT(j.at("software_efficiency").get<double>(), 0.1);
  EXPECT_EQ(j.at("name").get<std::string>(), "a100-ib");

  // --attention over runs at several sequence lengths (MPT on H100) also scales the attention.
  const std::string h100 = temp_path("step-h100.json");
  const auto att = run_capsim("calibrate step " + std::string(CAPSIM_DATA_DIR) +
                              "/validation/dev.json --cases mpt-h100 --profile " +
                              std::string(CAPSIM_SOURCE_DIR) +
                              "/scenarios/profiles/h100-ib.json --attention -o " + h100);
  ASSERT_EQ(att.exit_code, 0) << att.out;
  EXPECT_NE(att.out.find("attention efficiencies x 0."), std::string::npos) << att.out;
  const auto fitted = nlohmann::json::parse(read(h100));
  const auto shipped = nlohmann::json::parse(
      read(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/h100-ib.json"));
  EXPECT_LT(fitted.at("attention").at("forward_efficiency_hd128").get<double>(),
            shipped.at("attention").at("forward_efficiency_hd128").get<double>());

  auto bad = run_capsim("calibrate step " + runs, true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(
      bad.out.find("capsim calibrate: error: -o: missing PROFILE.json, the profile to write\n"),
      std::string::npos)
      << bad.out;
  bad = run_capsim("calibrate step", true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("capsim calibrate: error: RUNS.json: missing argument\n"),
            std::string::npos)
      << bad.out;
  bad = run_capsim("calibrate step /nonexistent.json -o " + temp_path("x.json"), true);
  EXPECT_EQ(bad.exit_code, 2);
  // Runs on B200 nodes and GB200 trays (datasheet profiles of one family) fit one factor.
  const std::string blackwell = temp_path("blackwell.json");
  const auto family = run_capsim("calibrate step " + std::string(CAPSIM_SOURCE_DIR) +
                                     "/scenarios/validation/dense-blackwell.json --cases "
                                     "fit-mbridge -o " +
                                     blackwell,
                                 true);
  ASSERT_EQ(family.exit_code, 0) << family.out;
  EXPECT_NE(family.out.find("-B200-"), std::string::npos) << family.out;
  EXPECT_NE(family.out.find("-GB200-"), std::string::npos) << family.out;
  const double factor =
      nlohmann::json::parse(read(blackwell)).at("software_efficiency").get<double>();
  EXPECT_GT(factor, 0.1);
  // Slower than the prior a GPU of no fitted family borrows: every one of these runs is slower.
  EXPECT_LT(factor, io::in_situ_prior("an-architecture-without-a-factor").factor);
  // Runs that resolve to different shipped profiles need an explicit --profile.
  bad = run_capsim("calibrate step " + std::string(CAPSIM_DATA_DIR) + "/validation/dev.json -o " +
                       temp_path("x.json"),
                   true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("pass --profile"), std::string::npos) << bad.out;
}

// The fitted in-situ factors (io/in_situ_prior.cpp) are what `calibrate step` fits on their
// runs: Blackwell's on the fit third of the dense Blackwell runs, over both stacks and per stack;
// A100's and H100's per stack on the calibration set's runs of that stack. When the cost model
// moves, this fails until the factors are refitted.
TEST(CalibrateCommandTest, StackFactorsAreTheFitsOfTheirRuns) {
  struct Fit {
    std::string runs;  // calibrate step's arguments before -o
    std::string architecture;
    std::string stack;
    std::string version = "";  // "": the factor of every version
  };
  const std::string blackwell =
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/validation/dense-blackwell.json --cases ";
  const std::string extra =
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/validation/published-extra.json --cases ";
  const std::string profiles =
      " --profile " + std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/";
  const Fit fits[] = {
      {blackwell + "fit-", "blackwell", ""},
      {blackwell + "fit-mbridge", "blackwell", "megatron-bridge"},
      {blackwell + "fit-simumax", "blackwell", "megatron-core"},
      {extra + "bloom --cases mtnlg --set stack=megatron-deepspeed" + profiles + "a100-ib.json",
       "ampere", "megatron-deepspeed"},
      {extra + "mbridge --set stack=megatron-bridge" + profiles + "h100-ib.json", "hopper",
       "megatron-bridge"},
      {extra +
           "dgxc2503-gpt3 --cases dgxc2503-llama31 --cases dgxc2503-nemotron4-15b --set "
           "stack.name=nemo --set stack.version=2023" +
           profiles + "h100-ib.json",
       "hopper", "nemo", "2023"},
      {extra + "mtnlg --set 'stack={\"name\":\"deepspeed\",\"version\":\"2021\"}'" + profiles +
           "a100-ib.json",
       "ampere", "deepspeed", "2021"},
  };
  for (const Fit& fit : fits) {
    const std::string fitted = temp_path("stack-factor.json");
    const auto r = run_capsim("calibrate step " + fit.runs + " -o " + fitted, true);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NEAR(nlohmann::json::parse(read(fitted)).at("software_efficiency").get<double>(),
                io::in_situ_prior(fit.architecture, fit.stack, fit.version).factor, 5e-7)
        << fit.runs;
  }
}

// GB300's tensor speed (io/in_situ_prior.cpp) is what `calibrate step --tensor-speed` fits on
// its published dense runs; the fit replaces the profile's tensor_speed provenance line and
// keeps its software_efficiency. It fits the speed alone: with --attention it exits 2.
TEST(CalibrateCommandTest, TensorSpeedIsTheFitOfItsRuns) {
  const std::string runs =
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/validation/dense-gb300.json";
  const std::string fitted = temp_path("tensor-speed.json");
  const auto r = run_capsim("calibrate step " + runs + " --tensor-speed -o " + fitted, true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json profile = nlohmann::json::parse(read(fitted));
  const std::optional<io::InSituPrior> shipped = io::tensor_speed_prior("GB300-NVL-288GB");
  ASSERT_TRUE(shipped.has_value());
  EXPECT_NEAR(profile.at("tensor_speed").get<double>(), shipped->factor, 5e-6);
  EXPECT_NEAR(profile.at("software_efficiency").get<double>(),
              io::in_situ_prior("blackwell", "megatron-bridge").factor, 5e-7);
  int speed_lines = 0;
  for (const auto& line : profile.at("provenance"))
    speed_lines += line.get<std::string>().starts_with("tensor_speed ") ? 1 : 0;
  EXPECT_EQ(speed_lines, 1);
  EXPECT_NE(r.out.find("tensor_speed 1.343"), std::string::npos) << r.out;
  EXPECT_FALSE(io::tensor_speed_prior("GB200-NVL-186GB").has_value());

  const auto both =
      run_capsim("calibrate step " + runs + " --tensor-speed --attention -o " + fitted, true);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.out.find("--tensor-speed: fits the tensor speed alone"), std::string::npos)
      << both.out;
}

// `calibrate fit --software-efficiency-from`: the family's in-situ factor, fitted once by
// calibrate step, is copied with its provenance line (which replaces the benchmark-speed one);
// a profile of another GPU, or a file that is not a profile, exits 2 naming the file.
TEST(CalibrateCommandTest, FitTakesTheSoftwareEfficiencyOfAnotherProfile) {
  const std::string from = temp_path("in-situ.json");
  std::ofstream(from) << read(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/a100-ib.json");
  const std::string profile = temp_path("copied.json");
  const std::string logs = kLogs + "a100_p4de_2node_allreduce_awsome.txt " + kLogs +
                           "a100_1node_allreduce_mpi8_thanos.txt --fabric efa " +
                           "--node-nic-bandwidth 400Gbps -o " + profile;
  // Without it the profile is at benchmark speed, and the command says how to carry a factor.
  auto r = run_capsim("calibrate fit " + logs, true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(read(profile)).at("software_efficiency").get<double>(), 1.0);
  EXPECT_NE(r.out.find("note: software_efficiency 1 (kernels at benchmark speed)"),
            std::string::npos)
      << r.out;
  r = run_capsim("calibrate fit " + logs + " --software-efficiency-from " + from, true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("note: software_efficiency 1"), std::string::npos) << r.out;
  const auto source = nlohmann::json::parse(read(from));
  const auto copied = nlohmann::json::parse(read(profile));
  EXPECT_EQ(copied.at("software_efficiency"), source.at("software_efficiency"));
  int lines = 0;
  for (const auto& line : copied.at("provenance")) {
    const auto text = line.get<std::string>();
    if (text.starts_with("software_efficiency ")) {
      ++lines;
      EXPECT_NE(text.find("copied from profile a100-ib"), std::string::npos) << text;
    }
  }
  EXPECT_EQ(lines, 1);

  r = run_capsim("calibrate fit " + logs + " --software-efficiency-from " +
                     std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/h100-ib.json",
                 true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("h100-ib.json:/gpu: --software-efficiency-from needs a profile of the "
                       "fitted GPU \"A100-SXM4-80GB\", got \"H100-SXM5-80GB\""),
            std::string::npos)
      << r.out;
  r = run_capsim("calibrate fit " + logs + " --software-efficiency-from " + kLogs +
                     "a100_p4de_2node_allreduce_awsome.txt",
                 true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("a100_p4de_2node_allreduce_awsome.txt"), std::string::npos) << r.out;
}

// After --cases, an error still points at the run's place in the file (dev.json's first H100
// run is /cases/22), not at its place among the kept runs.
TEST(CalibrateCommandTest, StepErrorsPointIntoTheFileAfterCases) {
  const std::string dev = std::string(CAPSIM_DATA_DIR) + "/validation/dev.json";
  const std::string a100 = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/a100-ib.json";
  auto bad = run_capsim("calibrate step " + dev + " --cases mpt-h100 --profile " + a100 + " -o " +
                            temp_path("x.json"),
                        true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("dev.json:/cases/22/scenario/cluster/gpu: run "
                         "\"mpt-h100_80gb-30b-s4096-g8-mb1-ac\" is on H100"),
            std::string::npos)
      << bad.out;
  bad = run_capsim("calibrate step " + dev + " --cases narayanan21-t1 --cases mpt-h100 -o " +
                       temp_path("x.json"),
                   true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("dev.json:/cases/22/scenario: run \"mpt-h100_80gb-30b-s4096-g8-mb1-ac\""),
            std::string::npos)
      << bad.out;
  // One run: nothing is left to cross-validate on.
  const auto one = run_capsim("calibrate step " + dev + " --cases narayanan21-t1-1.7B -o " +
                              temp_path("one.json") + " --cross-validate");
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_NE(one.out.find("cross-validation needs at least two runs"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("predict the other 0"), std::string::npos) << one.out;
  bad =
      run_capsim("calibrate step " + dev + " --cases no-such-run -o " + temp_path("x.json"), true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("dev.json:/cases: no run id starts with a --cases prefix"),
            std::string::npos)
      << bad.out;
}

TEST(CalibrateCommandTest, ValidateReportsHeldOutLogs) {
  const auto r =
      run_capsim("calibrate fit " + kLogs + "a100_p4de_2node_allreduce_awsome.txt " +
                 "--gpu A100-SXM4-80GB --fabric efa --node-nic-bandwidth 400Gbps " + "--validate " +
                 kLogs + "a100_p4d_2node_allreduce_awsdlami2024.txt -o " + temp_path("v.json"));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("held-out"), std::string::npos) << r.out;
}

// New hardware: the GPU is described in a capsim.gpu/v1 file, its measurements name it as
// CUDA does ("NVIDIA B200"). The profile fits its GEMMs to those rows, carries the definition,
// and a scenario of that GPU simulates with it in a fresh process.
// Writes a 1.3B GPT scenario on one node of 8 `gpu` (a name or a definition) costed with
// `profile`, and returns its path.
std::string write_one_node_scenario(const std::string& name, const nlohmann::json& gpu,
                                    const std::string& profile) {
  const nlohmann::json scenario = {
      {"schema", "capsim.scenario/v1"},
      {"name", name},
      {"model",
       {{"name", "GPT 1.3B"},
        {"num_layers", 24},
        {"hidden_size", 2048},
        {"num_attention_heads", 16},
        {"seq_length", 2048},
        {"vocab_size", 51200}}},
      {"cluster", {{"gpu", gpu}, {"gpus_per_node", 8}, {"num_nodes", 1}}},
      {"parallelism",
       {{"tensor", 1},
        {"pipeline", 1},
        {"data", 8},
        {"micro_batch_size", 4},
        {"global_batch_size", 64}}},
      {"profile", profile}};
  const std::string path = temp_path(name);
  std::ofstream(path) << scenario.dump(2);
  return path;
}

TEST(CalibrateCommandTest, FitsNewHardwareFromItsGpuSpec) {
  const std::string spec = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/hardware/b200.json";
  const std::string profile = temp_path("b200.json");
  const auto r =
      run_capsim("calibrate fit " + std::string(CAPSIM_TEST_DATA_DIR) +
                     "/measurements/b200-node.json --gpu-spec " + spec + " -o " + profile,
                 true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("gemm blackwell fp16/bf16"), std::string::npos) << r.out;
  const auto written = nlohmann::json::parse(read(profile));
  EXPECT_EQ(written.at("gpu").at("name"), "B200");
  EXPECT_EQ(written.at("gpu").at("sms"), 148);
  // No step of the user's stack was measured on it: its family's in-situ factor, as its
  // datasheet profile has.
  EXPECT_EQ(written.at("software_efficiency").get<double>(), io::in_situ_prior("blackwell").factor);
  EXPECT_NE(r.out.find("the blackwell family's, fitted to published runs on it"), std::string::npos)
      << r.out;

  // The GPU described inline, then (once the profile carries the definition) just named.
  nlohmann::json gpu = nlohmann::json::parse(read(spec));
  gpu.erase("schema");  // the file's schema; inside a scenario the object stands alone
  const std::string scenario = write_one_node_scenario("b200-scenario.json", gpu, profile);
  const auto sim = run_capsim("simulate " + scenario);
  ASSERT_EQ(sim.exit_code, 0) << sim.out;
  EXPECT_NE(sim.out.find("profile B200-nvswitch"), std::string::npos) << sim.out;
  const std::string by_name = write_one_node_scenario("b200-by-name.json", "B200", profile);
  const auto named = run_capsim("simulate " + by_name + " --engine analytic");
  ASSERT_EQ(named.exit_code, 0) << named.out;
  EXPECT_NE(named.out.find("profile B200-nvswitch"), std::string::npos) << named.out;
}

// New hardware may borrow a catalog family's in-situ factor (a catalog GPU may not: see
// FitTakesTheSoftwareEfficiencyOfAnotherProfile); the provenance says whose it is.
TEST(CalibrateCommandTest, NewHardwareBorrowsAFamilysInSituFactor) {
  const std::string spec = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/hardware/b200.json";
  const std::string profile = temp_path("b200-borrowed.json");
  const auto r = run_capsim("calibrate fit " + std::string(CAPSIM_TEST_DATA_DIR) +
                            "/measurements/b200-node.json " + "--gpu-spec " + spec +
                            " --software-efficiency-from " + std::string(CAPSIM_SOURCE_DIR) +
                            "/scenarios/profiles/h100-ib.json -o " + profile);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto written = nlohmann::json::parse(read(profile));
  const auto source = nlohmann::json::parse(
      read(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/profiles/h100-ib.json"));
  EXPECT_DOUBLE_EQ(written.at("software_efficiency").get<double>(),
                   source.at("software_efficiency").get<double>());
  EXPECT_NE(
      written.at("provenance")
          .dump()
          .find(
              "copied from profile h100-ib (fitted on H100-SXM5-80GB, borrowed for new hardware)"),
      std::string::npos);
}

// Logs of a GPU the catalog lacks, without --gpu-spec: the error names the device and the way.
TEST(CalibrateCommandTest, UnknownDeviceNamesItselfAndTheWay) {
  const auto r = run_capsim("calibrate fit " + std::string(CAPSIM_TEST_DATA_DIR) +
                                "/measurements/b200-node.json -o " + temp_path("unknown.json"),
                            true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("the logs name no known GPU (they print \"NVIDIA B200\"); pass --gpu (one "
                       "of the catalog), or describe new hardware with --gpu-spec GPU.json"),
            std::string::npos)
      << r.out;
}

TEST(CalibrateCommandTest, GpuSpecAndAnotherGpuConflict) {
  const std::string spec = std::string(CAPSIM_SOURCE_DIR) + "/scenarios/hardware/b200.json";
  const auto r = run_capsim("calibrate fit " + std::string(CAPSIM_TEST_DATA_DIR) +
                            "/measurements/b200-node.json --gpu-spec " + spec +
                            " --gpu H100-SXM5-80GB -o " + temp_path("conflict.json"));
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace capsim::calibrate_command_test
