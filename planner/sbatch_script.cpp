#include "planner/sbatch_script.hpp"

#include <cctype>
#include <string>

#include "planner/megatron_args.hpp"

#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

// A job name Slurm and a shell accept: letters, digits, '-', '_' and '.'.
std::string job_name(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const bool plain =
        std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
    out += plain ? c : '_';
  }
  return out.empty() ? "capsim" : out;
}

}  // namespace

std::string sbatch_script(const Scenario& scenario) {
  const ClusterSpec& c = scenario.cluster;
  const std::string arguments = megatron_arguments(scenario, MegatronArgumentSet::kComplete);
  std::string array;
  size_t start = 0;
  while (start < arguments.size()) {
    size_t next = arguments.find(" --", start);
    if (next == std::string::npos)
      next = arguments.size();
    array += "  " + arguments.substr(start, next - start) + "\n";
    start = next + 1;
  }
  const std::string gpu = c.instance.empty() ? c.gpu.name : c.instance + ", " + c.gpu.name;
  return io::printf_string(
      "#!/bin/bash\n"
      "# Megatron-LM run of %s on %d nodes x %d GPUs (%s) (capsim export sbatch).\n"
      "#SBATCH --job-name=%s\n"
      "#SBATCH --nodes=%d\n"
      "#SBATCH --ntasks-per-node=1\n"
      "#SBATCH --gpus-per-node=%d\n"
      "#SBATCH --exclusive\n"
      "set -euo pipefail\n"
      "\n"
      "MODEL_ARGS=(\n"
      "%s"
      ")\n"
      "# The run's own arguments: data, tokenizer, checkpoints, logging (--data-path,\n"
      "# --tokenizer-model, --save, --load, ...).\n"
      "RUN_ARGS=(\n"
      ")\n"
      "\n"
      "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
      "MASTER_PORT=6000\n"
      "srun torchrun --nnodes \"$SLURM_NNODES\" --nproc-per-node %d \\\n"
      "  --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d "
      "--rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" \\\n"
      "  pretrain_gpt.py \"${MODEL_ARGS[@]}\" \"${RUN_ARGS[@]}\"\n",
      scenario.name.c_str(), c.num_nodes, c.gpus_per_node, gpu.c_str(),
      job_name(scenario.name).c_str(), c.num_nodes, c.gpus_per_node, array.c_str(),
      c.gpus_per_node);
}

}  // namespace capsim::planner
