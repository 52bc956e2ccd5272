#include "io/layout_ranking.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/scenario_io.hpp"

namespace capsim::io {
namespace {

ValidationCase run(const std::string& id, int micro_batch, int global_batch, double measured_s) {
  ValidationCase c;
  c.id = id;
  c.scenario = load_scenario(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
  c.scenario.parallelism.micro_batch_size = micro_batch;
  c.scenario.parallelism.global_batch_size = global_batch;
  c.measured_iteration_time_s = measured_s;
  return c;
}

std::vector<const ValidationCase*> pointers(const std::vector<ValidationCase>& cases) {
  std::vector<const ValidationCase*> out;
  for (const ValidationCase& c : cases)
    out.push_back(&c);
  return out;
}

// Four layouts of one model on one cluster, and a run of another model: one group of four.
// Throughput orders them (the last run trains twice the tokens per step), and capsim's pick is
// the run it predicts fastest, whose measured time per token is compared with the best's.
TEST(LayoutRankingTest, RanksOneModelOnOneClusterByThroughput) {
  std::vector<ValidationCase> cases{run("a", 1, 64, 10.0), run("b", 2, 64, 9.0),
                                    run("c", 4, 64, 11.0), run("d", 1, 128, 16.0)};
  ValidationCase other = run("other", 1, 64, 5.0);
  other.scenario.model.num_layers += 2;
  cases.push_back(other);
  // Measured tokens per step / s: a 6.4, b 7.1, c 5.8, d 8.0 (x seq). Predicted: b first.
  const std::vector<double> predicted{10.5, 8.0, 12.0, 17.0, 5.0};
  const std::vector<LayoutRanking> groups = rank_layouts(pointers(cases), predicted);
  ASSERT_EQ(groups.size(), 1u);  // the other model has one layout
  const LayoutRanking& g = groups.front();
  EXPECT_EQ(g.cases, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(g.layouts, 4u);
  EXPECT_EQ(g.pick, 1u);  // b: 64/8.0 = 8.0 beats d: 128/17.0 = 7.53
  EXPECT_EQ(g.best, 3u);  // d: 128/16 = 8.0 beats b: 64/9 = 7.11
  EXPECT_NEAR(g.pick_cost_pct, 100.0 * (8.0 / (64.0 / 9.0) - 1.0), 1e-9);
  // Predicted order b > d > a > c, measured d > b > a > c: one neighbour swap of four.
  EXPECT_NEAR(g.spearman, 1.0 - 6.0 * 2.0 / (4.0 * 15.0), 1e-12);
  EXPECT_NE(g.label.find(" on "), std::string::npos);
}

// Runs that repeat one layout are one layout: no ranking below two distinct ones.
TEST(LayoutRankingTest, RepeatsOfALayoutDoNotMakeAGroup) {
  const std::vector<ValidationCase> cases{run("a", 1, 64, 10.0), run("a2", 1, 64, 10.5)};
  EXPECT_TRUE(rank_layouts(pointers(cases), {10.0, 10.0}).empty());
  EXPECT_EQ(rank_layouts(pointers(cases), {10.0, 10.0}, 1).size(), 1u);
}

}  // namespace
}  // namespace capsim::io
