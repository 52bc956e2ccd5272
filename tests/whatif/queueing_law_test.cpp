// Queueing laws on long generated traces: a static pool of c nodes, jobs that each take one
// whole node, Poisson arrivals and exponential run times, first come first served, is an
// M/M/c queue. Its mean wait has a closed form (Erlang C; Kleinrock, Queueing Systems I,
// §3.5), Little's law ties the queue's time average to the mean wait, and the cost is the
// billed node-hours times the price.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/whatif/whatif_test_util.hpp"
#include "whatif/runner.hpp"

namespace capsim::whatif {
namespace {

using testing::job;
using testing::pool;

constexpr double kServiceMeanS = 3600.0;
constexpr int kJobsPerReplica = 20000;
constexpr int kReplicas = 8;

// Mean wait in queue of M/M/c with arrival rate `lambda` and service rate `mu` (Erlang C).
double erlang_c_mean_wait(int c, double lambda, double mu) {
  const double a = lambda / mu;  // offered load
  double term = 1.0, sum = 1.0;  // a^k / k!, summed for k < c
  for (int k = 1; k < c; ++k) {
    term *= a / k;
    sum += term;
  }
  const double last = term * a / c;  // a^c / c!
  const double rho = a / c;
  const double wait_probability = last / (1.0 - rho) / (sum + last / (1.0 - rho));
  return wait_probability / (c * mu - lambda);
}

// One replica: `count` one-node jobs, Poisson arrivals at `lambda`, exponential run times.
WhatIf mmc_trace(int servers, double lambda, std::uint64_t seed, double sample_every_s) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(lambda);
  std::exponential_distribution<double> service(1.0 / kServiceMeanS);
  std::vector<traces::JobRecord> jobs;
  double t = 0.0;
  for (int i = 0; i < kJobsPerReplica; ++i) {
    t += gap(rng);
    jobs.push_back(job("j" + std::to_string(i), t, 8, service(rng)));
  }
  WhatIf w = testing::whatif({pool("od", servers, servers, 0.0)}, std::move(jobs));
  w.timeline_interval_s = sample_every_s;
  return w;
}

struct ReplicaMeans {
  double mean = 0.0;
  double standard_error = 0.0;
};

// The mean of the replicas' mean waits and its standard error (sample std / sqrt(replicas)):
// replicas are independent, unlike the waits within one trace, which are strongly correlated.
ReplicaMeans mean_wait_over_replicas(int servers, double lambda, std::uint64_t first_seed) {
  std::vector<double> means;
  for (int r = 0; r < kReplicas; ++r) {
    const WhatIf w =
        mmc_trace(servers, lambda, first_seed + static_cast<std::uint64_t>(r), 30 * 86400.0);
    const PolicyResult run = run_all(w, {testing::policy("static")}, 1, 1).front().runs.front();
    EXPECT_EQ(run.jobs_finished, kJobsPerReplica);
    means.push_back(run.queue_wait_mean_s);
  }
  double mean = 0.0;
  for (double m : means)
    mean += m / kReplicas;
  double variance = 0.0;
  for (double m : means)
    variance += (m - mean) * (m - mean) / (kReplicas - 1);
  return {mean, std::sqrt(variance / kReplicas)};
}

// Tolerance: four standard errors of the replica mean (a Student t with 7 degrees of freedom
// exceeds 4 with probability 0.5%), plus the bias of starting empty, which over 20,000 jobs at
// these loads is below 0.5% of the mean wait.
void expect_mean_wait(int servers, double rho, std::uint64_t first_seed) {
  const double mu = 1.0 / kServiceMeanS;
  const double lambda = rho * servers * mu;
  const double expected = erlang_c_mean_wait(servers, lambda, mu);
  const ReplicaMeans got = mean_wait_over_replicas(servers, lambda, first_seed);
  SCOPED_TRACE("M/M/" + std::to_string(servers) + " at load " + std::to_string(rho));
  EXPECT_GT(got.standard_error, 0.0);
  EXPECT_NEAR(got.mean, expected, 4.0 * got.standard_error + 0.005 * expected)
      << "standard error " << got.standard_error;
  ::testing::Test::RecordProperty("mean_wait_s", std::to_string(got.mean));
  ::testing::Test::RecordProperty("closed_form_s", std::to_string(expected));
  ::testing::Test::RecordProperty("standard_error_s", std::to_string(got.standard_error));
}

TEST(QueueingLawTest, MM1MeanWaitIsTheClosedForm) {
  // rho / (mu - lambda) = 0.6 / (0.4 / 3600 s) = 5,400 s.
  EXPECT_NEAR(erlang_c_mean_wait(1, 0.6 / kServiceMeanS, 1.0 / kServiceMeanS), 5400.0, 1e-6);
  expect_mean_wait(1, 0.6, 1000);
}

TEST(QueueingLawTest, MMcMeanWaitIsErlangC) {
  expect_mean_wait(4, 0.75, 2000);
}

// Little's law, L = lambda W, on one run: the time average of the queue (sampled every 10 min,
// PASTA's deterministic-time counterpart) against the arrival rate times the mean wait. The
// samples' error over 20,000 jobs is a few per cent at most; the tolerance is 5%. The cost is
// the billed node-hours times the price, to rounding.
TEST(QueueingLawTest, LittlesLawAndCostHoldOnALongRun) {
  const int servers = 4;
  const double lambda = 0.75 * servers / kServiceMeanS;
  const WhatIf w = mmc_trace(servers, lambda, 3000, 600.0);
  const PolicyResult run = run_all(w, {testing::policy("static")}, 1, 1).front().runs.front();
  const double span = w.jobs.back().submit_s;
  double queued = 0.0, in_system = 0.0;
  int samples = 0;
  for (const auto& s : run.timeline.samples) {
    if (s.time_s > span)
      break;
    queued += s.jobs_queued;
    in_system += s.jobs_queued + s.jobs_running;
    ++samples;
  }
  ASSERT_GT(samples, 10000);
  const double arrival_rate = kJobsPerReplica / span;
  EXPECT_NEAR(queued / samples, arrival_rate * run.queue_wait_mean_s,
              0.05 * arrival_rate * run.queue_wait_mean_s);
  // Sojourn = wait + run time; the mean run time is the trace's own.
  double service = 0.0;
  for (const auto& j : w.jobs)
    service += j.duration_s / kJobsPerReplica;
  EXPECT_NEAR(in_system / samples, arrival_rate * (run.queue_wait_mean_s + service),
              0.05 * arrival_rate * (run.queue_wait_mean_s + service));
  const double node_hours = run.gpu_hours_billed / 8.0;
  EXPECT_NEAR(run.cost_usd, node_hours * w.pools.front().price_usd_per_hour, 1e-9 * run.cost_usd);
}

}  // namespace
}  // namespace capsim::whatif
