#include "models/domain_span.hpp"

#include <gtest/gtest.h>

namespace capsim {
namespace {

// An NVL72 rack of 18 trays of 4 GPUs: TP groups of 4 and 8 tile it (72 = 9 x 8).
TEST(DomainSpanTest, GroupsThatTileTheDomainStayInOne) {
  EXPECT_EQ(worst_domain_span(4, 1, 72, 288).domains, 1);
  const DomainSpan tp8 = worst_domain_span(8, 1, 72, 144);
  EXPECT_EQ(tp8.domains, 1);
  EXPECT_EQ(tp8.min_ranks_per_domain, 8);
}

// TP 16 on 72-GPU domains: ranks 64-79 straddle the first two racks, 8 in each.
TEST(DomainSpanTest, TensorGroupStraddlingTwoRacksIsTheWorst) {
  const DomainSpan s = worst_domain_span(16, 1, 72, 144);
  EXPECT_EQ(s.domains, 2);
  EXPECT_EQ(s.min_ranks_per_domain, 8);
}

// TP 12 on 8-GPU domains: every group has 8 ranks in one domain and 4 in the next.
TEST(DomainSpanTest, UnevenSplitReportsTheSmallerShare) {
  const DomainSpan s = worst_domain_span(12, 1, 8, 48);
  EXPECT_EQ(s.domains, 2);
  EXPECT_EQ(s.min_ranks_per_domain, 4);
}

// DP of 36 replicas with TP 4 (stride 4) over two racks: 18 ranks in each.
TEST(DomainSpanTest, DataParallelGroupSpreadsOverTheRacks) {
  const DomainSpan s = worst_domain_span(36, 4, 72, 144);
  EXPECT_EQ(s.domains, 2);
  EXPECT_EQ(s.min_ranks_per_domain, 18);
}

// Members 128 apart on 72-GPU domains skip a domain: 0, 128 and 256 sit in domains 0, 1, 3.
TEST(DomainSpanTest, StrideBeyondTheDomainCountsOnlyOccupiedDomains) {
  const DomainSpan s = worst_domain_span(3, 128, 72, 384);
  EXPECT_EQ(s.domains, 3);
  EXPECT_EQ(s.min_ranks_per_domain, 1);
}

}  // namespace
}  // namespace capsim
