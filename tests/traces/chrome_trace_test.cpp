#include "traces/chrome_trace.hpp"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace capsim::traces {
namespace {

ChromeTrace sample() {
  ChromeTrace t;
  t.tracks = {"stage 0", "stage \"1\""};
  t.streams = {"compute", "communication"};
  t.slices.push_back({0, 0, "F0", "compute", 0.0, 1.5e-3});
  t.slices.push_back({1, 1, "DP all-reduce", "dp", 2e-3, 0.25e-3});
  return t;
}

TEST(ChromeTraceTest, WritesLoadableTraceEvents) {
  std::ostringstream out;
  write_chrome_trace(out, sample());
  const auto j = nlohmann::json::parse(out.str());
  const auto& ev = j.at("traceEvents");
  // 2 tracks x (process name + sort index + 2 thread names) + 2 slices.
  ASSERT_EQ(ev.size(), 2u * 4u + 2u);
  EXPECT_EQ(ev.at(0).at("args").at("name"), "stage 0");
  EXPECT_EQ(ev.at(4).at("args").at("name"), "stage \"1\"");
  const auto& f = ev.at(8);
  EXPECT_EQ(f.at("ph"), "X");
  EXPECT_EQ(f.at("name"), "F0");
  EXPECT_DOUBLE_EQ(f.at("ts").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(f.at("dur").get<double>(), 1500.0);  // microseconds
  const auto& d = ev.at(9);
  EXPECT_EQ(d.at("pid"), 1);
  EXPECT_EQ(d.at("tid"), 1);
  EXPECT_DOUBLE_EQ(d.at("ts").get<double>(), 2000.0);
}

TEST(ChromeTraceTest, OutputIsDeterministic) {
  std::ostringstream a;
  std::ostringstream b;
  write_chrome_trace(a, sample());
  write_chrome_trace(b, sample());
  EXPECT_EQ(a.str(), b.str());
}

}  // namespace
}  // namespace capsim::traces
