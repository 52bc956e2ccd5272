// Robustness of the scenario, profile, validation/step-run, plan and what-if readers:
// deterministic mutations of shipped valid inputs and of test inputs that use every optional key
// (tests/fuzz/mutation_fuzz.hpp). Every mutant must either load -- and then give finite numbers on
// the path the CLI runs it through -- or be rejected with an InputError naming the file and a JSON
// pointer. Any other exception, a crash or a NaN/inf is a failure. About 9,700 mutants in a few
// seconds. Exploring: CAPSIM_FUZZ_SCALE=25 multiplies every budget; CAPSIM_FUZZ_VERBOSE=1 prints
// each mutant before it runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/step_fit.hpp"
#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "traces/job_trace.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/cluster_io.hpp"
#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/result_io.hpp"
#include "io/scenario_io.hpp"
#include "io/validation_io.hpp"
#include "tests/fuzz/mutation_fuzz.hpp"
#include "tests/test_paths.hpp"
#include "whatif/results.hpp"
#include "whatif/runner.hpp"
#include "whatif/whatif_io.hpp"

namespace capsim {
namespace {

using capsim::testing::kSourceDir;
using capsim::testing::kTestDataDir;
using fuzz::expect_finite;
using fuzz::json;
using fuzz::Mutant;
using fuzz::mutants;
using fuzz::read_json;
using fuzz::report;
using fuzz::run_mutant;
using fuzz::Tally;

// The analytic path of `capsim simulate --engine analytic`: finite, positive times.
void check_scenario_outputs(const Scenario& scenario, const HardwareProfile& profile,
                            const std::string& label) {
  const SimulationResult r = estimate::estimate_iteration(scenario, profile);
  expect_finite(io::result_to_json(r), "estimate_iteration", label);
  expect_finite(r.memory.peak_bytes, "peak memory", label);
  EXPECT_GT(r.iteration_time_s, 0.0) << label;
}

TEST(InputFuzzTest, Scenarios) {
  const fuzz::ScratchDir dir;
  Tally tally;
  std::vector<std::string> sources = {kTestDataDir + "/scenarios/valid.json",
                                      kTestDataDir + "/scenarios/every-optional-key.json",
                                      kTestDataDir + "/scenarios/gb200-nvl72.json"};
  for (const char* name :
       {"gpt3-175b-selene-1024", "gpt-30b-p4d", "llama3-70b-p5", "llama3-70b-b200"})
    sources.push_back(kSourceDir + "/scenarios/" + name + "/scenario.json");
  std::uint32_t seed = 1;
  for (const auto& source : sources) {
    for (const Mutant& m : mutants(read_json(source), 700, seed++)) {
      const std::string path = dir.write("scenario.json", m.doc.dump(2));
      run_mutant(m.label, path, tally, [&] {
        const Scenario s = io::load_scenario(path);
        check_scenario_outputs(s, io::resolve_profile(s), source + ": " + m.label);
      });
    }
  }
  report("scenarios", tally);
}

TEST(InputFuzzTest, Profiles) {
  const fuzz::ScratchDir dir;
  Tally tally;
  const Scenario a100 = io::load_scenario(kTestDataDir + "/scenarios/valid.json");
  const Scenario h100 = io::load_scenario(kSourceDir + "/scenarios/llama3-70b-p5/scenario.json");
  std::uint32_t seed = 11;
  for (const char* name : {"a100-ib.json", "h100-efa.json"}) {
    const std::string source = kSourceDir + "/scenarios/profiles/" + name;
    const Scenario& scenario = name[0] == 'a' ? a100 : h100;
    for (const Mutant& m : mutants(read_json(source), 1200, seed++)) {
      const std::string path = dir.write(name, m.doc.dump(2));
      run_mutant(m.label, path, tally, [&] {
        // `capsim simulate --profile P.json --engine analytic`.
        const HardwareProfile p = io::load_profile(path);
        check_scenario_outputs(scenario, p, source + ": " + m.label);
      });
    }
  }
  report("profiles", tally);
}

// A validation file with the first `n` cases of data/validation/dev.json.
json validation_subset(size_t n) {
  json doc = read_json(kSourceDir + "/data/validation/dev.json");
  json cases = json::array();
  for (size_t i = 0; i < n && i < doc.at("cases").size(); ++i)
    cases.push_back(doc.at("cases").at(i));
  doc["cases"] = cases;
  return doc;
}

TEST(InputFuzzTest, ValidationCasesAndStepRuns) {
  const fuzz::ScratchDir dir;
  Tally tally;
  // `capsim validate --engine analytic` on every mutant; `capsim calibrate step` (the same file
  // format) on a sample of them.
  const std::vector<Mutant> all = mutants(validation_subset(2), 700, 21);
  for (size_t i = 0; i < all.size(); ++i) {
    const Mutant& m = all[i];
    const std::string path = dir.write("runs.json", m.doc.dump(2));
    run_mutant(m.label, path, tally, [&] {
      const std::vector<io::ValidationCase> cases = io::load_validation_cases(path);
      for (const auto& c : cases)
        check_scenario_outputs(c.scenario, io::resolve_profile(c.scenario), m.label);
      if (i % 4 == 0) {
        const calibrate::StepFit fit = calibrate::fit_software_efficiency(
            cases, io::resolve_profile(cases.front().scenario), path);
        expect_finite(fit.software_efficiency, "software_efficiency", m.label);
        for (const double t : fit.predicted_after_s)
          expect_finite(t, "predicted_after_s", m.label);
      }
    });
  }
  report("validation/step runs", tally);
}

// Cluster files (`capsim simulate CLUSTER.json`): read, placed, every job estimated. The shipped
// example without its profile (which would not resolve from the scratch folder) and a one-job
// file naming a scenario by its absolute path.
TEST(InputFuzzTest, Clusters) {
  const fuzz::ScratchDir dir;
  Tally tally;
  json example = read_json(kSourceDir + "/scenarios/cluster/two-jobs-oversubscribed.json");
  example.erase("profile");
  json one_job = read_json(kTestDataDir + "/clusters/one-job.json");
  one_job["jobs"][0]["scenario"] = kTestDataDir + "/scenarios/valid.json";
  std::uint32_t seed = 51;
  for (const json& source : {example, one_job}) {
    for (const Mutant& m : mutants(source, 400, seed++)) {
      const std::string path = dir.write("cluster.json", m.doc.dump(2));
      run_mutant(m.label, path, tally, [&] {
        Catalog catalog;
        const SharedCluster c = io::load_shared_cluster(path, catalog);
        for (const FabricJob& job : c.jobs)
          check_scenario_outputs(job.scenario, io::resolve_profile(job.scenario), m.label);
      });
    }
  }
  report("clusters", tally);
}

TEST(InputFuzzTest, Plans) {
  const fuzz::ScratchDir dir;
  Tally tally;
  // The default plan: read only (its search takes about a second).
  for (const Mutant& m :
       mutants(read_json(kSourceDir + "/scenarios/plans/default.json"), 600, 31)) {
    const std::string path = dir.write("plan.json", m.doc.dump(2));
    run_mutant(m.label, path, tally, [&] { (void)planner::load_plan(path); });
  }
  // Small plans, one with every optional key: read and searched (`capsim plan --engine analytic`).
  std::uint32_t seed = 32;
  for (const char* name :
       {"small.json", "every-optional-key.json", "small-defined-instance.json"}) {
    for (const Mutant& m : mutants(read_json(kTestDataDir + "/plans/" + name), 120, seed++)) {
      const std::string path = dir.write(name, m.doc.dump(2));
      run_mutant(m.label, path, tally, [&] {
        const planner::PlanSpec plan = planner::load_plan(path);
        planner::PlanOptions options;
        options.jobs = 1;
        const planner::PlanResult result = planner::run_plan(plan, options);
        expect_finite(planner::plan_to_json(plan, result, 0, false), "plan JSON", m.label);
        (void)planner::plan_table(plan, result, 0);
      });
    }
  }
  report("plans", tally);
}

TEST(InputFuzzTest, WhatIfs) {
  Tally tally;
  const std::string whatif_dir = kSourceDir + "/scenarios/whatif";
  const std::string default_file = whatif_dir + "/default.json";
  const std::string trace_file = whatif_dir + "/philly_day.csv";
  for (const Mutant& m : mutants(read_json(default_file), 600, 41)) {
    run_mutant(m.label, default_file, tally,
               [&] {
                 const whatif::WhatIf w = whatif::read_whatif(m.doc, default_file, whatif_dir);
                 (void)whatif::expand_policies(w);
               },
               false, {trace_file});
  }
  // Small what-ifs, one with every optional key: read and run (`capsim whatif`, one replica).
  const std::string tiny_dir = kTestDataDir + "/whatif";
  std::uint32_t seed = 42;
  for (const char* name : {"tiny.json", "every-optional-key.json"}) {
    const std::string file = tiny_dir + "/" + name;
    for (const Mutant& m : mutants(read_json(file), 80, seed++)) {
      run_mutant(m.label, file, tally,
                 [&] {
                   const whatif::WhatIf w = whatif::read_whatif(m.doc, file, tiny_dir);
                   const auto policies = whatif::expand_policies(w);
                   const auto runs = whatif::run_all(w, policies, 1, 1);
                   expect_finite(whatif::summary_json(w, runs), "whatif summary", m.label);
                 },
                 false, {tiny_dir + "/jobs.csv"});
    }
  }
  report("whatifs", tally);
}

// Job traces of every format `capsim whatif` imports: one CSV line of each shipped sample cut,
// garbled or short of a field. A trace that loads gives finite, ordered, positive jobs.
TEST(InputFuzzTest, JobTraces) {
  const fuzz::ScratchDir dir;
  Tally tally;
  std::mt19937 rng(81);
  const std::string traces = std::string(CAPSIM_DATA_DIR) + "/traces/";
  const std::vector<std::pair<traces::JobTraceFormat, std::string>> sources = {
      {traces::JobTraceFormat::kCapsimCsv, kTestDataDir + "/whatif/jobs.csv"},
      {traces::JobTraceFormat::kCapsimCsv, kSourceDir + "/scenarios/whatif/philly_day.csv"},
      {traces::JobTraceFormat::kPhillyPollux, traces + "philly_jobs_sample_pollux.csv"},
      {traces::JobTraceFormat::kAlibabaOpenb, traces + "alibaba_openb_pod_list_default_sample.csv"},
      {traces::JobTraceFormat::kPolluxWorkload, traces + "pollux_workload1_philly_derived.csv"}};
  for (const auto& [format, source] : sources) {
    std::vector<std::string> lines = fuzz::split_lines(fuzz::read_text(source));
    lines.resize(std::min<size_t>(lines.size(), 60));  // enough rows; keeps each read short
    size_t header = 0;
    while (header < lines.size() && !lines[header].empty() && lines[header].front() == '#')
      ++header;
    for (size_t k = 0; k < fuzz::scaled(100); ++k) {
      const fuzz::CsvMutant m = fuzz::mutate_csv_line(lines, header + 1, rng);
      traces::JobTraceOptions options;
      options.format = format;
      options.path = dir.write("trace.csv", fuzz::join_lines(m.lines));
      run_mutant(
          m.label, options.path, tally,
          [&] {
            const std::vector<traces::JobRecord> jobs = traces::read_job_trace(options);
            for (size_t i = 0; i < jobs.size(); ++i) {
              expect_finite(jobs[i].submit_s, "submit", m.label);
              expect_finite(jobs[i].duration_s, "duration", m.label);
              EXPECT_GE(jobs[i].submit_s, 0.0) << m.label;
              EXPECT_GE(jobs[i].gpus, 1) << m.label;
              EXPECT_LE(jobs[i].min_gpus, jobs[i].max_gpus) << m.label;
              if (i > 0) {
                EXPECT_LE(jobs[i - 1].submit_s, jobs[i].submit_s) << m.label;
              }
            }
          },
          true);
    }
  }
  report("job traces", tally);
}

}  // namespace
}  // namespace capsim
