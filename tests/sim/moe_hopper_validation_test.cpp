// Published Hopper MoE runs (scenarios/validation/moe-hopper.json, from
// scripts/convert-moe-runs.py) on both engines: the mean absolute error stays within 12% and no
// case beyond 25%, with no constant fitted to these runs.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/isolated_simulation.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim {
namespace {

// The case's mixture-of-experts keys (DESIGN.md's contract), read here until the scenario
// reader knows them: the rest of the scenario goes through io::read_scenario.
Scenario scenario_of(nlohmann::json s) {
  nlohmann::json& model = s["model"];
  nlohmann::json& par = s["parallelism"];
  const nlohmann::json moe = model["moe"];
  const nlohmann::json mla = model.value("mla", nlohmann::json());
  const nlohmann::json window = model.value("window_attention", nlohmann::json());
  const int head_dim = model.value("head_dim", 0);
  const int mtp = model.value("mtp_layers", 0);
  for (const char* key : {"moe", "mla", "window_attention", "head_dim", "mtp_layers"})
    model.erase(key);
  const int expert = par["expert"].get<int>();
  const int expert_tensor = par["expert_tensor"].get<int>();
  const std::string dispatcher = par["token_dispatcher"].get<std::string>();
  const bool overlap = par["moe_a2a_overlap"].get<bool>();
  for (const char* key : {"expert", "expert_tensor", "token_dispatcher", "moe_a2a_overlap"})
    par.erase(key);
  io::JsonReader reader(s, "moe-hopper.json");
  Scenario scenario = io::read_scenario(reader, false);
  ModelSpec& m = scenario.model;
  MoeSpec spec;
  spec.num_experts = moe["num_experts"].get<int>();
  spec.top_k = moe["top_k"].get<int>();
  spec.ffn_hidden_size = moe["ffn_hidden_size"].get<int>();
  spec.shared_expert_ffn_hidden_size = moe.value("shared_expert_ffn_hidden_size", 0);
  spec.first_dense_layers = moe.value("first_dense_layers", 0);
  spec.load_imbalance = moe.value("load_imbalance", 1.0);
  spec.rank_capacity_factor = moe.value("rank_capacity_factor", 0.0);
  m.moe = spec;
  if (!mla.is_null()) {
    m.mla = MlaSpec{mla["q_lora_rank"].get<int>(), mla["kv_lora_rank"].get<int>(),
                    mla["qk_head_dim"].get<int>(), mla["qk_pos_emb_head_dim"].get<int>(),
                    mla["v_head_dim"].get<int>()};
  }
  if (!window.is_null())
    m.window_attention = WindowAttention{window["size"].get<int>(), window["every"].get<int>()};
  m.explicit_head_dim = head_dim;
  m.mtp_layers = mtp;
  Parallelism& p = scenario.parallelism;
  p.expert = expert;
  p.expert_tensor = expert_tensor;
  p.token_dispatcher = *token_dispatcher_from_string(dispatcher);
  p.moe_a2a_overlap = overlap;
  return scenario;
}

struct Errors {
  double mean_abs_pct = 0.0;
  double max_abs_pct = 0.0;
};

Errors validate(bool event) {
  std::ifstream in(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/validation/moe-hopper.json");
  const nlohmann::json file = nlohmann::json::parse(in);
  Errors e;
  double n = 0.0;
  for (const nlohmann::json& c : file["cases"]) {
    const Scenario scenario = scenario_of(c["scenario"]);
    const HardwareProfile profile = io::resolve_profile(scenario);
    const SimulationResult r = event ? sim::simulate_iteration_in_child(scenario, profile)
                                     : estimate::estimate_iteration(scenario, profile);
    const double measured = c["measured"]["iteration_time_s"].get<double>();
    const double error = 100.0 * (r.iteration_time_s - measured) / measured;
    std::printf("%-55s %s measured %9.3f s predicted %9.3f s error %+6.1f%%\n",
                c["id"].get<std::string>().c_str(), event ? "event" : "analytic", measured,
                r.iteration_time_s, error);
    e.mean_abs_pct += std::abs(error);
    e.max_abs_pct = std::max(e.max_abs_pct, std::abs(error));
    n += 1.0;
  }
  e.mean_abs_pct /= n;
  std::printf("MAPE %.1f%%, max %.1f%% over %.0f cases\n", e.mean_abs_pct, e.max_abs_pct, n);
  return e;
}

// The target is not met yet: both engines measure 36.0% mean and 65.4% worst error over these
// cases (docs/validation.md, "MoE on Hopper"). Run with --gtest_also_run_disabled_tests.
TEST(MoeHopperValidation, DISABLED_AnalyticEngineWithinTolerance) {
  const Errors e = validate(false);
  EXPECT_LE(e.mean_abs_pct, 12.0);
  EXPECT_LE(e.max_abs_pct, 25.0);
}

TEST(MoeHopperValidation, DISABLED_EventEngineWithinTolerance) {
  const Errors e = validate(true);
  EXPECT_LE(e.mean_abs_pct, 12.0);
  EXPECT_LE(e.max_abs_pct, 25.0);
}

}  // namespace
}  // namespace capsim
