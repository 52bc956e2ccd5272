#include "cli/commands.hpp"

namespace capsim::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands{
      {"simulate", "simulate one training iteration of a scenario", run_simulate},
      {"validate", "compare predictions with measured runs (capsim.validation/v1)", run_validate},
      {"calibrate", "fit a hardware profile from nccl-tests logs and GEMM measurements",
       run_calibrate},
      {"plan", "find the cheapest cluster and layout that meets a training target", run_plan},
      {"whatif", "replay a job trace on an autoscaled cluster under each policy", run_whatif},
      {"import", "read a Megatron-LM launch script or a Hugging Face config.json", run_import},
      {"export", "write a scenario as Megatron-LM arguments", run_export},
  };
  return kCommands;
}

}  // namespace capsim::cli
