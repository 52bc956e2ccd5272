// `capsim plan --report`: the page's content, and its rendering in a real browser (Debian's
// chromium, headless): the charts' size, labels inside their charts, readable text and no page
// wider than the window.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "io/json_reader.hpp"
#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using capsim::testing::kTestDataDir;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes the report of `plan` (screen only, for speed) and returns its path.
std::string write_report(const std::string& plan, const std::string& name,
                         const std::string& options = "") {
  const std::string out = ::testing::TempDir() + name;
  std::filesystem::remove(out);
  const auto r =
      testing::run_capsim("plan " + plan + " --engine analytic --report " + out + " " + options);
  EXPECT_EQ(r.exit_code, 0);
  return out;
}

TEST(PlanHtmlTest, ReportHasEveryPart) {
  const std::string html =
      read_text(write_report(kSourceDir + "/scenarios/plans/llama70b-pareto.json", "l70.html"));
  for (const char* part :
       {"<!DOCTYPE html>",
        "id=\"headline\"",
        "nodes of p5.48xlarge",
        "all-in; steady state",
        "<table id=\"ranked\">",
        "<th>GPUs</th>",
        "<th>$/node-h</th>",
        "<th>steady days</th>",
        "<th>all-in days</th>",
        "<th>free GiB</th>",
        "<svg id=\"pareto\"",
        ">all-in days to train</text>",
        ">cost (USD)</text>",
        "class=\"grid\"",
        "<svg id=\"time\"",
        ">compute ",
        ">exposed communication ",
        ">pipeline bubble ",
        ">restarts ",
        "<svg id=\"memory\"",
        "capacity 79.6 GiB",
        "id=\"megatron\"",
        "--tensor-model-parallel-size",
        "<table id=\"pruned\">",
        "<table id=\"by-instance\">",
        "<p class=\"verdict\">cheapest: p5.48xlarge (spot), $",
        "x the tokens per GPU-second for ",
        "<p class=\"verdict\">fastest: p5.48xlarge",
        "p4de.24xlarge, capacity-block: no capacity-block price in the catalog"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  // Self-contained: no scripts, no external resources.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://", html.find("<body")), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(PlanHtmlTest, NoBestSaysWhy) {
  std::string plan = read_text(kTestDataDir + "/plans/small.json");
  plan.replace(plan.find("\"10d\""), 5, "\"1h\"");
  const std::string path = ::testing::TempDir() + "unreachable.json";
  std::ofstream(path) << plan;
  const std::string html = read_text(write_report(path, "unreachable.html"));
  EXPECT_NE(html.find("No configuration meets the target: the fastest candidate"),
            std::string::npos);
  EXPECT_EQ(html.find("id=\"megatron\""), std::string::npos);
}

// Returns the path of Debian's chromium, or empty when it is not installed.
std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const auto r = testing::run_shell(std::string("command -v ") + name);
    if (r.exit_code == 0 && !r.out.empty())
      return r.out.substr(0, r.out.find('\n'));
  }
  return {};
}

// Measures the laid-out page in the browser and writes the figures into the DOM, which
// --dump-dom prints once the page has loaded.
constexpr const char* kMeasure = R"(<script>
window.addEventListener('load', () => {
  const box = (e) => e.getBoundingClientRect();
  const out = {};
  for (const id of ['pareto', 'time', 'memory', 'tornado']) {
    const svg = document.getElementById(id);
    const b = box(svg);
    let outside = 0, smallest = 1e9;
    for (const t of svg.querySelectorAll('text')) {
      const r = box(t);
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 ||
          r.bottom > b.bottom + 0.5) outside++;
      smallest = Math.min(smallest, r.height);
    }
    out[id] = {width: b.width, height: b.height, texts: svg.querySelectorAll('text').length,
               outside: outside, smallest_text_px: smallest};
  }
  out.page_width = document.documentElement.scrollWidth;
  out.window_width = window.innerWidth;
  out.ranked_rows = document.querySelectorAll('#ranked tr').length;
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>)";

TEST(PlanHtmlTest, RendersReadablyInAHeadlessBrowser) {
  const std::string browser = chromium();
  if (browser.empty())
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  std::string html = read_text(write_report(kSourceDir + "/scenarios/plans/llama70b-pareto.json",
                                            "l70b.html", "--sensitivity"));
  html.insert(html.rfind("</body>"), kMeasure);
  const std::string page = ::testing::TempDir() + "l70-measured.html";
  std::ofstream(page) << html;
  const std::string profile = ::testing::TempDir() + "chromium-profile";
  const auto r = testing::run_shell(
      browser + " --headless --no-sandbox --disable-gpu --window-size=1280,900 " +
      "--user-data-dir=" + profile + " --virtual-time-budget=5000 --dump-dom file://" + page +
      " 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0);
  const size_t at = r.out.find("<pre id=\"measured\">");
  ASSERT_NE(at, std::string::npos) << r.out.substr(0, 400);
  const size_t from = at + std::string("<pre id=\"measured\">").size();
  const auto m =
      io::JsonReader::parse_text(r.out.substr(from, r.out.find("</pre>", from) - from), "measured");
  for (const char* id : {"pareto", "time", "memory", "tornado"}) {
    const auto& c = m.at(id);
    // Wide enough to read at a normal page width, and every label inside its chart.
    EXPECT_GE(c.at("width").get<double>(), 600.0) << id;
    EXPECT_LE(c.at("width").get<double>(), 1280.0) << id;
    EXPECT_GT(c.at("texts").get<int>(), 5) << id;
    EXPECT_EQ(c.at("outside").get<int>(), 0) << id;
    EXPECT_GE(c.at("smallest_text_px").get<double>(), 11.0) << id;
  }
  EXPECT_GE(m.at("pareto").at("height").get<double>(), 300.0);
  // The page scrolls no wider than the window (wide tables scroll inside their box).
  EXPECT_LE(m.at("page_width").get<double>(), m.at("window_width").get<double>());
  EXPECT_EQ(m.at("ranked_rows").get<int>(), 11);  // the header and the top 10
}

}  // namespace
}  // namespace capsim
