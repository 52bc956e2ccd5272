#include "calibrate/step_fit.hpp"

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/datasheet_profile.hpp"
#include "models/gpu_catalog.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/input_error.hpp"
#include "io/scenario_io.hpp"

namespace capsim::calibrate {
namespace {

Scenario base_scenario() {
  return io::load_scenario(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
}

HardwareProfile profile_for(const Scenario& s) {
  return datasheet_profile(s.cluster.gpu, s.cluster);
}

// A run "measured" on a stack whose kernels run at `efficiency` and whose attention kernels at
// `attention` of the profile's figures: the analytic prediction with those factors.
io::ValidationCase measured_run(const std::string& id, const Scenario& scenario, double efficiency,
                                double attention = 1.0) {
  io::ValidationCase run;
  run.id = id;
  run.scenario = scenario;
  HardwareProfile p = profile_for(scenario);
  for (double* e :
       {&p.attention.forward_efficiency_hd128, &p.attention.forward_efficiency_hd64,
        &p.attention.backward_efficiency_hd128, &p.attention.backward_efficiency_hd64}) {
    *e *= attention;
  }
  p.software_efficiency = efficiency;
  run.measured_iteration_time_s = estimate::estimate_iteration(scenario, p).iteration_time_s;
  return run;
}

// Three layouts of the same model measured on a stack at `efficiency`.
std::vector<io::ValidationCase> runs_at(double efficiency) {
  std::vector<io::ValidationCase> runs;
  for (int mb : {1, 2, 4}) {
    Scenario s = base_scenario();
    s.parallelism.micro_batch_size = mb;
    runs.push_back(measured_run("mb" + std::to_string(mb), s, efficiency));
  }
  return runs;
}

TEST(SoftwareEfficiencyTest, DividesEveryKernelTime) {
  const Scenario s = base_scenario();
  HardwareProfile p = profile_for(s);
  const SimulationResult full = estimate::estimate_iteration(s, p);
  p.software_efficiency = 0.5;
  const SimulationResult half = estimate::estimate_iteration(s, p);
  EXPECT_NEAR(half.breakdown.compute_s, 2.0 * full.breakdown.compute_s,
              1e-12 * full.breakdown.compute_s);
  EXPECT_NEAR(half.breakdown.optimizer_s, 2.0 * full.breakdown.optimizer_s,
              1e-12 * full.breakdown.optimizer_s);
  EXPECT_GT(half.iteration_time_s, full.iteration_time_s);
}

TEST(StepFitTest, RecoversTheEfficiencyRunsWereMeasuredAt) {
  for (double efficiency : {0.55, 0.8, 1.0, 1.3}) {
    const auto runs = runs_at(efficiency);
    const StepFit fit = fit_software_efficiency(runs, profile_for(runs[0].scenario), "runs.json");
    EXPECT_NEAR(fit.software_efficiency, efficiency, 1e-6 * efficiency);
    ASSERT_EQ(fit.predicted_after_s.size(), runs.size());
    for (size_t i = 0; i < runs.size(); ++i) {
      EXPECT_NEAR(fit.predicted_after_s[i], runs[i].measured_iteration_time_s,
                  1e-5 * runs[i].measured_iteration_time_s);
    }
    // Before the fit the base profile (efficiency 1) predicts faster for slower stacks.
    if (efficiency < 1.0) {
      EXPECT_LT(fit.predicted_before_s[0], runs[0].measured_iteration_time_s);
    }
  }
}

// With --attention: runs at three sequence lengths measured on a stack whose kernels run at 0.8
// and whose attention runs at 0.6 of the profile's figures; both factors are recovered.
TEST(StepFitTest, RecoversAnAttentionFactorAcrossSequenceLengths) {
  std::vector<io::ValidationCase> runs;
  for (int seq : {1024, 4096, 16384}) {
    Scenario s = base_scenario();
    s.model.seq_length = seq;
    runs.push_back(measured_run("s" + std::to_string(seq), s, 0.8, 0.6));
  }
  const HardwareProfile base = profile_for(runs[0].scenario);
  const StepFit fit = fit_software_efficiency(runs, base, "runs.json", true);
  EXPECT_NEAR(fit.software_efficiency, 0.8, 2e-3);
  EXPECT_NEAR(fit.attention_scale, 0.6, 2e-3);
  EXPECT_NEAR(fit.profile.attention.forward_efficiency_hd128,
              0.6 * base.attention.forward_efficiency_hd128, 2e-3);
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_NEAR(fit.predicted_after_s[i], runs[i].measured_iteration_time_s,
                1e-3 * runs[i].measured_iteration_time_s);
  }
  // One sequence length cannot separate the two factors.
  try {
    (void)fit_software_efficiency(runs_at(0.8), base, "runs.json", true);
    FAIL() << "no error";
  } catch (const io::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "runs.json:/cases: fitting attention needs runs at two or more sequence lengths");
  }
}

// Five runs of one stack at 0.8 and one of an odd stack at 0.4: the absolute-error fit stays at
// the five (a squared-error fit would move to ~0.71 for the one).
TEST(StepFitTest, OneOddRunDoesNotPullTheFit) {
  std::vector<io::ValidationCase> runs;
  for (int mb : {1, 2, 3, 4, 8}) {
    Scenario s = base_scenario();
    s.parallelism.micro_batch_size = mb;
    runs.push_back(measured_run("mb" + std::to_string(mb), s, 0.8));
  }
  runs.push_back(measured_run("odd", base_scenario(), 0.4));
  const StepFit fit = fit_software_efficiency(runs, profile_for(runs[0].scenario), "runs.json");
  EXPECT_NEAR(fit.software_efficiency, 0.8, 1e-3);
}

TEST(StepFitTest, SettingTheEfficiencyReplacesItsProvenanceLine) {
  HardwareProfile p = profile_for(base_scenario());
  p.provenance = {"gemm: a fit", "software_efficiency 1: benchmark speed", "attention: published"};
  set_software_efficiency(p, 0.9, "software_efficiency 0.9 fitted to runs");
  EXPECT_DOUBLE_EQ(p.software_efficiency, 0.9);
  EXPECT_EQ(p.provenance, (std::vector<std::string>{"gemm: a fit", "attention: published",
                                                    "software_efficiency 0.9 fitted to runs"}));
}

TEST(StepFitTest, CrossValidationIsExactOnAConsistentStack) {
  const auto runs = runs_at(0.7);
  const auto mape = cross_validate_one_step(runs, profile_for(runs[0].scenario), "runs.json");
  ASSERT_EQ(mape.size(), runs.size());
  for (double m : mape)
    EXPECT_LT(m, 1e-3);
}

TEST(StepFitTest, RejectsOtherArchitecturesAndNoRuns) {
  auto runs = runs_at(0.8);
  runs[1].scenario.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  try {
    (void)fit_software_efficiency(runs, profile_for(runs[0].scenario), "runs.json");
    FAIL() << "no error";
  } catch (const io::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "runs.json:/cases/1/scenario/cluster/gpu: run \"mb2\" is on H100-SXM5-80GB, the "
                 "profile \"datasheet:A100-SXM4-80GB+infiniband\" on A100-SXM4-80GB (ampere)");
  }
  try {
    (void)fit_software_efficiency({}, profile_for(base_scenario()), "runs.json");
    FAIL() << "no error";
  } catch (const io::InputError& e) {
    EXPECT_STREQ(e.what(), "runs.json:/cases: no measured runs to calibrate on");
  }
}

// One factor serves datasheet profiles of one architecture on one fabric (a B200 node and a
// GB200 tray), not another fabric or architecture, nor two measured profiles of different names.
TEST(StepFitTest, OneFactorServesAFamilyOnOneFabric) {
  Scenario b200 = base_scenario();
  b200.cluster.gpu = *builtin_catalog().find_gpu("B200-SXM-180GB");
  Scenario gb200 = b200;
  gb200.cluster.gpu = *builtin_catalog().find_gpu("GB200-NVL-186GB");
  Scenario h100 = b200;
  h100.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  EXPECT_TRUE(one_factor_serves(profile_for(b200), profile_for(gb200)));
  EXPECT_FALSE(one_factor_serves(profile_for(b200), profile_for(h100)));
  Scenario efa = gb200;
  efa.cluster.inter_node_fabric = Fabric::kEfa;
  EXPECT_FALSE(one_factor_serves(profile_for(b200), profile_for(efa)));
  HardwareProfile measured = profile_for(gb200);
  measured.is_datasheet_default = false;
  measured.name = "gb200-fitted";
  EXPECT_FALSE(one_factor_serves(profile_for(b200), measured));
  EXPECT_TRUE(one_factor_serves(measured, measured));
  // A GB300's datasheet profile runs at its own tensor speed: its runs fit apart.
  Scenario gb300 = gb200;
  gb300.cluster.gpu = *builtin_catalog().find_gpu("GB300-NVL-288GB");
  HardwareProfile faster = profile_for(gb300);
  faster.tensor_speed = 1.3;
  EXPECT_FALSE(one_factor_serves(profile_for(gb200), faster));
  EXPECT_TRUE(one_factor_serves(faster, faster));
}

}  // namespace
}  // namespace capsim::calibrate
