#include "models/iteration_model.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "models/as_double.hpp"
#include "models/collective_cost.hpp"
#include "models/gemm_cost.hpp"
#include "models/gpu_catalog.hpp"
#include "models/leaf_uplinks.hpp"
#include "models/op_cost.hpp"
#include "models/overlap.hpp"
#include "models/parameter_count.hpp"
#include "models/workload.hpp"

namespace capsim {
namespace {

// Compute time of one pass's ops, split by pass.
struct PassTimes {
  double forward_s = 0.0;
  double backward_input_s = 0.0;
  double backward_weight_s = 0.0;
  double attention_forward_s = 0.0;
  double attention_backward_s = 0.0;
};

PassTimes cost_ops(const std::vector<Op>& ops, const HardwareProfile& profile, const GpuSpec& gpu,
                   Precision precision, double seq_length) {
  PassTimes out;
  for (const Op& op : ops) {
    const double t = op_time_s(op, profile, gpu, precision, seq_length);
    if (op.attention_core) {
      (op.pass == Pass::kForward ? out.attention_forward_s : out.attention_backward_s) += t;
    }
    switch (op.pass) {
      case Pass::kForward:
        out.forward_s += t;
        break;
      case Pass::kBackwardInput:
        out.backward_input_s += t;
        break;
      case Pass::kBackwardWeight:
        out.backward_weight_s += t;
        break;
    }
  }
  return out;
}

// The same GPU with `taken` SMs held by communication kernels: fewer SMs per wave and a
// proportionally lower tensor-core peak; HBM bandwidth is unchanged.
GpuSpec without_sms(const GpuSpec& gpu, int taken) {
  GpuSpec g = gpu;
  g.num_sms = std::max(1, gpu.num_sms - taken);
  const double share = d(g.num_sms) / d(gpu.num_sms);
  g.peak_fp16_flop_per_s *= share;
  g.peak_bf16_flop_per_s *= share;
  g.peak_fp8_flop_per_s *= share;
  g.peak_tf32_flop_per_s *= share;
  return g;
}

double pass_total_s(const PassTimes& t) {
  return t.forward_s + t.backward_input_s + t.backward_weight_s;
}

// Megatron orders ranks tensor (fastest), context, data, pipeline; a node holds
// gpus_per_node consecutive ranks. Returns the shape of a group whose members are `stride`
// ranks apart, and the NIC bandwidth one such group gets per node while all groups of its
// kind communicate at once.
GroupShape group_shape(int size, int stride, const ClusterSpec& cluster) {
  GroupShape g;
  g.ranks = size;
  const int per_node = std::max(1, cluster.gpus_per_node / std::max(stride, 1));
  g.ranks_per_node = std::min(size, per_node);
  g.nodes = (size + g.ranks_per_node - 1) / g.ranks_per_node;
  g.nic_bandwidth_per_node_bytes_per_s =
      cluster.node_nic_bandwidth_bytes_per_s() * g.ranks_per_node / d(cluster.gpus_per_node);
  return g;
}

struct LayerComm {
  double forward_s = 0.0;
  double backward_s = 0.0;
};

// Megatron TP per layer: two all-reduces forward and two backward of tokens x h; with SP each
// becomes an all-gather plus a reduce-scatter of the same tokens (Korthikanti et al. §4.2.2).
// The gathers carry `gather_bytes` (fp8 under Transformer Engine, sp_gather_bytes), the
// reduce-scatters the 16-bit `buffer_bytes`.
LayerComm tp_layer_comm(const HardwareProfile& profile, const GroupShape& tp, double buffer_bytes,
                        double gather_bytes, bool sequence_parallel) {
  if (tp.ranks <= 1)
    return {};
  double one = 0.0;
  if (sequence_parallel) {
    one = collective_time_s(profile, CollectiveKind::kAllGather, gather_bytes, tp) +
          collective_time_s(profile, CollectiveKind::kReduceScatter, buffer_bytes, tp);
  } else {
    one = collective_time_s(profile, CollectiveKind::kAllReduce, buffer_bytes, tp);
  }
  return {2.0 * one, 2.0 * one};
}

// Sequence parallelism keeps only each rank's slice of a column-parallel layer's input, while
// its weight gradient needs the whole sequence: the backward pass all-gathers the input again,
// overlapped with the layer's data-gradient GEMM (Megatron-LM's
// LinearWithGradAccumulationAndAsyncCommunication.backward; Transformer Engine's LayerNormLinear
// and LayerNormMLP re-gather ln_out likewise). Returns what those gathers add to the backward
// of `ops`: the exposed part of each and the compute it slows (overlap.hpp).
double sp_backward_regather_s(const std::vector<Op>& ops, const HardwareProfile& profile,
                              const GpuSpec& gpu, Precision precision, double seq_length,
                              const GroupShape& tp, double buffer_bytes, double rate,
                              std::initializer_list<std::string_view> column_parallel) {
  if (tp.ranks <= 1)
    return 0.0;
  const double gather_s = collective_time_s(profile, CollectiveKind::kAllGather, buffer_bytes, tp);
  double added_s = 0.0;
  for (const Op& op : ops) {
    const bool gathered = std::find(column_parallel.begin(), column_parallel.end(),
                                    std::string_view(op.name)) != column_parallel.end();
    if (gathered && op.pass == Pass::kBackwardInput) {
      added_s +=
          overlapped_exposed_s(gather_s, op_time_s(op, profile, gpu, precision, seq_length), rate);
    }
  }
  return added_s;
}

// Bytes a layer's sequence-parallel all-gather moves for `elements` activations. Under fp8,
// Transformer Engine gathers the inputs of its fp8 GEMMs already cast (per-tensor scaling, one
// scale for all ranks): the norm's output before QKV and MLP-up, forward and in the backward's
// re-gather (LayerNormLinear/LayerNormMLP gather the uint8 `ln_out`), and the output gradient
// before the projection's and MLP-down's data gradient (grad_output_preprocess casts, then
// gathers). Reduce-scatters carry the GEMMs' 16-bit outputs, and the head's logits input, a
// Megatron ColumnParallelLinear in 16 bits, is gathered in 16 bits.
double sp_gather_bytes(double elements, Precision precision) {
  return elements * (precision == Precision::kFp8 ? 1.0 : 2.0);
}

struct EdgeComm {
  LayerComm embedding;
  LayerComm head;
};

EdgeComm tp_edge_comm(const HardwareProfile& profile, const GroupShape& tp, double buffer_bytes,
                      bool sequence_parallel) {
  if (tp.ranks <= 1)
    return {};
  const auto time = [&](CollectiveKind kind) {
    return collective_time_s(profile, kind, buffer_bytes, tp);
  };
  if (sequence_parallel) {
    return {{time(CollectiveKind::kReduceScatter), time(CollectiveKind::kAllGather)},
            {time(CollectiveKind::kAllGather), time(CollectiveKind::kReduceScatter)}};
  }
  return {{time(CollectiveKind::kAllReduce), 0.0}, {0.0, time(CollectiveKind::kAllReduce)}};
}

}  // namespace

IterationCosts compute_iteration_costs(const Scenario& scenario, const HardwareProfile& profile) {
  const ModelSpec& m = scenario.model;
  const Parallelism& p = scenario.parallelism;
  const ClusterSpec& c = scenario.cluster;
  const GpuSpec& gpu = *find_gpu(c.gpu);
  // Activations, gradients and gathered parameters travel in 16 bits (fp8 recipes keep bf16
  // activations between layers and bf16 gradients; Transformer Engine).
  const double e = 2.0;
  const double tokens = d(p.micro_batch_size) * d(m.seq_length) / d(p.context);

  IterationCosts costs;
  costs.micro_batches = p.num_micro_batches();
  costs.tp_group = group_shape(p.tensor, 1, c);
  GroupShape cp_group = group_shape(p.context, p.tensor, c);
  // A ring's node-crossing step is one send from one GPU through its own NICs (rail-aligned),
  // however many ring ranks share a node: one GPU's share, as a pipeline hop.
  cp_group.nic_bandwidth_per_node_bytes_per_s =
      c.node_nic_bandwidth_bytes_per_s() / d(c.gpus_per_node);
  // Rings that leave their leaf on an oversubscribed fabric share its uplinks.
  if (const double share = cp_leaf_uplink_share(scenario); share > 0.0) {
    cp_group.nic_bandwidth_per_node_bytes_per_s =
        std::min(cp_group.nic_bandwidth_per_node_bytes_per_s, share);
  }
  costs.dp_group = group_shape(p.data * p.context, p.tensor, c);
  costs.pp_link.ranks = 2;
  const int pp_stride = p.tensor * p.context * p.data;
  costs.pp_link.nodes = pp_stride >= c.gpus_per_node ? 2 : 1;
  costs.pp_link.ranks_per_node = 1;
  // Every GPU of a node sends its slice at once in steady state: one GPU's share of the NICs.
  costs.pp_link.nic_bandwidth_per_node_bytes_per_s =
      c.node_nic_bandwidth_bytes_per_s() / d(c.gpus_per_node);
  costs.dp_bucket_bytes = p.dp_bucket_bytes_or_default();
  costs.megatron_core_buckets = !p.dp_buckets_every_chunk;
  costs.grad_bytes_per_element = p.grad_reduce_bytes_per_element();
  costs.param_bytes_per_element = e;
  costs.tokens_per_iteration = d(p.global_batch_size) * d(m.seq_length);
  costs.model_flop_per_iteration = costs.tokens_per_iteration * model_flop_per_token(m);
  costs.hardware_flop_per_iteration =
      costs.tokens_per_iteration * hardware_flop_per_token(m, p.recompute);

  // One layer, costed once: layers are identical.
  const double seq = attention_kernel_seq_length(m, p);
  const std::vector<Op> layer_ops = lower_layer(m, p);
  const PassTimes layer = cost_ops(layer_ops, profile, gpu, p.precision, seq);
  if (profile.collective_sms > 0) {
    const GpuSpec shared = without_sms(gpu, profile.collective_sms);
    costs.compute_rate_during_comm =
        pass_total_s(layer) / pass_total_s(cost_ops(layer_ops, profile, shared, p.precision, seq));
  }
  const double rate = costs.compute_rate_during_comm;
  const PassTimes embedding = cost_ops(lower_embedding(m, p), profile, gpu, p.precision, seq);
  const std::vector<Op> head_ops = lower_head(m, p);
  const PassTimes head = cost_ops(head_ops, profile, gpu, p.precision, seq);
  const double buffer_bytes = tokens * m.hidden_size * e;
  const double layer_gather_bytes = sp_gather_bytes(tokens * m.hidden_size, p.precision);
  LayerComm tp =
      tp_layer_comm(profile, costs.tp_group, buffer_bytes, layer_gather_bytes, p.sequence_parallel);
  // Vocab-parallel embedding (Megatron-LM): forward all-reduces its output (SP: reduce-scatter),
  // whose backward is free (SP: an all-gather). The head's column-parallel logits take a
  // replicated input: with SP it is all-gathered forward and reduce-scattered backward,
  // without SP the input gradient is all-reduced backward.
  EdgeComm edges = tp_edge_comm(profile, costs.tp_group, buffer_bytes, p.sequence_parallel);
  // The vocab-parallel loss all-reduces per-token fp32 values over TP: the logit maximum, the
  // target logit and the exp-sum (Megatron-Core cross_entropy.py: three; its fused version
  // concatenates the last two, as one-kernel losses with a process group do).
  if (costs.tp_group.ranks > 1) {
    const double loss_reductions = m.cross_entropy == CrossEntropyKernel::kUnfused ? 3.0 : 2.0;
    edges.head.forward_s += loss_reductions * collective_time_s(profile, CollectiveKind::kAllReduce,
                                                                4.0 * tokens, costs.tp_group);
  }
  if (p.sequence_parallel) {
    tp.backward_s +=
        sp_backward_regather_s(layer_ops, profile, gpu, p.precision, seq, costs.tp_group,
                               layer_gather_bytes, rate, {"qkv", "mlp_up"});
    edges.head.backward_s += sp_backward_regather_s(head_ops, profile, gpu, p.precision, seq,
                                                    costs.tp_group, buffer_bytes, rate, {"logits"});
  }

  // Context parallelism: a ring of c-1 K/V exchanges per layer overlapped with the attention
  // of each chunk (Megatron CP, ring attention; Liu et al. 2023); backward also sends dK/dV.
  double cp_fwd_s = 0.0;
  double cp_bwd_s = 0.0;
  if (p.context > 1) {
    const double kv_bytes = 2.0 * tokens * d(m.num_kv_heads) * d(m.head_dim()) / d(p.tensor) * e;
    const double step_s = collective_time_s(profile, CollectiveKind::kSendRecv, kv_bytes, cp_group);
    const double steps = p.context - 1.0;
    cp_fwd_s = steps * overlapped_exposed_s(step_s, layer.attention_forward_s / p.context, rate);
    const double bwd_step_s =
        collective_time_s(profile, CollectiveKind::kSendRecv, 2.0 * kv_bytes, cp_group);
    cp_bwd_s =
        steps * overlapped_exposed_s(bwd_step_s, layer.attention_backward_s / p.context, rate);
  }

  const double layer_params = layer_parameters_per_rank(m, p.tensor);
  const std::vector<int> stage_layers = layers_per_stage(m, p);
  const int v = p.virtual_pipeline_stages;
  int first_layer = 0;
  costs.stages.resize(static_cast<size_t>(p.pipeline));
  // Megatron assigns chunk k of stage s the layers of model chunk k·p + s.
  std::vector<int> chunk_first(static_cast<size_t>(p.pipeline * v), 0);
  const auto chunk_layers = [&](int s, int k) {
    return layers_in_chunk(stage_layers[static_cast<size_t>(s)], s, k, p.pipeline, v);
  };
  for (int k = 0; k < v; ++k) {
    for (int s = 0; s < p.pipeline; ++s) {
      chunk_first[static_cast<size_t>(k * p.pipeline + s)] = first_layer;
      first_layer += chunk_layers(s, k);
    }
  }
  for (int s = 0; s < p.pipeline; ++s) {
    StageCosts& stage = costs.stages[static_cast<size_t>(s)];
    for (int k = 0; k < v; ++k) {
      const int layers = chunk_layers(s, k);
      ChunkCosts ch;
      ch.first_layer = chunk_first[static_cast<size_t>(k * p.pipeline + s)];
      ch.num_layers = layers;
      ch.has_embedding = s == 0 && k == 0;
      ch.has_head = s == p.pipeline - 1 && k == v - 1;
      const double n = layers;
      ch.forward_compute_s = n * layer.forward_s;
      ch.backward_input_s = n * layer.backward_input_s;
      ch.backward_weight_s = n * layer.backward_weight_s;
      ch.forward_tp_comm_s = n * tp.forward_s;
      ch.backward_tp_comm_s = n * tp.backward_s;
      ch.forward_cp_comm_s = n * cp_fwd_s;
      ch.backward_cp_comm_s = n * cp_bwd_s;
      if (p.recompute == Recompute::kFull) {
        ch.recompute_s = n * layer.forward_s;
        ch.recompute_tp_comm_s = n * tp.forward_s;
        ch.backward_cp_comm_s += n * cp_fwd_s;  // the replayed forward's K/V ring
      } else if (p.recompute == Recompute::kSelective) {
        ch.recompute_s = n * layer.attention_forward_s;
        // The recomputed attention core is Transformer Engine's attention with its CP ring
        // (Megatron-Core checkpoints core_attention): the K/V exchange runs again too.
        ch.backward_cp_comm_s += n * cp_fwd_s;
      }
      ch.parameter_count = n * layer_params;
      ch.layer_parameter_count = layer_params;
      if (ch.has_embedding) {
        ch.forward_compute_s += embedding.forward_s;
        ch.backward_input_s += embedding.backward_input_s;
        ch.backward_weight_s += embedding.backward_weight_s;
        ch.forward_tp_comm_s += edges.embedding.forward_s;
        ch.backward_tp_comm_s += edges.embedding.backward_s;
        ch.parameter_count += input_embedding_parameters_per_rank(m, p.tensor);
      }
      if (ch.has_head) {
        ch.forward_compute_s += head.forward_s;
        ch.backward_input_s += head.backward_input_s;
        ch.backward_weight_s += head.backward_weight_s;
        ch.forward_tp_comm_s += edges.head.forward_s;
        ch.backward_tp_comm_s += edges.head.backward_s;
        // Tied embeddings: with pipeline > 1 the last stage keeps its own copy of the word
        // embedding (Megatron-LM), kept in sync by an extra all-reduce we neglect.
        const bool own_copy = m.tied_embeddings && p.pipeline > 1;
        ch.parameter_count += head_parameters_per_rank(m, p.tensor) +
                              (own_copy ? word_embedding_parameters_per_rank(m, p.tensor) : 0.0);
      }
      // Scatter-gather optimisation (Narayanan et al. 2021 §4.1): each TP rank sends 1/t.
      ch.activation_bytes = buffer_bytes / p.tensor;
      stage.parameter_count += ch.parameter_count;
      stage.chunks.push_back(ch);
    }
    // Adam over the local shard (ZeRO >= 1 shards it over DP x CP): read fp32 param, grad,
    // m, v (16 B); write param, m, v (12 B) and the 16-bit copy (2 B); plus the gradient-norm
    // pass for clipping, which reads the fp32 gradients once more (4 B): 34 bytes per parameter.
    const double shard = p.zero_stage >= 1 ? d(p.data * p.context) : 1.0;
    stage.optimizer_s =
        memory_bound_time_s(profile.gemm, gpu, 34.0 * stage.parameter_count / shard) /
        profile.software_efficiency;
  }
  return costs;
}

}  // namespace capsim
