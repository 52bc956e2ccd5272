// planner::mpi_sharded under `mpirun -np 3` (registered only when CMake found MPI): every rank
// must get exactly the batch the unsharded confirmer gives — numbers, failures and their
// messages, exit-2 failures past the probe, an unavailable engine — and a confirmer that throws
// on one rank must make every rank throw instead of hanging in a collective.
#include "planner/mpi_shard.hpp"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace capsim::planner {
namespace {

const MpiSession* g_session = nullptr;

// Scenario i of a batch is named "s<id>".
std::vector<Scenario> batch_of(const std::vector<int>& ids) {
  std::vector<Scenario> out;
  for (int id : ids) {
    Scenario s;
    s.name = "s" + std::to_string(id);
    out.push_back(s);
  }
  return out;
}

int id_of(const Scenario& s) {
  return std::stoi(s.name.substr(1));
}

// A deterministic stand-in for subprocess_confirmer with its probe rule: the first scenario of a
// batch exiting 2 makes the batch unavailable; later ones exiting 2 are failed outcomes. Ids in
// `exit2` exit 2, multiples of 4 exit 1, ids in `throws` throw; the others succeed with numbers
// that are not sums of simple fractions (and one negative zero). Records the ids it ran.
struct FakeConfirmer {
  std::set<int> exit2;
  std::set<int> throws;
  std::vector<int>* seen = nullptr;

  ConfirmBatch operator()(const std::vector<Scenario>& scenarios, const ProgressFn& /*p*/) const {
    ConfirmBatch batch;
    for (size_t i = 0; i < scenarios.size(); ++i) {
      const int id = id_of(scenarios[i]);
      if (seen != nullptr)
        seen->push_back(id);
      if (throws.count(id) > 0)
        throw std::runtime_error("cannot start capsim for s" + std::to_string(id));
      ConfirmOutcome o;
      if (exit2.count(id) > 0) {
        if (i == 0) {
          batch.available = false;
          batch.reason = "error: bad input in s" + std::to_string(id);
          batch.outcomes.clear();
          return batch;
        }
        o.error = "exit 2: error: bad input in s" + std::to_string(id);
      } else if (id % 4 == 0) {
        o.error = "exit 1: simulate crashed on s" + std::to_string(id);
      } else {
        o.ok = true;
        const double x = static_cast<double>(id);
        o.evaluation = {"event",
                        1.0 / (x + 0.1),
                        x * 1e6 / 3.0,
                        0.1 * x / 7.0,
                        id == 5 ? -0.0 : x * 1.1e9,
                        80.0 * 1024 * 1024 * 1024};
      }
      batch.outcomes.push_back(o);
    }
    return batch;
  }
};

void expect_same_bits(double a, double b, const std::string& what) {
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << what << ": " << a << " vs " << b;
}

// The sharded batch equals the local one field by field, bit for bit.
void expect_same_batch(const ConfirmBatch& sharded, const ConfirmBatch& local) {
  const std::string where = "rank " + std::to_string(g_session->rank());
  EXPECT_EQ(sharded.available, local.available) << where;
  EXPECT_EQ(sharded.reason, local.reason) << where;
  ASSERT_EQ(sharded.outcomes.size(), local.outcomes.size()) << where;
  for (size_t i = 0; i < local.outcomes.size(); ++i) {
    const ConfirmOutcome& s = sharded.outcomes[i];
    const ConfirmOutcome& l = local.outcomes[i];
    const std::string at = where + ", scenario " + std::to_string(i);
    EXPECT_EQ(s.ok, l.ok) << at;
    EXPECT_EQ(s.error, l.error) << at;
    EXPECT_EQ(s.evaluation.engine, l.evaluation.engine) << at;
    expect_same_bits(s.evaluation.iteration_time_s, l.evaluation.iteration_time_s, at);
    expect_same_bits(s.evaluation.tokens_per_s, l.evaluation.tokens_per_s, at);
    expect_same_bits(s.evaluation.mfu, l.evaluation.mfu, at);
    expect_same_bits(s.evaluation.peak_memory_bytes, l.evaluation.peak_memory_bytes, at);
    expect_same_bits(s.evaluation.capacity_bytes, l.evaluation.capacity_bytes, at);
  }
}

std::vector<int> ids(int n) {
  std::vector<int> out;
  for (int i = 1; i <= n; ++i)
    out.push_back(i);
  return out;
}

TEST(MpiShardTest, RunsUnderSeveralRanks) {
  ASSERT_GE(g_session->size(), 2) << "run under mpirun -np 2 or more";
  EXPECT_TRUE(MpiSession::built_with_mpi());
}

TEST(MpiShardTest, SameBatchAsOneProcessAndEachRankRunsItsShare) {
  const std::vector<Scenario> scenarios = batch_of(ids(11));
  std::vector<int> seen;
  FakeConfirmer fake;
  fake.seen = &seen;
  const ConfirmBatch sharded = mpi_sharded(fake, *g_session)(scenarios, {});
  fake.seen = nullptr;
  expect_same_batch(sharded, fake(scenarios, {}));
  std::vector<int> mine;
  for (size_t i = static_cast<size_t>(g_session->rank()); i < scenarios.size();
       i += static_cast<size_t>(g_session->size())) {
    mine.push_back(id_of(scenarios[i]));
  }
  EXPECT_EQ(seen, mine) << "rank " << g_session->rank();
}

TEST(MpiShardTest, ExitTwoPastTheProbeIsAFailedOutcomeOnEveryRank) {
  // Scenario 1 is the first one of rank 1's share; scenario 4 a later one of rank 1 (3 ranks)
  // or rank 0 (2 ranks). With one process only scenario 0 is a probe.
  FakeConfirmer fake;
  fake.exit2 = {2, 5, 7};
  const std::vector<Scenario> scenarios = batch_of(ids(9));
  expect_same_batch(mpi_sharded(fake, *g_session)(scenarios, {}), fake(scenarios, {}));
}

TEST(MpiShardTest, ExitTwoOnTheProbeMakesTheEngineUnavailable) {
  FakeConfirmer fake;
  fake.exit2 = {1, 2};
  const std::vector<Scenario> scenarios = batch_of(ids(7));
  const ConfirmBatch local = fake(scenarios, {});
  ASSERT_FALSE(local.available);
  expect_same_batch(mpi_sharded(fake, *g_session)(scenarios, {}), local);
}

TEST(MpiShardTest, FewerScenariosThanRanks) {
  FakeConfirmer fake;
  for (int n = 0; n <= g_session->size(); ++n) {
    const std::vector<Scenario> scenarios = batch_of(ids(n));
    expect_same_batch(mpi_sharded(fake, *g_session)(scenarios, {}), fake(scenarios, {}));
  }
}

TEST(MpiShardTest, ThrowOnOneRankThrowsOnEveryRank) {
  FakeConfirmer fake;
  fake.throws = {2};  // scenario 1: rank 1 only
  const std::vector<Scenario> scenarios = batch_of(ids(6));
  try {
    (void)mpi_sharded(fake, *g_session)(scenarios, {});
    ADD_FAILURE() << "rank " << g_session->rank() << " did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start capsim for s2"), std::string::npos)
        << e.what();
  }
  // Every rank is still in step: one more sharded batch completes.
  FakeConfirmer ok;
  const std::vector<Scenario> more = batch_of(ids(4));
  expect_same_batch(mpi_sharded(ok, *g_session)(more, {}), ok(more, {}));
}

}  // namespace
}  // namespace capsim::planner

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const capsim::planner::MpiSession session(&argc, &argv);
  capsim::planner::g_session = &session;
  // Every rank prints its results (a failure may be on any rank); any failure fails mpirun.
  return RUN_ALL_TESTS();
}
