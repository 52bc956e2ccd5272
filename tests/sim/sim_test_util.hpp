#pragma once

// Helpers for event-engine tests: hand-made scenarios, costs and profiles with round numbers,
// and running a second simulation in a forked child (SimGrid allows one per process).

#include <cstdio>
#include <functional>
#include <string>

#include "models/catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/iteration_costs.hpp"
#include "models/scenario.hpp"

#include <sys/wait.h>
#include <unistd.h>

namespace capsim::test {

// A GPT-like model on A100 nodes of 8 GPUs with DGX-style NICs (one 25 GB/s NIC per GPU).
inline Scenario make_scenario(int tp, int pp, int dp, int micro_batches, Schedule schedule,
                              int virtual_stages = 1) {
  Scenario s;
  s.name = "test";
  s.model = {"test-model", 8 * pp * virtual_stages, 4096, 32,    32,
             16384,        FfnActivation::kGelu,    2048, 51200, false};
  s.cluster.gpu = *builtin_catalog().find_gpu("A100-SXM4-80GB");
  s.cluster.gpus_per_node = 8;
  s.cluster.num_nodes = std::max(1, tp * pp * dp / 8);
  s.cluster.intra_node_bandwidth_bytes_per_s = 300e9;
  s.cluster.has_inter_node = s.cluster.num_nodes > 1;
  s.cluster.nics_per_node = 8;
  s.cluster.nic_bandwidth_bytes_per_s = 25e9;
  s.cluster.topology = Topology::kRailOptimized;
  s.parallelism.tensor = tp;
  s.parallelism.pipeline = pp;
  s.parallelism.data = dp;
  s.parallelism.micro_batch_size = 1;
  s.parallelism.global_batch_size = micro_batches * dp;
  s.parallelism.schedule = schedule;
  s.parallelism.virtual_pipeline_stages = virtual_stages;
  return s;
}

// Ring-only collectives, no latency: intra-node bus bandwidth 200 GB/s, inter-node 20 GB/s.
inline HardwareProfile make_profile(double latency_s = 0.0) {
  HardwareProfile p;
  p.name = "test-profile";
  p.gpu = *builtin_catalog().find_gpu("A100-SXM4-80GB");
  p.fabric = "infiniband";
  CollectiveFit intra;
  intra.inter_node = false;
  intra.algorithms.push_back({CollectiveAlgorithm::kRing, latency_s, 0.0, 0.0, 200e9});
  CollectiveFit inter;
  inter.inter_node = true;
  inter.algorithms.push_back({CollectiveAlgorithm::kRing, latency_s, 0.0, 0.0, 20e9});
  p.collectives = {intra, inter};
  return p;
}

// Per micro-batch and chunk: forward f, backward b (input half, weight half), given bytes.
inline IterationCosts make_costs(const Scenario& sc, double f, double b, double optimizer_s,
                                 double activation_bytes, double params_per_gpu) {
  IterationCosts c;
  const Parallelism& par = sc.parallelism;
  const int v = par.virtual_pipeline_stages;
  c.micro_batches = par.num_micro_batches();
  for (int s = 0; s < par.pipeline; ++s) {
    StageCosts st;
    for (int k = 0; k < v; ++k) {
      ChunkCosts ch;
      ch.num_layers = 4;
      ch.forward_compute_s = f / v;
      ch.backward_input_s = b / v / 2.0;
      ch.backward_weight_s = b / v / 2.0;
      ch.activation_bytes = activation_bytes;
      ch.parameter_count = params_per_gpu / v;
      st.chunks.push_back(ch);
    }
    st.parameter_count = params_per_gpu;
    st.optimizer_s = optimizer_s;
    c.stages.push_back(st);
  }
  const int g = sc.cluster.gpus_per_node;
  const int dpc = par.data * par.context;
  c.tp_group = {par.tensor, std::min(par.tensor, g), std::max(1, par.tensor / g), 0.0};
  const int dp_ppn = std::max(1, std::min(dpc, g / std::min(par.tensor, g)));
  c.dp_group = {dpc, dp_ppn, std::max(1, dpc / dp_ppn),
                sc.cluster.node_nic_bandwidth_bytes_per_s() * dp_ppn / g};
  c.pp_link = {2, 1, 2, sc.cluster.node_nic_bandwidth_bytes_per_s() / g};
  c.dp_bucket_bytes = 25e6;
  c.tokens_per_iteration = par.global_batch_size * sc.model.seq_length;
  c.model_flop_per_iteration = 1e15;
  c.hardware_flop_per_iteration = 1e15;
  return c;
}

// Runs `body` in a forked child and returns what it printed into the pipe.
inline std::string run_in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (pipe(fds) != 0)
    return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("exception: ") + e.what();
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0)
        break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0)
    out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

inline std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace capsim::test
