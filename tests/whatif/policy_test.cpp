#include "whatif/policy.hpp"

#include <gtest/gtest.h>

#include "io/input_error.hpp"

namespace capsim::whatif {
namespace {

PolicySpec preset(const std::string& name, const nlohmann::json& knobs = nlohmann::json::object()) {
  return make_policy(name, name, knobs, "p.json", "/policies/0");
}

TEST(PolicyTest, ClusterAutoscalerDefaultsFromItsFlags) {
  const auto l = preset("cluster-autoscaler").loop;
  EXPECT_TRUE(l.autoscale);
  EXPECT_DOUBLE_EQ(l.tick_s, 10.0);
  EXPECT_DOUBLE_EQ(l.dwell_s, 600.0);
  EXPECT_DOUBLE_EQ(l.delay_after_add_s, 600.0);
  EXPECT_DOUBLE_EQ(l.delay_after_failure_s, 180.0);
  EXPECT_DOUBLE_EQ(l.utilization_threshold, 0.5);
  EXPECT_DOUBLE_EQ(l.provision_timeout_s, 900.0);
  EXPECT_DOUBLE_EQ(l.backoff_initial_s, 300.0);
  EXPECT_DOUBLE_EQ(l.backoff_max_s, 1800.0);
  EXPECT_DOUBLE_EQ(l.backoff_reset_s, 10800.0);
  EXPECT_EQ(l.max_delete_per_tick, 10);
  EXPECT_EQ(l.scale_down, ScaleDownPredicate::kUnderutilized);
  EXPECT_EQ(l.expander, Expander::kPriority);
}

TEST(PolicyTest, RayV1RateCapAndIdleTimeout) {
  const auto l = preset("ray-v1", {{"upscaling_speed", 2.5}, {"idle_timeout", "1min"}}).loop;
  EXPECT_DOUBLE_EQ(l.tick_s, 5.0);
  EXPECT_DOUBLE_EQ(l.upscaling_speed, 2.5);
  EXPECT_EQ(l.upscaling_floor, 5);
  EXPECT_EQ(l.max_pending, 10);
  EXPECT_DOUBLE_EQ(l.dwell_s, 60.0);
  EXPECT_EQ(l.scale_down, ScaleDownPredicate::kIdle);
}

TEST(PolicyTest, KubeRayConservativeMode) {
  EXPECT_FALSE(preset("kuberay-v2").loop.conservative);
  EXPECT_DOUBLE_EQ(preset("kuberay-v2").loop.dwell_s, 60.0);
  EXPECT_TRUE(preset("kuberay-v2", {{"upscaling_mode", "Conservative"}}).loop.conservative);
}

TEST(PolicyTest, KarpenterConsolidationAndBudget) {
  const auto l = preset("karpenter").loop;
  EXPECT_EQ(l.scale_down, ScaleDownPredicate::kUnderutilized);
  EXPECT_GT(l.utilization_threshold, 1.0);
  EXPECT_DOUBLE_EQ(l.budget_fraction, 0.1);
  EXPECT_DOUBLE_EQ(l.expire_after_s, 720 * 3600.0);
  EXPECT_DOUBLE_EQ(l.demand_delay_s, 1.0);
  EXPECT_TRUE(l.replace_on_notice);
  EXPECT_EQ(l.expander, Expander::kPrice);
  EXPECT_EQ(preset("karpenter", {{"consolidation_policy", "WhenEmpty"}}).loop.scale_down,
            ScaleDownPredicate::kIdle);
}

TEST(PolicyTest, SlurmKnobsMapOntoTheLoop) {
  const auto l = preset("slurm-power-save").loop;
  EXPECT_DOUBLE_EQ(l.resume_rate_per_min, 300.0);
  EXPECT_DOUBLE_EQ(l.tick_s, 10.0);
  EXPECT_DOUBLE_EQ(l.dwell_s, 600.0);
  EXPECT_DOUBLE_EQ(l.termination_s, 30.0);
  EXPECT_DOUBLE_EQ(l.provision_timeout_s, 1800.0);
  EXPECT_DOUBLE_EQ(preset("slurm-power-save", {{"resume_rate", 0}}).loop.resume_rate_per_min, 0.0);
}

TEST(PolicyTest, StackedLoopsAddTheirTimers) {
  const auto l = preset("kuberay-ca-asg").loop;
  EXPECT_DOUBLE_EQ(l.dwell_s, 60.0 + 600.0);  // pod idle timeout, then CA unneeded time
  EXPECT_DOUBLE_EQ(l.demand_delay_s, 5.0);
  EXPECT_DOUBLE_EQ(l.actuation_delay_s, 30.0);
  EXPECT_DOUBLE_EQ(l.tick_s, 10.0);
}

TEST(PolicyTest, StaticNeverScales) {
  const auto l = preset("static").loop;
  EXPECT_FALSE(l.autoscale);
  EXPECT_EQ(l.scale_down, ScaleDownPredicate::kNever);
  EXPECT_TRUE(preset_knobs("static").empty());
}

TEST(PolicyTest, ErrorsNameTheKnob) {
  try {
    (void)preset("cluster-autoscaler", {{"scan_interval", "0s"}});
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_STREQ(e.what(), "p.json:/policies/0/knobs: the loop period must be positive");
  }
  try {
    (void)preset("kuberay-v2", {{"upscaling_mode", "Turbo"}});
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "p.json:/policies/0/knobs/upscaling_mode: expected one of Default, "
                 "Aggressive, Conservative, got \"Turbo\"");
  }
  try {
    (void)make_policy("x", "yarn", nlohmann::json::object(), "p.json", "/policies/0");
    FAIL();
  } catch (const io::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "p.json:/policies/0/preset: unknown preset \"yarn\" (allowed: static, "
                 "cluster-autoscaler, ray-v1, kuberay-v2, karpenter, slurm-power-save, "
                 "kuberay-ca-asg, oracle)");
  }
}

TEST(PolicyTest, EveryPresetDocumentsItsKnobs) {
  for (const auto& p : preset_names()) {
    for (const auto& k : preset_knobs(p)) {
      EXPECT_FALSE(k.meaning.empty()) << p << " " << k.name;
      EXPECT_FALSE(k.default_value.empty()) << p << " " << k.name;
    }
  }
  EXPECT_EQ(preset_knobs("cluster-autoscaler").size(), 12u);
}

}  // namespace
}  // namespace capsim::whatif
