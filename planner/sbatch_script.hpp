#pragma once

#include <string>

#include "models/scenario.hpp"

namespace capsim::planner {

// Returns a Slurm batch script skeleton that runs `scenario` with Megatron-LM: #SBATCH lines for
// its nodes and GPUs per node, the complete argument list (megatron_arguments) as a bash array,
// an empty array for the run's own data, tokenizer and checkpoint arguments, and one
// `srun torchrun ... pretrain_gpt.py` line (one torchrun per node, c10d rendezvous on the first
// node). `capsim import megatron` reads the script back as `scenario`.
[[nodiscard]] std::string sbatch_script(const Scenario& scenario);

}  // namespace capsim::planner
