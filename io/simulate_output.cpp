#include "io/simulate_output.hpp"

#include <algorithm>

#include "models/byte_units.hpp"
#include "models/kernel_table.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/in_situ_prior.hpp"
#include "io/kernel_table_io.hpp"
#include "io/result_io.hpp"
#include "io/rounding.hpp"

namespace capsim::io {

std::optional<std::string> profile_note(const HardwareProfile& profile) {
  if (profile.is_datasheet_default) {
    // The prior with_in_situ_prior gave it (its stack's, where one was fitted) is its last
    // software_efficiency provenance line.
    const auto last_line = [&profile](const std::string& prefix) {
      return std::find_if(profile.provenance.rbegin(), profile.provenance.rend(),
                          [&prefix](const std::string& line) { return line.starts_with(prefix); });
    };
    const auto prior = last_line("software_efficiency ");
    const auto speed = last_line("tensor_speed ");
    return "profile " + profile.name +
           ": kernels and collectives from the GPU's datasheet figures, not fitted to "
           "measurements of it; " +
           (prior != profile.provenance.rend() ? *prior
                                               : in_situ_prior(profile.gpu.architecture).source) +
           (speed != profile.provenance.rend() ? "; " + *speed : "");
  }
  if (profile.has_datasheet_network) {
    return "profile " + profile.name +
           ": inter-node collectives from the datasheet model (no measurement of this network "
           "ships); kernels as the GPU family's shipped profile";
  }
  return std::nullopt;
}

std::optional<estimate::StageBalance> suggested_stage_balance(const Scenario& scenario,
                                                              const IterationCosts& costs,
                                                              const HardwareProfile& profile,
                                                              const SimulationResult& result) {
  if (scenario.parallelism.pipeline <= 1)
    return std::nullopt;
  if (result.engine == "analytic") {
    return estimate::balance_stage_layers(scenario, profile, std::nullopt,
                                          estimate::kMaxBalanceWork, &result);
  }
  const SimulationResult current = estimate::estimate_iteration(scenario, costs, profile);
  return estimate::balance_stage_layers(scenario, profile, std::nullopt, estimate::kMaxBalanceWork,
                                        &current);
}

nlohmann::json stage_balance_to_json(const estimate::StageBalance& balance) {
  nlohmann::json j = {{"stage_layers", balance.stage_layers},
                      {"iteration_time_s", round_significant(balance.iteration_time_s)},
                      {"current_iteration_time_s", round_significant(balance.current_time_s)},
                      {"peak_gib_per_gpu", round_significant(balance.peak_bytes / kGiB)},
                      {"fits", balance.fits},
                      {"engine", "analytic"}};
  if (balance.search_capped)
    j["search_capped"] = true;
  return j;
}

nlohmann::json simulate_output_json(const SimulationResult& result, const Scenario& scenario,
                                    const IterationCosts& costs, const HardwareProfile& profile,
                                    bool kernels) {
  nlohmann::json out = result_to_json(result);
  if (const auto balance = suggested_stage_balance(scenario, costs, profile, result))
    out["stage_balance"] = stage_balance_to_json(*balance);
  if (kernels)
    out["kernels"] = kernel_table_to_json(kernel_table(scenario, profile));
  return out;
}

}  // namespace capsim::io
