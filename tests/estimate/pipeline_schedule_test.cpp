#include "estimate/pipeline_schedule.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <tuple>

#include <gtest/gtest.h>

namespace capsim {
namespace {

// Every (micro-batch, chunk) appears once per op kind, and backward follows forward.
void expect_complete(const std::vector<std::vector<estimate::PipelineOp>>& sched, int m, int chunks,
                     bool split) {
  for (const auto& ops : sched) {
    std::map<std::tuple<int, int, int>, int> seen;
    for (const estimate::PipelineOp& op : ops) {
      ++seen[{static_cast<int>(op.kind), op.micro_batch, op.chunk}];
      if (op.kind != estimate::OpKind::kForward) {
        const std::tuple<int, int, int> fwd{static_cast<int>(estimate::OpKind::kForward),
                                            op.micro_batch, op.chunk};
        EXPECT_EQ(seen[fwd], 1);
      }
    }
    const size_t kinds = split ? 3 : 2;
    EXPECT_EQ(seen.size(), kinds * static_cast<size_t>(m * chunks));
    for (const auto& [k, n] : seen)
      EXPECT_EQ(n, 1);
  }
}

TEST(ScheduleTest, OneFOneBWarmupSteadyCooldown) {
  const auto s = estimate::build_schedule(Schedule::kOneFOneB, 4, 6, 1, false);
  ASSERT_EQ(s.size(), 4u);
  // Stage 0: 3 warm-up forwards, then F/B pairs, then 3 backwards.
  const std::vector<estimate::PipelineOp> expected = {
      {estimate::OpKind::kForward, 0, 0},  {estimate::OpKind::kForward, 1, 0},
      {estimate::OpKind::kForward, 2, 0},  {estimate::OpKind::kForward, 3, 0},
      {estimate::OpKind::kBackward, 0, 0}, {estimate::OpKind::kForward, 4, 0},
      {estimate::OpKind::kBackward, 1, 0}, {estimate::OpKind::kForward, 5, 0},
      {estimate::OpKind::kBackward, 2, 0}, {estimate::OpKind::kBackward, 3, 0},
      {estimate::OpKind::kBackward, 4, 0}, {estimate::OpKind::kBackward, 5, 0}};
  EXPECT_EQ(s[0], expected);
  // Last stage alternates from the start.
  EXPECT_EQ(s[3][0], (estimate::PipelineOp{estimate::OpKind::kForward, 0, 0}));
  EXPECT_EQ(s[3][1], (estimate::PipelineOp{estimate::OpKind::kBackward, 0, 0}));
  expect_complete(s, 6, 1, false);
}

TEST(ScheduleTest, GpipeAllForwardsFirst) {
  const auto s = estimate::build_schedule(Schedule::kGpipe, 2, 3, 1, false);
  for (const auto& ops : s) {
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(ops[i].kind, estimate::OpKind::kForward);
    for (size_t i = 3; i < 6; ++i)
      EXPECT_EQ(ops[i].kind, estimate::OpKind::kBackward);
  }
  expect_complete(s, 3, 1, false);
}

TEST(ScheduleTest, RecomputePrecedesEveryBackward) {
  const auto s = estimate::build_schedule(Schedule::kOneFOneB, 3, 5, 1, true);
  for (const auto& ops : s) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == estimate::OpKind::kBackward) {
        ASSERT_GT(i, 0u);
        EXPECT_EQ(ops[i - 1],
                  (estimate::PipelineOp{estimate::OpKind::kRecompute, ops[i].micro_batch, 0}));
      }
    }
  }
}

// Megatron-LM's interleaved order for P=2, v=2, M=4, stage 0: warm-up (2-0-1)*2 + (2-1)*2 = 4
// forwards: (mb0,c0) (mb1,c0) (mb0,c1) (mb1,c1); backward k=0 is (mb0, c1).
TEST(ScheduleTest, InterleavedMatchesMegatronOrder) {
  const auto s = estimate::build_schedule(Schedule::kInterleaved, 2, 4, 2, false);
  const std::vector<estimate::PipelineOp> head = {
      {estimate::OpKind::kForward, 0, 0}, {estimate::OpKind::kForward, 1, 0},
      {estimate::OpKind::kForward, 0, 1}, {estimate::OpKind::kForward, 1, 1},
      {estimate::OpKind::kForward, 2, 0}, {estimate::OpKind::kBackward, 0, 1},
      {estimate::OpKind::kForward, 3, 0}, {estimate::OpKind::kBackward, 1, 1}};
  EXPECT_EQ(std::vector<estimate::PipelineOp>(s[0].begin(), s[0].begin() + 8), head);
  expect_complete(s, 4, 2, false);
}

// M = P (Megatron-Core since Nov 2024): stage 0's warm-up (2 + 2) covers all M·v = 4 forwards,
// the last stage's (0 + 2) does not, so it starts backward after two forwards.
TEST(ScheduleTest, InterleavedWithMEqualToPWarmsUpPerStage) {
  const auto s = estimate::build_schedule(Schedule::kInterleaved, 2, 2, 2, false);
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(s[0][static_cast<size_t>(k)].kind, estimate::OpKind::kForward) << k;
  EXPECT_EQ(s[1][2], (estimate::PipelineOp{estimate::OpKind::kForward, 0, 1}));
  EXPECT_EQ(s[1][3], (estimate::PipelineOp{estimate::OpKind::kBackward, 0, 1}));
  expect_complete(s, 2, 2, false);
}

// Micro-batch groups of N = 3 on P = 2 stages, v = 2, M = 6 (Megatron-Core's
// microbatch_group_size_per_vp_stage): stage 0 warms up (2-0-1)*2 + (2-1)*3 = 5 forwards,
// group {0,1,2} through chunk 0 then chunk 1; backward k=0 is (mb0, c1).
TEST(ScheduleTest, InterleavedGoesInMicroBatchGroups) {
  const auto s = estimate::build_schedule(Schedule::kInterleaved, 2, 6, 2, false, 3);
  const std::vector<estimate::PipelineOp> head = {
      {estimate::OpKind::kForward, 0, 0},  {estimate::OpKind::kForward, 1, 0},
      {estimate::OpKind::kForward, 2, 0},  {estimate::OpKind::kForward, 0, 1},
      {estimate::OpKind::kForward, 1, 1},  {estimate::OpKind::kForward, 2, 1},
      {estimate::OpKind::kBackward, 0, 1}, {estimate::OpKind::kForward, 3, 0}};
  EXPECT_EQ(std::vector<estimate::PipelineOp>(s[0].begin(), s[0].begin() + 8), head);
  expect_complete(s, 6, 2, false);
  // The default group is P: the same as giving it.
  EXPECT_EQ(estimate::build_schedule(Schedule::kInterleaved, 2, 6, 2, false, 2),
            estimate::build_schedule(Schedule::kInterleaved, 2, 6, 2, false));
}

// Megatron-Core runs groups of N with P <= N <= M and a last group of 0 or at least P.
TEST(ScheduleTest, InterleavedGroupsFitAsMegatronChecks) {
  EXPECT_TRUE(estimate::interleaved_groups_fit(16, 128, 16));
  EXPECT_FALSE(estimate::interleaved_groups_fit(16, 120, 16));  // a last group of 8
  EXPECT_TRUE(estimate::interleaved_groups_fit(16, 120, 20));
  EXPECT_TRUE(estimate::interleaved_groups_fit(16, 120, 52));    // 52 + 52 + 16
  EXPECT_FALSE(estimate::interleaved_groups_fit(16, 120, 15));   // below P
  EXPECT_FALSE(estimate::interleaved_groups_fit(16, 120, 121));  // above M
  // Groups that do not fit run every forward first, as M not a multiple of P does by default.
  const auto s = estimate::build_schedule(Schedule::kInterleaved, 2, 5, 2, false, 4);
  for (int k = 0; k < 10; ++k)
    EXPECT_EQ(s[1][static_cast<size_t>(k)].kind, estimate::OpKind::kForward) << k;
  expect_complete(s, 5, 2, false);
}

TEST(ScheduleTest, ZeroBubbleSplitsBackwardAndDefersWeights) {
  const int p = 4;
  const auto s = estimate::build_schedule(Schedule::kZeroBubble, p, 8, 1, false);
  expect_complete(s, 8, 1, true);
  for (int st = 0; st < p; ++st) {
    int pending = 0;
    int max_pending = 0;
    for (const estimate::PipelineOp& op : s[static_cast<size_t>(st)]) {
      if (op.kind == estimate::OpKind::kBackwardInput)
        ++pending;
      if (op.kind == estimate::OpKind::kBackwardWeight)
        --pending;
      EXPECT_NE(op.kind, estimate::OpKind::kBackward);
      max_pending = std::max(max_pending, pending);
    }
    EXPECT_EQ(max_pending, st + 1) << "stage " << st;  // up to s deferred, +1 momentarily
  }
}

// DualPipeV (dualpipev.py): every micro-batch through both chunks once, each backward whole or
// split into B then W; a paired forward is followed by its paired backward (a recompute between
// them), the pairs counted as dualpipev_pairs says; and every stage holds at most 2P + 1 chunk
// forwards whose backward has not run, reaching it (memory_model's figure).
TEST(ScheduleTest, DualPipeVRunsEachChunkOnceAndPeaksAtTwoPPlusOne) {
  for (const int p : {2, 3, 4, 8}) {
    for (const int m : {2 * p, 2 * p + 3, 5 * p}) {
      for (const bool recompute : {false, true}) {
        const auto s = estimate::build_schedule(Schedule::kDualPipeV, p, m, 2, recompute);
        for (int st = 0; st < p; ++st) {
          const auto& ops = s[static_cast<size_t>(st)];
          std::map<std::tuple<int, int, int>, int> seen;
          std::array<estimate::DualPipeVPairs, 2> pairs{};
          int held = 0;
          int peak = 0;
          for (size_t i = 0; i < ops.size(); ++i) {
            const estimate::PipelineOp& op = ops[i];
            ++seen[{static_cast<int>(op.kind), op.micro_batch, op.chunk}];
            const auto c = static_cast<size_t>(op.chunk);
            if (op.kind == estimate::OpKind::kForward) {
              ++held;
              if (op.paired) {
                ++pairs[c].forwards;
                const size_t b = i + (recompute ? 2 : 1);
                ASSERT_LT(b, ops.size());
                EXPECT_TRUE(ops[b].paired && ops[b].kind == estimate::OpKind::kBackward);
                EXPECT_NE(ops[b].chunk, op.chunk);
              }
            } else if (op.kind == estimate::OpKind::kBackward ||
                       op.kind == estimate::OpKind::kBackwardInput) {
              --held;
              pairs[c].backwards += op.paired ? 1 : 0;
            } else if (op.kind == estimate::OpKind::kBackwardWeight) {
              EXPECT_EQ((seen[{static_cast<int>(estimate::OpKind::kBackwardInput), op.micro_batch,
                               op.chunk}]),
                        1);
            }
            peak = std::max(peak, held);
          }
          for (int c = 0; c < 2; ++c) {
            for (int mb = 0; mb < m; ++mb) {
              const auto n = [&](estimate::OpKind k) { return seen[{static_cast<int>(k), mb, c}]; };
              EXPECT_EQ(n(estimate::OpKind::kForward), 1);
              EXPECT_EQ(n(estimate::OpKind::kBackward) + n(estimate::OpKind::kBackwardInput), 1);
              EXPECT_EQ(n(estimate::OpKind::kBackwardWeight), n(estimate::OpKind::kBackwardInput));
              EXPECT_EQ(n(estimate::OpKind::kRecompute), recompute ? 1 : 0);
            }
            const estimate::DualPipeVPairs expected = estimate::dualpipev_pairs(p, st, m, c);
            EXPECT_EQ(pairs[static_cast<size_t>(c)].forwards, expected.forwards);
            EXPECT_EQ(pairs[static_cast<size_t>(c)].backwards, expected.backwards);
          }
          EXPECT_EQ(peak, 2 * p + 1) << "P " << p << " M " << m << " stage " << st;
        }
      }
    }
  }
}

// Megatron's interleaving loops over the stages; DualPipeV's V goes out and back, so stage 0
// holds the model's first and last chunks and each chunk's neighbours are the adjacent stages.
TEST(ScheduleTest, ChunksSitWhereTheirScheduleSaysAndLeadToTheirNeighbours) {
  const int p = 4;
  for (const Schedule schedule : {Schedule::kInterleaved, Schedule::kDualPipeV}) {
    for (int vs = 0; vs < 2 * p; ++vs) {
      const StageChunk at = stage_chunk_of(schedule, p, vs);
      EXPECT_EQ(virtual_stage_of(schedule, p, at.stage, at.chunk), vs);
      const std::optional<StageChunk> next = next_chunk(schedule, p, 2, at.stage, at.chunk);
      ASSERT_EQ(next.has_value(), vs + 1 < 2 * p);
      if (next) {
        EXPECT_EQ(previous_chunk(schedule, p, next->stage, next->chunk), at);
      }
    }
  }
  EXPECT_EQ(stage_chunk_of(Schedule::kDualPipeV, p, 2 * p - 1), (StageChunk{0, 1}));
  EXPECT_EQ(stage_chunk_of(Schedule::kDualPipeV, p, p), (StageChunk{p - 1, 1}));
  EXPECT_EQ(stage_chunk_of(Schedule::kInterleaved, p, p), (StageChunk{0, 1}));
  EXPECT_EQ(head_stage(Schedule::kDualPipeV, p), 0);
  EXPECT_EQ(head_stage(Schedule::kInterleaved, p), p - 1);
}

TEST(ScheduleTest, RejectsBadArguments) {
  EXPECT_THROW((void)estimate::build_schedule(Schedule::kOneFOneB, 0, 4, 1, false),
               std::invalid_argument);
  EXPECT_THROW((void)estimate::build_schedule(Schedule::kOneFOneB, 2, 4, 2, false),
               std::invalid_argument);
  EXPECT_THROW((void)estimate::build_schedule(Schedule::kDualPipeV, 4, 7, 2, false),
               std::invalid_argument);
  EXPECT_THROW((void)estimate::build_schedule(Schedule::kDualPipeV, 4, 8, 1, false),
               std::invalid_argument);
}

}  // namespace
}  // namespace capsim
