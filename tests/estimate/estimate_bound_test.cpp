// The screen's lower bound (estimate_iteration_faster_than) must never settle a layout that
// could be faster than asked: over random valid scenarios, with even and uneven stages, every
// schedule, and few micro-batches and many, asking for the estimate's own throughput must
// return the estimate, bit for bit. And the bound must be worth its cost: close enough to the
// time to settle most layouts asked for a throughput a quarter above their own.

#include <limits>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/models/random_scenario.hpp"

namespace capsim {
namespace {

using test::Rng;

// `s` with its layers split unevenly over its stages when it is pipelined, and with enough
// micro-batches that the replay stops at steady state and extrapolates (random_scenario gives
// at most 4P), each in one of two draws; nullopt when the rules reject the result.
std::optional<Scenario> varied(Rng& rng, Scenario s) {
  Parallelism& par = s.parallelism;
  const int p = par.pipeline;
  if (p > 1 && rng.coin()) {
    std::vector<int> layers(static_cast<size_t>(p), 1);
    for (int left = s.model.num_layers - p; left > 0; --left)
      ++layers[rng.next() % layers.size()];
    par.stage_layers = layers;
  }
  if (p > 1 && rng.coin()) {
    const int m =
        8 * p + (par.schedule == Schedule::kInterleaved ? 0 : rng.pick(std::vector<int>{0, 1, 3}));
    par.global_batch_size = par.micro_batch_size * par.data * m;
  }
  if (!test::is_valid_input(s))
    return std::nullopt;
  return s;
}

struct Checked {
  int layouts = 0;
  int settled_a_quarter_above = 0;
};

void check_bound(const Scenario& s, Checked& checked) {
  SCOPED_TRACE(io::scenario_to_json(s).dump());
  const HardwareProfile profile = io::resolve_profile(s);
  const IterationCosts costs = estimate::compute_iteration_costs(s, profile);
  const SimulationResult full =
      estimate::estimate_iteration(s, costs, profile, nullptr, estimate::EstimateDetail::kTimeOnly);
  const std::optional<estimate::ScreenEstimate> same =
      estimate::estimate_iteration_faster_than(s, costs, profile, full.tokens_per_s);
  ASSERT_TRUE(same.has_value()) << "the bound exceeds the estimated time";
  EXPECT_EQ(same->iteration_time_s, full.iteration_time_s);
  EXPECT_EQ(same->tokens_per_s, full.tokens_per_s);
  EXPECT_EQ(same->mfu, full.mfu);
  EXPECT_TRUE(estimate::estimate_iteration_faster_than(s, costs, profile,
                                                       -std::numeric_limits<double>::infinity())
                  .has_value());
  EXPECT_FALSE(estimate::estimate_iteration_faster_than(s, costs, profile,
                                                        std::numeric_limits<double>::infinity())
                   .has_value());
  ++checked.layouts;
  if (!estimate::estimate_iteration_faster_than(s, costs, profile, 1.25 * full.tokens_per_s))
    ++checked.settled_a_quarter_above;
}

TEST(EstimateBoundTest, NeverSettlesALayoutThatCouldBeFaster) {
  Rng rng(20261126);
  Checked checked;
  for (int i = 0; i < 400; ++i) {
    const std::optional<Scenario> s = varied(rng, test::random_scenario(rng));
    if (s)
      check_bound(*s, checked);
  }
  EXPECT_GT(checked.layouts, 300);
  // A bound of zero would settle none.
  EXPECT_GT(checked.settled_a_quarter_above, checked.layouts / 2);
}

}  // namespace
}  // namespace capsim
