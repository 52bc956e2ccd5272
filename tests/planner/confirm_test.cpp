// forked_confirmer: each scenario in a forked child, outcomes in scenario order, failures with
// how the child ended, the availability probe; and the event evaluation's figures are those
// `capsim simulate --json` prints.
#include "planner/confirm.hpp"

#include <bit>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/memory_model.hpp"
#include "planner/plan_io.hpp"
#include "planner/planner.hpp"

#include "io/input_error.hpp"
#include "io/scenario_io.hpp"
#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"
#include <unistd.h>

namespace capsim::planner {
namespace {

using capsim::testing::kTestDataDir;

// An event evaluation with the given iteration time.
Evaluation evaluation(double iteration_time_s) {
  return {"event", iteration_time_s, 1000.0 / iteration_time_s, 0.5, 40.0 * kGiB, 80.0 * kGiB};
}

std::vector<Scenario> scenarios_with_layers(const std::vector<int>& layers) {
  std::vector<Scenario> out;
  const PlanSpec plan = load_plan(kTestDataDir + "/plans/small.json");
  for (const int n : layers) {
    Scenario sc;
    sc.name = "s" + std::to_string(n);
    sc.model = plan.model;
    sc.model.num_layers = n;
    out.push_back(sc);
  }
  return out;
}

TEST(ConfirmTest, OutcomesComeInScenarioOrder) {
  // Later scenarios finish first: the children sleep less the further down the list.
  const std::vector<Scenario> scenarios = scenarios_with_layers({4, 3, 2, 1});
  const ConfirmFn confirm = forked_confirmer(3, [](const Scenario& sc) {
    usleep(static_cast<useconds_t>(40000 * sc.model.num_layers));
    return evaluation(sc.model.num_layers);
  });
  long long last_done = 0;
  const ConfirmBatch batch =
      confirm(scenarios, [&](const char* phase, long long done, long long total) {
        EXPECT_STREQ(phase, "confirm");
        EXPECT_EQ(total, 4);
        EXPECT_EQ(done, last_done + 1);
        last_done = done;
      });
  ASSERT_TRUE(batch.available);
  ASSERT_EQ(batch.outcomes.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(batch.outcomes[i].ok) << batch.outcomes[i].error;
    EXPECT_EQ(batch.outcomes[i].evaluation.iteration_time_s, 4.0 - static_cast<double>(i));
  }
  EXPECT_EQ(last_done, 4);
}

TEST(ConfirmTest, FailuresSayHowTheChildEnded) {
  const std::vector<Scenario> scenarios = scenarios_with_layers({1, 2, 3, 4});
  const ConfirmFn confirm = forked_confirmer(2, [](const Scenario& sc) -> Evaluation {
    switch (sc.model.num_layers) {
      case 2:
        throw std::runtime_error("boom");
      case 3:
        std::fprintf(stderr, "out of memory\n");
        std::fflush(stderr);
        raise(SIGKILL);
        return {};
      case 4:
        return evaluation(0.0);  // no time: nothing to rank on
      default:
        return evaluation(1.0);
    }
  });
  const ConfirmBatch batch = confirm(scenarios, {});
  ASSERT_TRUE(batch.available);
  ASSERT_EQ(batch.outcomes.size(), 4u);
  EXPECT_TRUE(batch.outcomes[0].ok);
  EXPECT_FALSE(batch.outcomes[1].ok);
  EXPECT_EQ(batch.outcomes[1].error, "exit 1: boom");
  EXPECT_FALSE(batch.outcomes[2].ok);
  EXPECT_EQ(batch.outcomes[2].error, "killed by signal 9 (Killed): out of memory");
  EXPECT_FALSE(batch.outcomes[3].ok);
  EXPECT_EQ(batch.outcomes[3].error,
            "event engine result without a positive, finite iteration time and throughput");
}

// Bad input on the probe (scenario 0) means the engine cannot run: the batch is unavailable;
// past the probe it is a failed outcome like any other.
TEST(ConfirmTest, BadInputOnTheProbeMakesTheBatchUnavailable) {
  const ConfirmFn refusing = forked_confirmer(2, [](const Scenario& sc) -> Evaluation {
    if (sc.model.num_layers == 1)
      throw io::InputError("f.json", "/profile", "no event engine here");
    return evaluation(1.0);
  });
  const ConfirmBatch unavailable = refusing(scenarios_with_layers({1, 2}), {});
  EXPECT_FALSE(unavailable.available);
  EXPECT_EQ(unavailable.reason, "f.json:/profile: no event engine here");
  EXPECT_TRUE(unavailable.outcomes.empty());
  const ConfirmBatch later = refusing(scenarios_with_layers({2, 1}), {});
  ASSERT_TRUE(later.available);
  ASSERT_EQ(later.outcomes.size(), 2u);
  EXPECT_TRUE(later.outcomes[0].ok);
  EXPECT_EQ(later.outcomes[1].error, "exit 2: f.json:/profile: no event engine here");
}

TEST(ConfirmTest, UnavailableEventEngineFallsBackToTheScreen) {
  PlanOptions opts;
  opts.confirm = forked_confirmer(2, [](const Scenario&) -> Evaluation {
    throw io::InputError("--engine", "", "must be analytic");
  });
  const PlanResult r = run_plan(load_plan(kTestDataDir + "/plans/small.json"), opts);
  EXPECT_FALSE(r.event_available);
  EXPECT_EQ(r.event_unavailable_reason, "--engine: must be analytic");
  EXPECT_EQ(r.confirmations, 0);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_EQ(r.candidates[r.ranked[0].candidate].final_evaluation().engine, "analytic");
}

TEST(ConfirmTest, FailedConfirmationsKeepTheScreensNumbers) {
  PlanOptions opts;
  opts.confirm = forked_confirmer(
      2, [](const Scenario&) -> Evaluation { throw std::runtime_error("internal error: boom"); });
  const PlanResult r = run_plan(load_plan(kTestDataDir + "/plans/small.json"), opts);
  EXPECT_TRUE(r.event_available);
  EXPECT_EQ(r.confirmations, static_cast<int>(r.candidates.size()));
  for (const auto& c : r.candidates) {
    EXPECT_FALSE(c.confirmed);
    EXPECT_EQ(c.confirm_error, "exit 1: internal error: boom");
    EXPECT_EQ(c.final_evaluation().engine, "analytic");
  }
}

// The confirmation ranks on the figures `capsim simulate FILE --engine event --json` prints for
// the scenario written to FILE: to 6 significant digits, memory in GiB as printed.
TEST(ConfirmTest, EventEvaluationIsWhatSimulatePrintsForTheWrittenScenario) {
  const PlanSpec plan = load_plan(kTestDataDir + "/plans/small.json");
  Candidate c;
  c.num_nodes = 2;
  c.parallelism.tensor = 8;
  c.parallelism.pipeline = 2;
  c.parallelism.data = 1;
  c.parallelism.micro_batch_size = 1;
  c.parallelism.global_batch_size = 64;
  const Scenario sc = candidate_scenario(plan, c);
  const std::string file =
      ::testing::TempDir() + "capsim_confirm_" + std::to_string(getpid()) + ".json";
  std::ofstream(file) << io::scenario_to_json(sc).dump(2) << "\n";
  const capsim::testing::CommandResult cli =
      capsim::testing::run_capsim("simulate " + file + " --engine event --json");
  std::filesystem::remove(file);
  ASSERT_EQ(cli.exit_code, 0);
  const nlohmann::json printed = nlohmann::json::parse(cli.out);
  const Evaluation e = evaluate_event(sc);
  EXPECT_EQ(e.engine, printed.at("engine").get<std::string>());
  EXPECT_EQ(e.iteration_time_s, printed.at("iteration_time_s").get<double>());
  EXPECT_EQ(e.tokens_per_s, printed.at("tokens_per_s").get<double>());
  EXPECT_EQ(e.mfu, printed.at("mfu").get<double>());
  const nlohmann::json& memory = printed.at("memory");
  EXPECT_EQ(e.peak_memory_bytes, memory.at("peak_gib_per_gpu").get<double>() * kGiB);
  EXPECT_EQ(e.capacity_bytes, memory.at("capacity_gib").get<double>() * kGiB);
}

// A confirmation child's evaluation arrives bit for bit, whatever its figures.
TEST(ConfirmTest, EvaluationRoundTripsBitForBit) {
  const Evaluation sent{"event",
                        0.1 + 0.2,
                        1.0 / 3.0,
                        std::nextafter(0.5, 1.0),
                        std::numeric_limits<double>::denorm_min(),
                        -0.0};
  const Evaluation got = decode_evaluation(encode_evaluation(sent));
  EXPECT_EQ(got.engine, "event");
  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  EXPECT_EQ(bits(got.iteration_time_s), bits(sent.iteration_time_s));
  EXPECT_EQ(bits(got.tokens_per_s), bits(sent.tokens_per_s));
  EXPECT_EQ(bits(got.mfu), bits(sent.mfu));
  EXPECT_EQ(bits(got.peak_memory_bytes), bits(sent.peak_memory_bytes));
  EXPECT_EQ(bits(got.capacity_bytes), bits(sent.capacity_bytes));
}

TEST(ConfirmTest, ForeignBytesAreNoEvaluation) {
  const std::string bytes = encode_evaluation(evaluation(2.5));
  EXPECT_THROW((void)decode_evaluation(""), std::runtime_error);
  EXPECT_THROW((void)decode_evaluation(bytes.substr(0, bytes.size() - 1)), std::runtime_error);
  EXPECT_THROW((void)decode_evaluation(bytes + "x"), std::runtime_error);
  EXPECT_THROW((void)decode_evaluation("not an evaluation"), std::runtime_error);
}

}  // namespace
}  // namespace capsim::planner
