#pragma once

#include <string>

#include "models/scenario.hpp"

#include "io/scenario_io.hpp"

namespace capsim::test {

// The shipped Qwen3-235B-A22B scenario (TP2 PP8 EP32, DeepEP, the all-to-all overlap) on
// DualPipeV: two chunks per stage, its 94 layers split 12 x 7 + 10.
inline Scenario qwen3_235b_on_dualpipev() {
  Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                 "/scenarios/qwen3-235b-h100/scenario.json");
  s.parallelism.schedule = Schedule::kDualPipeV;
  s.parallelism.virtual_pipeline_stages = 2;
  s.parallelism.stage_layers = {12, 12, 12, 12, 12, 12, 12, 10};
  return s;
}

}  // namespace capsim::test
