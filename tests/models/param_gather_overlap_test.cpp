#include "models/param_gather_overlap.hpp"

#include <cstddef>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "models/overlap.hpp"

namespace capsim {
namespace {

// The forward behind buckets gathered at `ends` (from the step's end) holding `shares` of it.
double param_gather_exposed_s(const std::vector<double>& ends, const std::vector<double>& shares,
                              double forward_s, double slack_s, double rate) {
  ForwardBehindGathers forward(forward_s, slack_s, ends.back(), rate);
  for (size_t k = 0; k < ends.size(); ++k)
    forward.bucket(ends[k], shares[k]);
  return forward.exposed_s();
}

TEST(ParamGatherOverlapTest, SlowedComputeRunsAtTheRateUntilTheCollectivesEnd) {
  EXPECT_DOUBLE_EQ(slowed_compute_s(0.0, 2.0, 0.0, 0.5), 2.0);  // nothing on the wire
  EXPECT_DOUBLE_EQ(slowed_compute_s(0.0, 0.4, 1.0, 0.5), 0.8);  // done beside it
  EXPECT_DOUBLE_EQ(slowed_compute_s(0.0, 2.0, 1.0, 0.5), 2.5);  // 0.5 beside, 1.5 after
  EXPECT_DOUBLE_EQ(slowed_compute_s(0.5, 2.0, 1.0, 1.0), 2.0);  // free overlap
}

// One bucket: the forward waits for all of it, less the slack.
TEST(ParamGatherOverlapTest, OneBucketIsWaitedFor) {
  EXPECT_DOUBLE_EQ(param_gather_exposed_s({3.0}, {1.0}, 10.0, 0.0, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(param_gather_exposed_s({3.0}, {1.0}, 10.0, 1.0, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(param_gather_exposed_s({3.0}, {1.0}, 10.0, 4.0, 0.5), 0.0);
}

// Many small buckets ahead of the forward only slow it: the classic overlap of the whole gather
// with the whole forward (overlapped_exposed_s).
TEST(ParamGatherOverlapTest, SmallBucketsStreamAheadOfTheForward) {
  std::vector<double> ends;
  std::vector<double> shares;
  const int n = 1000;
  for (int k = 1; k <= n; ++k) {
    ends.push_back(2.0 * k / n);
    shares.push_back(1.0 / n);
  }
  EXPECT_NEAR(param_gather_exposed_s(ends, shares, 10.0, 0.0, 0.5),
              overlapped_exposed_s(2.0, 10.0, 0.5), 0.01);
}

// Megatron-Core's last gradient bucket holds the rest and is gathered first: a 1% first bucket
// lets the forward run 1% of its layers, then it waits for the 99% one, not only for the first
// bucket's 0.01 s as if the rest overlapped the whole 10 s forward.
TEST(ParamGatherOverlapTest, TheForwardWaitsForEachBucketsLayers) {
  const double exposed = param_gather_exposed_s({0.01, 4.0}, {0.01, 0.99}, 10.0, 0.0, 1.0);
  EXPECT_NEAR(exposed, 4.0 - 0.1, 1e-12);  // the 0.1 s of layer work done beside the gather
  // Later chunks' buckets carry no forward work: the forward ends once they are gathered too.
  EXPECT_DOUBLE_EQ(param_gather_exposed_s({1.0, 20.0}, {1.0, 0.0}, 10.0, 0.0, 1.0), 10.0);
}

// A run of equal buckets in constant time ends where feeding them one by one does: random
// runs, forwards ahead of and behind the gathers, slowed or not, crossing the last gather.
TEST(ParamGatherOverlapTest, ARunOfBucketsEqualsFeedingThemOneByOne) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 20000; ++trial) {
    const double forward_s = 0.1 + 10.0 * unit(rng);
    const double slack_s = trial % 3 == 0 ? 0.0 : 3.0 * unit(rng);
    const double rate = trial % 4 == 0 ? 1.0 : 0.2 + 0.8 * unit(rng);
    const double lead_s = 2.0 * unit(rng);  // the run's first gather ends after a first bucket
    const double gather_s = 0.5 * unit(rng);
    const int count = 1 + static_cast<int>(60 * unit(rng));
    const double share = (1.0 - 0.3 * unit(rng)) / count;
    const double later_s = trial % 2 == 0 ? 0.0 : 5.0 * unit(rng);  // a later chunk's gathers
    const double all_gathered_s = lead_s + count * gather_s + later_s;
    ForwardBehindGathers one_by_one(forward_s, slack_s, all_gathered_s, rate);
    ForwardBehindGathers run(forward_s, slack_s, all_gathered_s, rate);
    const double first_share = 1.0 - share * (count - 1);
    one_by_one.bucket(lead_s * 0.5, first_share - share);
    run.bucket(lead_s * 0.5, first_share - share);
    for (int k = 0; k < count; ++k)
      one_by_one.bucket(lead_s + k * gather_s, share);
    run.bucket_run(lead_s, gather_s, count, share);
    one_by_one.bucket(all_gathered_s, 0.0);
    run.bucket(all_gathered_s, 0.0);
    ASSERT_NEAR(run.exposed_s(), one_by_one.exposed_s(), 1e-9 * (1.0 + forward_s)) << trial;
  }
}

}  // namespace
}  // namespace capsim
