#include "models/param_gather_overlap.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "models/overlap.hpp"

namespace capsim {
namespace {

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
// lets the forward run 1% of its layers, then it waits for the 99% one. Before 2026-11-26 the
// rest overlapped the whole 10 s forward, and only the first bucket's 0.01 s was exposed.
TEST(ParamGatherOverlapTest, TheForwardWaitsForEachBucketsLayers) {
  const double exposed = param_gather_exposed_s({0.01, 4.0}, {0.01, 0.99}, 10.0, 0.0, 1.0);
  EXPECT_NEAR(exposed, 4.0 - 0.1, 1e-12);  // the 0.1 s of layer work done beside the gather
  // Later chunks' buckets carry no forward work: the forward ends once they are gathered too.
  EXPECT_DOUBLE_EQ(param_gather_exposed_s({1.0, 20.0}, {1.0, 0.0}, 10.0, 0.0, 1.0), 10.0);
}

}  // namespace
}  // namespace capsim
