// The headline accuracy figures the README, docs/validation.md and docs/planner.md quote are the
// ones capsim gives now: a change to the cost model or the shipped profiles that moves them fails
// here until the docs say the new figures (a number in the docs is one that was measured).
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using testing::run_capsim;

// The file with every run of whitespace made one space, so wrapped prose still matches.
std::string flat_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string flat;
  bool space = false;
  for (const char c : buffer.str()) {
    const bool is_space = c == ' ' || c == '\n' || c == '\t';
    if (is_space && !flat.empty() && !space)
      flat += ' ';
    else if (!is_space)
      flat += c;
    space = is_space;
  }
  return flat;
}

nlohmann::json summary_of(const std::string& cases, const std::string& engine) {
  const auto r =
      run_capsim("validate " + kSourceDir + "/" + cases + " --engine " + engine + " --json");
  EXPECT_EQ(r.exit_code, 0) << cases;
  return nlohmann::json::parse(r.out).at("summary");
}

std::string fixed(double value, int decimals) {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%.*f", decimals, value);
  return text.data();
}

// A signed figure as the docs print it: "+8.2", "−4.9" (U+2212 minus).
std::string signed_fixed(double value, int decimals) {
  const std::string digits = fixed(value < 0.0 ? -value : value, decimals);
  return (value < 0.0 ? "\u2212" : "+") + digits;
}

double shipped_factor(const std::string& profile) {
  std::ifstream in(kSourceDir + "/scenarios/profiles/" + profile + ".json");
  return nlohmann::json::parse(in).at("software_efficiency").get<double>();
}

// Each summary is run once, when first asked for (the event engine's take about 4 s each).
const nlohmann::json& summary(const std::string& cases, const std::string& engine) {
  static std::map<std::pair<std::string, std::string>, nlohmann::json> runs;
  auto it = runs.find({cases, engine});
  if (it == runs.end())
    it = runs.emplace(std::pair{cases, engine}, summary_of(cases, engine)).first;
  return it->second;
}

const std::string kDev = "data/validation/dev.json";
const std::string kCalibrationSet = "scenarios/validation/published-extra.json";

const nlohmann::json& dev_event() {
  return summary(kDev, "event");
}
const nlohmann::json& dev_analytic() {
  return summary(kDev, "analytic");
}
const nlohmann::json& extra_event() {
  return summary(kCalibrationSet, "event");
}
const nlohmann::json& extra_analytic() {
  return summary(kCalibrationSet, "analytic");
}

double mape(const nlohmann::json& summary) {
  return summary.at("mape_pct").get<double>();
}
double bias(const nlohmann::json& summary) {
  return summary.at("mean_error_pct").get<double>();
}
int within(const nlohmann::json& summary) {
  return summary.at("within_10_pct").get<int>();
}

void expect_readme_quotes_the_current_scores() {
  const std::string readme = flat_text(kSourceDir + "/README.md");
  const auto& groups = dev_event().at("by_group");
  for (const std::string& quote :
       {"scores " + fixed(mape(dev_event()), 2) + "% MAPE, " + std::to_string(within(dev_event())) +
            " within ±10%",
        "DGXC " + fixed(mape(groups.at("DGXC benchmarking")), 1) + "%",
        "MPT llm-foundry " + fixed(mape(groups.at("MPT llm-foundry")), 1) + "% (bias " +
            signed_fixed(bias(groups.at("MPT llm-foundry")), 1) + "%)",
        "Megatron-LM SC'21 " + fixed(mape(groups.at("Megatron-LM SC'21")), 1) + "%",
        "the calibration set: " + fixed(mape(extra_event()), 1) + "% MAPE after the fit",
        "A100 " + fixed(shipped_factor("a100-ib"), 3) + ", H100 " +
            fixed(shipped_factor("h100-ib"), 3),
        "(" + fixed(mape(summary("scenarios/validation/dense-gb300.json", "analytic")), 1) +
            "% MAPE on its 31 dense runs)"}) {
    EXPECT_NE(readme.find(quote), std::string::npos) << "README.md lacks: " << quote;
  }
}

// docs/planner.md says what the plans' days and dollars rest on: the factors and dev.json's scores.
void expect_planner_page_quotes_the_current_scores() {
  const std::string page = flat_text(kSourceDir + "/docs/planner.md");
  const auto& groups = dev_event().at("by_group");
  const std::string quote =
      "(A100 " + fixed(shipped_factor("a100-ib"), 3) + ", H100 " +
      fixed(shipped_factor("h100-ib"), 3) + " of benchmark speed; " +
      "scenarios/validation/published-extra.json, docs/calibration.md). They are judged on " +
      "dev.json, which nothing is fitted to: " + fixed(mape(dev_event()), 2) + "% MAPE, DGXC " +
      fixed(mape(groups.at("DGXC benchmarking")), 1) + "%, MPT " +
      fixed(mape(groups.at("MPT llm-foundry")), 1) + "%, Megatron SC'21 " +
      fixed(mape(groups.at("Megatron-LM SC'21")), 1) + "%";
  EXPECT_NE(page.find(quote), std::string::npos) << "docs/planner.md lacks: " << quote;
}

void expect_validation_tables_are_the_current_scores() {
  const std::string page = flat_text(kSourceDir + "/docs/validation.md");
  for (const auto& [group, event] : dev_event().at("by_group").items()) {
    const auto& analytic = dev_analytic().at("by_group").at(group);
    const std::string n = std::to_string(event.at("n").get<int>());
    const std::string row = " | " + n + " | " + fixed(mape(event), 1) + "% | " +
                            fixed(mape(analytic), 1) + "% | " + signed_fixed(bias(event), 1) +
                            "% | " + std::to_string(within(event)) + "/" + n + " |";
    const size_t at = page.find("| " + group + " (");
    ASSERT_NE(at, std::string::npos) << group;
    EXPECT_EQ(page.compare(page.find(" | ", at), row.size(), row), 0)
        << group << ": expected" << row;
  }
  const std::string all = "| **all** | 124 | **" + fixed(mape(dev_event()), 2) + "%** | **" +
                          fixed(mape(dev_analytic()), 2) + "%** | " +
                          signed_fixed(bias(dev_event()), 1) + "% | " +
                          std::to_string(within(dev_event())) + "/124 |";
  EXPECT_NE(page.find(all), std::string::npos) << "docs/validation.md lacks: " << all;
  const std::string calibration = "| **all** | 52 | **" + fixed(mape(extra_event()), 2) + "% / " +
                                  signed_fixed(bias(extra_event()), 1) + "%** (" +
                                  std::to_string(within(extra_event())) + " within ±10%) | " +
                                  fixed(mape(extra_analytic()), 2) + "% / " +
                                  signed_fixed(bias(extra_analytic()), 1) + "% (" +
                                  std::to_string(within(extra_analytic())) + ") |";
  EXPECT_NE(page.find(calibration), std::string::npos)
      << "docs/validation.md lacks: " << calibration;
  // dev.json without DeepSpeed's 2021 ZeRO-3 rows (every case but narayanan21-t2-zero3-*).
  const nlohmann::json& rest =
      summary(kDev + " --cases mpt --cases dgxc --cases narayanan21-t1 --cases narayanan21-t2-ptdp",
              "event");
  const std::string without_zero3 =
      "the other " + std::to_string(rest.at("n").get<int>()) + " cases score **" +
      fixed(mape(rest), 2) + "%** MAPE (Megatron SC'21 " +
      fixed(mape(rest.at("by_group").at("Megatron-LM SC'21")), 1) + "%, MPT and DGXC as above; " +
      std::to_string(within(rest)) + " within ±10%)";
  EXPECT_NE(page.find(without_zero3), std::string::npos)
      << "docs/validation.md lacks: " << without_zero3;
}

// docs/validation.md, "The training stack of each group": each dev.json group with the stack its
// source ran, as `capsim validate` scores it now.
void expect_stack_rows_are_the_current_scores() {
  const std::string page = flat_text(kSourceDir + "/docs/validation.md");
  for (const std::string args :
       {"--cases narayanan21-t1 --cases narayanan21-t2-ptdp --set stack.name=megatron-core "
        "--set stack.version=2021",
        "--cases narayanan21-t2-zero3 --set stack.name=deepspeed --set stack.version=2021",
        "--cases mpt --set stack=llm-foundry",
        "--cases dgxc --set stack.name=nemo --set stack.version=2023 --set "
        "model.cross_entropy=fused"}) {
    const nlohmann::json& s = summary(kDev + " " + args, "event");
    const std::string row = "`capsim validate " + kDev + " " + args + "` | " +
                            std::to_string(s.at("n").get<int>()) + " | " + fixed(mape(s), 1) +
                            "% | " + signed_fixed(bias(s), 1) + "% | " + std::to_string(within(s)) +
                            " |";
    EXPECT_NE(page.find(row), std::string::npos) << "docs/validation.md lacks: " << row;
  }
  // All of dev.json with each group's stack named.
  const std::string stacks = "scenarios/validation/dev-stacks.json";
  const nlohmann::json& s = summary(stacks, "event");
  const std::string row = "`capsim validate " + stacks + "` | " +
                          std::to_string(s.at("n").get<int>()) + " | " + fixed(mape(s), 1) +
                          "% | " + signed_fixed(bias(s), 1) + "% | " + std::to_string(within(s)) +
                          " |";
  EXPECT_NE(page.find(row), std::string::npos) << "docs/validation.md lacks: " << row;
}

// One test for every page: ctest runs each test in a process of its own, and all need the
// same event-engine validations.
TEST(DocsNumbersTest, ReadmeAndDocsQuoteTheCurrentScores) {
  expect_readme_quotes_the_current_scores();
  expect_validation_tables_are_the_current_scores();
  expect_stack_rows_are_the_current_scores();
  expect_planner_page_quotes_the_current_scores();
}

}  // namespace
}  // namespace capsim
