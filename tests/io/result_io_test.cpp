#include "io/result_io.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace capsim {
namespace {

SimulationResult with_stage_busy_times(std::vector<double> busy_s, int busiest) {
  SimulationResult r;
  r.engine = "analytic";
  r.iteration_time_s = 10.0;
  r.breakdown.compute_s = 9.0;
  r.breakdown.bubble_s = 1.0;
  r.breakdown.stage = busiest;
  r.breakdown.stage_busy_s = std::move(busy_s);
  return r;
}

std::string busy_line(const std::string& table) {
  const size_t at = table.find("busy time per stage");
  return at == std::string::npos ? "" : table.substr(at, table.find('\n', at) - at);
}

// Short pipelines list every stage's busy time, so an uneven split shows at a glance.
TEST(ResultIoTest, TableListsEachStagesBusyTime) {
  const std::string table = io::result_table(with_stage_busy_times({8.5, 8.25, 8.25, 9.0}, 3));
  EXPECT_NE(busy_line(table).find("8.5 / 8.25 / 8.25 / 9 s"), std::string::npos) << table;
}

// Longer ones give the first of the lightest stages (equal up to rounding) and the busiest.
TEST(ResultIoTest, TableGivesTheLightestAndBusiestOfLongPipelines) {
  std::vector<double> busy(12, 8.0);
  busy[0] = 8.5;
  busy[4] = 8.0 * (1.0 - 1e-12);  // the event engine's sums differ in the last bits
  busy[11] = 9.0;
  const std::string line = busy_line(io::result_table(with_stage_busy_times(busy, 11)));
  EXPECT_NE(line.find("8 s (stage 1) to 9 s (stage 11)"), std::string::npos) << line;
}

TEST(ResultIoTest, OneStageHasNoBusyTimeLine) {
  EXPECT_EQ(busy_line(io::result_table(with_stage_busy_times({9.0}, 0))), "");
}

TEST(ResultIoTest, JsonHasEveryStagesBusyTime) {
  const nlohmann::json j = io::result_to_json(with_stage_busy_times({8.5, 9.0}, 1));
  EXPECT_EQ(j.at("breakdown").at("stage_busy_s"), nlohmann::json::array({8.5, 9.0}));
  EXPECT_EQ(j.at("breakdown").at("stage"), 1);
}

}  // namespace
}  // namespace capsim
