#include "whatif/results.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "traces/timeline_csv.hpp"

#include "tests/whatif/whatif_test_util.hpp"

namespace capsim::whatif {
namespace {

PolicyResult sample_run(std::uint64_t seed, double cost) {
  PolicyResult r;
  r.name = "ca";
  r.preset = "cluster-autoscaler";
  r.seed = seed;
  r.cost_usd = cost;
  r.cost_by_pricing_usd = {{"on-demand", cost * 0.75}, {"spot", cost * 0.25}};
  r.gpu_hours_billed = 100;
  r.gpu_hours_busy = 50;
  r.utilization = 0.5;
  r.jobs_total = 3;
  r.jobs_finished = 3;
  r.lost = {1, 2, 3, 4, 5};
  r.scale_ups = 7;
  r.timeline.samples.push_back({600, 1, 2, 3, 4, 5, 24, 3, 2});
  return r;
}

TEST(ResultsTest, RunJsonRoundTrips) {
  const PolicyResult r = sample_run(3, 12.5);
  const PolicyResult back = run_from_json(run_to_json(r));
  EXPECT_EQ(run_to_json(back), run_to_json(r));
  EXPECT_EQ(back.timeline.samples.at(0).gpus_busy, 24);
  EXPECT_DOUBLE_EQ(back.lost.total(), 15.0);
}

TEST(ResultsTest, SummaryMeansAndSpreads) {
  WhatIf w = testing::whatif({testing::pool("od", 0, 2, 0)}, {testing::job("a", 0, 8, 60)});
  const std::vector<PolicyRuns> runs{
      {"ca",
       "cluster-autoscaler",
       {sample_run(1, 10.0), sample_run(2, 20.0), sample_run(3, 30.0)}}};
  const auto j = summary_json(w, runs);
  EXPECT_EQ(j.at("seeds"), nlohmann::json({1, 2, 3}));
  const auto& p = j.at("policies").at(0);
  EXPECT_DOUBLE_EQ(p.at("cost_usd").get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(p.at("spread").at("cost_usd").at("std").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(p.at("spread").at("cost_usd").at("min").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(p.at("cost_by_pricing_usd").at("spot").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(p.at("goodput_lost_gpu_hours").get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(p.at("goodput_lost_by_cause_gpu_hours").at("checkpoint").get<double>(), 5.0);
  const std::string table = comparison_table(w, runs);
  EXPECT_NE(table.find("3 replicas (means)"), std::string::npos);
  EXPECT_NE(table.find("ca "), std::string::npos);
  EXPECT_NE(html_report(w, runs).find("<polyline"), std::string::npos);
}

// Names are free text: markup in a policy's or the what-if's name is shown, not parsed; the
// preformatted table keeps its quotes literal.
TEST(ResultsTest, HtmlReportEscapesNames) {
  WhatIf w = testing::whatif({testing::pool("od", 0, 2, 0)}, {testing::job("a", 0, 8, 60)});
  w.name = "a<b>&\"c\"";
  PolicyResult run = sample_run(1, 10.0);
  run.name = "<script>";
  const std::string html = html_report(w, {{"<script>", "cluster-autoscaler", {run}}});
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("<h3>&lt;script&gt;: nodes by state</h3>"), std::string::npos);
  EXPECT_NE(html.find("<h1>What-if: a&lt;b&gt;&amp;&quot;c&quot;</h1>"), std::string::npos);
  EXPECT_NE(html.find("what-if \"a&lt;b&gt;&amp;\"c\"\""), std::string::npos);
}

// No job finished in a run: its completion times are none, null in JSON (in the means and the
// spreads over the replicas that have them) and "-" in the table, not 0.
TEST(ResultsTest, NoFinishedJobMeansNoCompletionTimes) {
  WhatIf w = testing::whatif({testing::pool("od", 0, 2, 0)}, {testing::job("a", 0, 8, 60)});
  PolicyResult none = sample_run(1, 10.0);
  none.jobs_finished = 0;
  const PolicyResult back = run_from_json(run_to_json(none));
  EXPECT_FALSE(back.jct_p50_s.has_value());
  EXPECT_FALSE(back.jct_p95_s.has_value());

  const std::vector<PolicyRuns> one{{"ca", "cluster-autoscaler", {none}}};
  const auto p = summary_json(w, one).at("policies").at(0);
  EXPECT_TRUE(p.at("jct_p50_s").is_null());
  EXPECT_TRUE(p.at("jct_p95_s").is_null());
  EXPECT_EQ(p.at("queue_wait_p50_s"), 0.0);
  const std::string table = comparison_table(w, one);
  EXPECT_NE(table.find("    0.00h         -         - "), std::string::npos) << table;

  // Over replicas: the mean of those that have a time, spreads of none below two.
  PolicyResult some = sample_run(2, 20.0);
  some.jct_p50_s = 3600.0;
  some.jct_p95_s = 7200.0;
  const std::vector<PolicyRuns> mixed{{"ca", "cluster-autoscaler", {none, some}}};
  const auto q = summary_json(w, mixed).at("policies").at(0);
  EXPECT_EQ(q.at("jct_p50_s"), 3600.0);
  EXPECT_TRUE(q.at("spread").at("jct_p50_s").at("std").is_null());
  EXPECT_EQ(q.at("spread").at("cost_usd").at("min"), 10.0);
  EXPECT_NE(comparison_table(w, mixed).find("    1.00h     2.00h "), std::string::npos);
}

TEST(TimelineCsvTest, WritesOneRowPerSample) {
  traces::Timeline t{"static", {{0, 0, 2, 0, 0, 0, 0, 0, 1}, {600.4, 1, 0, 2, 0, 1, 16, 2, 0}}};
  std::ostringstream os;
  traces::write_timeline_csv(os, {t});
  EXPECT_EQ(os.str(),
            "series,time_s,nodes_booting,nodes_idle,nodes_busy,nodes_draining,nodes_failed,"
            "gpus_busy,jobs_running,jobs_queued\n"
            "static,0,0,2,0,0,0,0,0,1\n"
            "static,600,1,0,2,0,1,16,2,0\n");
}

}  // namespace
}  // namespace capsim::whatif
