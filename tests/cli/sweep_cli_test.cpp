// `capsim simulate --sweep`: each point is exactly the run `--set` gives for its value, on both
// engines; the table, JSON and SVG; and every way the option is refused, before any run.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_capsim.hpp"
#include "tests/file_text.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using testing::run_capsim;
const std::string kScenario = kSourceDir + "/scenarios/llama3-70b-p5/scenario.json";

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

class SweepEngineTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SweepEngineTest, EachPointIsTheRunItsSetGives) {
  const std::string engine = GetParam();
  const auto sweep = run_capsim("simulate " + kScenario + " --engine " + engine +
                                " --sweep parallelism.micro_batch_size=1,2 --json");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.out;
  const auto doc = nlohmann::json::parse(sweep.out);
  EXPECT_EQ(doc["sweep"]["path"], "parallelism.micro_batch_size");
  EXPECT_EQ(doc["sweep"]["engine"], engine);
  const auto& points = doc["sweep"]["points"];
  ASSERT_EQ(points.size(), 2U);
  for (const int mbs : {1, 2}) {
    const auto one =
        run_capsim("simulate " + kScenario + " --engine " + engine +
                   " --set parallelism.micro_batch_size=" + std::to_string(mbs) + " --json");
    ASSERT_EQ(one.exit_code, 0);
    nlohmann::json expected = nlohmann::json::parse(one.out);
    nlohmann::json got = points[static_cast<size_t>(mbs - 1)]["result"];
    // The single run's notes say it was changed by --set; the sweep's value says it instead.
    expected.erase("notes");
    got.erase("notes");
    EXPECT_EQ(points[static_cast<size_t>(mbs - 1)]["value"], mbs);
    EXPECT_EQ(got, expected) << "micro_batch_size " << mbs;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, SweepEngineTest, ::testing::Values("analytic", "event"));

TEST(SweepCliTest, TableAndSvgHaveOneEntryPerValue) {
  const std::string svg = ::testing::TempDir() + "sweep.svg";
  std::filesystem::remove(svg);
  const auto r =
      run_capsim("simulate " + kScenario +
                 " --engine analytic --sweep parallelism.micro_batch_size=1,2,4 --svg " + svg);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep of parallelism.micro_batch_size over 3 values (analytic engine)"),
            std::string::npos);
  EXPECT_EQ(count(r.out, "\n  1 "), 1U);
  EXPECT_EQ(count(r.out, "\n  4 "), 1U);
  const std::string chart = capsim::testing::file_text(svg);
  EXPECT_EQ(chart.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0U);
  EXPECT_EQ(count(chart, "<circle"), 3U);
  // Micro-batches of 2 and 4 sequences of 8,192 tokens overflow an H100's 80 GB on this layout.
  EXPECT_EQ(count(chart, "stroke=\"#c00\""), 2U);
  EXPECT_NE(chart.find("does not fit in memory"), std::string::npos);
  // Same input, same bytes.
  const std::string again = ::testing::TempDir() + "sweep-again.svg";
  EXPECT_EQ(
      run_capsim("simulate " + kScenario +
                 " --engine analytic --sweep parallelism.micro_batch_size=1,2,4 --svg " + again)
          .out,
      r.out);
  EXPECT_EQ(capsim::testing::file_text(again), chart);
}

TEST(SweepCliTest, ValuesMayBeJsonListsAndStrings) {
  const auto r = run_capsim("simulate " + kScenario +
                            " --engine analytic --json --sweep "
                            "'parallelism.recompute=\"none\",\"selective\",\"full\"'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto points = nlohmann::json::parse(r.out)["sweep"]["points"];
  ASSERT_EQ(points.size(), 3U);
  EXPECT_EQ(points[2]["value"], "full");
  const auto lists =
      run_capsim("simulate " + kScenario +
                 " --engine analytic --json --set parallelism.virtual_pipeline_stages=1 "
                 "--set parallelism.schedule=1f1b --sweep "
                 "'parallelism.stage_layers=[20,20,20,20],[19,21,21,19]'");
  ASSERT_EQ(lists.exit_code, 0) << lists.out;
  const auto split = nlohmann::json::parse(lists.out)["sweep"]["points"];
  ASSERT_EQ(split.size(), 2U);
  EXPECT_EQ(split[1]["value"], nlohmann::json::parse("[19,21,21,19]"));
}

TEST(SweepCliTest, EveryBadValueIsReportedAtOnceBeforeAnyRun) {
  const std::string svg = ::testing::TempDir() + "sweep-bad.svg";
  std::filesystem::remove(svg);
  const auto r =
      run_capsim("simulate " + kScenario + " --sweep parallelism.tensor=4,3,5 --svg " + svg, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("with parallelism.tensor=3:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("with parallelism.tensor=5:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("with parallelism.tensor=4:"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(svg));
}

TEST(SweepCliTest, MalformedSweepsAndMisplacedOptionsExitTwo) {
  const std::string run = "simulate " + kScenario + " --engine analytic ";
  for (const std::string& bad :
       {std::string("--sweep parallelism.tensor"), std::string("--sweep =1,2"),
        std::string("--sweep parallelism.tensor=1,,2"), std::string("--sweep parallelism.tensor="),
        std::string("--sweep 'parallelism.stage_layers=[1,2'"), std::string("--svg /tmp/x.svg"),
        std::string("--sweep parallelism.tensor=4 --kernels"),
        std::string("--engine event --sweep parallelism.tensor=4 --trace /tmp/t.json")}) {
    const auto r = run_capsim(run + bad, true);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("error: --"), std::string::npos) << bad << ": " << r.out;
  }
  std::string many = "--sweep parallelism.micro_batch_size=1";
  for (int i = 0; i < 256; ++i)
    many += ",1";
  const auto r = run_capsim(run + many, true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("257 values, more than the 256 a sweep runs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace capsim
