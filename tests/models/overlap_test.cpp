#include "models/overlap.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace capsim {
namespace {

TEST(OverlapTest, FreeOverlapIsTheClassicMax) {
  for (double comm : {0.0, 0.5, 1.0, 2.0, 7.0}) {
    for (double compute : {0.0, 0.5, 1.0, 3.0}) {
      EXPECT_DOUBLE_EQ(overlapped_exposed_s(comm, compute, 1.0), std::max(0.0, comm - compute));
    }
  }
}

// Compute at half speed beside 1 s of communication: 3 s of compute is stretched by 0.5 s;
// 0.2 s of compute finishes inside the collective, which is then exposed for 0.8 s.
TEST(OverlapTest, SlowedComputeClosedForms) {
  EXPECT_DOUBLE_EQ(overlapped_exposed_s(1.0, 3.0, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(overlapped_exposed_s(1.0, 0.2, 0.5), 0.8);
  EXPECT_DOUBLE_EQ(overlapped_exposed_s(1.0, 0.5, 0.5), 0.5);  // both end together
}

// Laws: never negative, never more than the collective itself, and a slower compute rate
// or a longer collective never exposes less.
TEST(OverlapTest, ExposureIsBoundedAndMonotone) {
  for (double comm = 0.0; comm <= 4.0; comm += 0.25) {
    for (double compute = 0.0; compute <= 4.0; compute += 0.25) {
      double previous = -1.0;
      for (double rate = 1.0; rate >= 0.0; rate -= 0.125) {
        const double e = overlapped_exposed_s(comm, compute, rate);
        EXPECT_GE(e, 0.0);
        EXPECT_LE(e, comm);
        EXPECT_GE(e, previous);
        EXPECT_GE(overlapped_exposed_s(comm + 0.25, compute, rate), e);
        previous = e;
      }
    }
  }
}

}  // namespace
}  // namespace capsim
