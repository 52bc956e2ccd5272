#include "whatif/throughput.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "estimate/analytic_estimator.hpp"
#include "io/input_error.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

namespace capsim::whatif {
namespace {

Fabric fabric_of(const std::string& name) {
  return fabric_from_string(name).value_or(Fabric::kInfiniband);
}

// The GPU counts a scenario's layout scales to are multiples of this: tensor x pipeline x
// context, and for mixture-of-experts layers also pipeline x expert x expert_tensor, which
// each stage's GPUs fold into (estimate/layout_rules.hpp, kExpertFolding).
int layout_step(const Parallelism& p) {
  const int model_parallel = p.tensor * p.pipeline * p.context;
  return std::lcm(model_parallel, p.pipeline * p.expert * p.expert_tensor_or_default());
}

// Why `gpus` cannot run the scenario at `path` laid out as `p`.
std::string step_problem(const std::string& job, int gpus, const Parallelism& p,
                         const std::string& path) {
  const int model_parallel = p.tensor * p.pipeline * p.context;
  std::string out = "job " + job + " asks for " + std::to_string(gpus) + " GPUs, not a " +
                    "multiple of tensor x pipeline x context = " + std::to_string(model_parallel);
  if (layout_step(p) != model_parallel) {
    out += " and of pipeline x expert x expert_tensor = " +
           std::to_string(p.pipeline * p.expert * p.expert_tensor_or_default());
  }
  return out + " in " + path;
}

bool admissible(int gpus, int model_parallel, int gpus_per_node) {
  return gpus % model_parallel == 0 && (gpus <= gpus_per_node || gpus % gpus_per_node == 0);
}

}  // namespace

ThroughputFn default_throughput() {
  return [](const Scenario& scenario) {
    return estimate::estimate_iteration(scenario, io::resolve_profile(scenario),
                                        estimate::EstimateDetail::kTimeOnly)
        .tokens_per_s;
  };
}

Scenario scale_scenario(const Scenario& base, const InstanceSpec& instance, int gpus) {
  Scenario s = base;
  auto& c = s.cluster;
  c.gpu = instance.gpu;
  c.instance = instance.name;
  c.gpus_per_node = std::min(gpus, instance.gpus_per_node);
  c.num_nodes = gpus / c.gpus_per_node;
  c.intra_node_bandwidth_bytes_per_s = instance.gpu.nvlink_bandwidth_bytes_per_s;
  c.inter_node_fabric = fabric_of(instance.fabric);
  c.nics_per_node = instance.nics_per_node;
  c.nic_bandwidth_bytes_per_s = instance.nic_bandwidth_bytes_per_s;
  c.has_inter_node = c.num_nodes > 1;
  auto& p = s.parallelism;
  const int mp = p.tensor * p.pipeline * p.context;
  p.data = gpus / mp;
  const int step = p.micro_batch_size * p.data;
  p.global_batch_size = (p.global_batch_size + step - 1) / step * step;
  return s;
}

void fill_scenario_models(WhatIf& whatif, const ThroughputFn& throughput) {
  std::map<std::string, Scenario> scenarios;
  for (const auto& job : whatif.jobs) {
    if (job.scenario_path.empty())
      continue;
    auto it = scenarios.find(job.scenario_path);
    if (it == scenarios.end()) {
      it = scenarios.emplace(job.scenario_path, io::load_scenario(job.scenario_path)).first;
    }
    const Scenario& base = it->second;
    const int mp = layout_step(base.parallelism);
    auto& model = whatif.scenario_models[job.scenario_path];
    model.scenario_path = job.scenario_path;
    model.model_parallel = mp;
    for (const int g : {job.min_gpus, job.gpus, job.max_gpus}) {
      if (g % mp != 0) {
        throw io::InputError(whatif.file, "/jobs",
                             step_problem(job.id, g, base.parallelism, job.scenario_path));
      }
    }
    for (const auto& pool : whatif.pools) {
      auto& rates = model.tokens_per_s[pool.instance.name];
      const int gpn = pool.gpus_per_node();
      for (int g = job.min_gpus; g <= std::min(job.max_gpus, pool.max_nodes * gpn); g += mp) {
        if (!admissible(g, mp, gpn) || rates.count(g) > 0)
          continue;
        rates[g] = throughput(scale_scenario(base, pool.instance, g));
      }
    }
  }
}

}  // namespace capsim::whatif
