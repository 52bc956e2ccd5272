#include "models/parameter_count.hpp"

#include <algorithm>
#include <cmath>

#include "models/as_double.hpp"

namespace capsim {
namespace {

// Weights of the attention block. GQA: Q and O are h x (heads x head_dim), K and V are h x
// (kv_heads x head_dim). MLA (DeepSeek-V2 §2.1): the query and key-value down and up
// projections, the decoupled rotary key, and O from heads x v_head_dim.
double attention_weights(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const double heads = d(m.num_attention_heads);
    const double q_width = heads * d(a.qk_head_dim + a.qk_pos_emb_head_dim);
    const double q = a.q_lora_rank > 0 ? d(a.q_lora_rank) * (h + q_width) : h * q_width;
    const double kv = h * d(a.kv_lora_rank + a.qk_pos_emb_head_dim) +
                      d(a.kv_lora_rank) * heads * d(a.qk_head_dim + a.v_head_dim);
    return q + kv + heads * d(a.v_head_dim) * h;
  }
  const double kv = d(m.num_kv_heads) * d(m.head_dim());
  const double q = query_width(m);
  return 2.0 * h * q + 2.0 * h * kv;
}

// The latent norms of MLA (the query latent's when it has one, and the key-value latent's).
double attention_norm_weights(const ModelSpec& m) {
  if (!m.mla)
    return 0.0;
  return d(m.mla->q_lora_rank) + d(m.mla->kv_lora_rank);
}

double gated_matrices(const ModelSpec& m) {
  return is_gated(m.ffn_activation) ? 3.0 : 2.0;
}

double mlp_weights(const ModelSpec& m) {
  return gated_matrices(m) * d(m.hidden_size) * d(m.ffn_hidden_size);
}

// One expert of `ffn` width: up (and gate) and down projections.
double expert_weights(const ModelSpec& m, int ffn) {
  return gated_matrices(m) * d(m.hidden_size) * d(ffn);
}

// A mixture-of-experts FFN's weights outside the routed experts: the router (h x experts) and
// the shared expert.
double moe_dense_weights(const ModelSpec& m) {
  const MoeSpec& e = *m.moe;
  return d(m.hidden_size) * d(e.num_experts) + expert_weights(m, e.shared_expert_ffn_hidden_size);
}

// A MoE layer without its routed experts (attention, router, shared expert, norms).
double moe_layer_dense_parameters(const ModelSpec& m) {
  return attention_weights(m) + attention_norm_weights(m) + moe_dense_weights(m) +
         2.0 * d(m.hidden_size);
}

double num_moe_layers(const ModelSpec& m) {
  if (!m.moe)
    return 0.0;
  const int after_dense = m.num_layers - std::min(m.moe->first_dense_layers, m.num_layers);
  return d(after_dense / m.moe->layer_interval);
}

}  // namespace

double query_width(const ModelSpec& m) {
  return m.explicit_head_dim > 0 ? d(m.num_attention_heads) * d(m.explicit_head_dim)
                                 : d(m.hidden_size);
}

double expert_parameters(const ModelSpec& m) {
  if (!m.moe)
    return 0.0;
  return d(m.moe->num_experts) * expert_weights(m, m.moe->ffn_hidden_size);
}

double moe_layer_parameters(const ModelSpec& m) {
  return moe_layer_dense_parameters(m) + expert_parameters(m);
}

double moe_layer_dense_parameters_per_rank(const ModelSpec& m, int tensor) {
  const double replicated = 2.0 * d(m.hidden_size) + attention_norm_weights(m);
  return (moe_layer_dense_parameters(m) - replicated) / d(tensor) + replicated;
}

double expert_parameters_per_rank(const ModelSpec& m, const Parallelism& p) {
  return expert_parameters(m) / d(p.expert * p.expert_tensor_or_default());
}

double mtp_extra_parameters(const ModelSpec& m) {
  // Per MTP module (DeepSeek-V3 §2.2): two RMSNorms on its inputs and the 2h x h projection;
  // the embedding and the output head are shared with the main model.
  const double h = d(m.hidden_size);
  return 2.0 * h + 2.0 * h * h;
}

double active_parameters(const ModelSpec& m) {
  if (!m.moe)
    return total_parameters(m);
  const double routed = d(m.moe->top_k) * expert_weights(m, m.moe->ffn_hidden_size);
  return total_parameters(m) - num_moe_layers(m) * (expert_parameters(m) - routed);
}

bool is_gpt_family(const ModelSpec& model) {
  return model.ffn_activation == FfnActivation::kGelu;
}

bool has_dropout(const ModelSpec& model) {
  return model.dropout.value_or(is_gpt_family(model));
}

double layer_parameters(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  double params = attention_weights(m) + attention_norm_weights(m) + mlp_weights(m);
  if (is_gpt_family(m)) {
    const double kv = d(m.num_kv_heads) * d(m.head_dim());
    params += (h + 2.0 * kv) + h;        // QKV and output-projection biases
    params += d(m.ffn_hidden_size) + h;  // MLP biases
    params += 4.0 * h;                   // two LayerNorms, weight and bias
  } else {
    params += 2.0 * h;  // two RMSNorms
  }
  return params;
}

std::vector<double> layer_parameter_tensors_per_rank(const ModelSpec& m, int tensor,
                                                     bool moe_layer) {
  const double h = d(m.hidden_size);
  const double t = d(tensor);
  const bool moe = moe_layer && m.moe;
  // As layer_parameters and moe_layer_dense_parameters count them: a MoE layer has no biases.
  const bool gpt = is_gpt_family(m) && !moe;
  std::vector<double> tensors;
  const auto norm = [&] {
    tensors.push_back(h);
    if (gpt)
      tensors.push_back(h);
  };
  // A weight split over TP and, for GPT, its bias: split with a column-parallel weight,
  // replicated beside a row-parallel one.
  const auto linear = [&](double weight, double bias_width, bool column_parallel) {
    tensors.push_back(weight / t);
    if (gpt)
      tensors.push_back(column_parallel ? bias_width / t : bias_width);
  };
  norm();
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const double heads = d(m.num_attention_heads);
    const double q_width = heads * d(a.qk_head_dim + a.qk_pos_emb_head_dim);
    if (a.q_lora_rank > 0) {
      tensors.push_back(h * d(a.q_lora_rank) / t);
      tensors.push_back(d(a.q_lora_rank));
      tensors.push_back(d(a.q_lora_rank) * q_width / t);
    } else {
      tensors.push_back(h * q_width / t);
    }
    tensors.push_back(h * d(a.kv_lora_rank + a.qk_pos_emb_head_dim) / t);
    tensors.push_back(d(a.kv_lora_rank));
    tensors.push_back(d(a.kv_lora_rank) * heads * d(a.qk_head_dim + a.v_head_dim) / t);
    tensors.push_back(heads * d(a.v_head_dim) * h / t);
  } else {
    const double q = query_width(m);
    const double kv = d(m.num_kv_heads) * d(m.head_dim());
    linear(h * (q + 2.0 * kv), q + 2.0 * kv, true);
    linear(q * h, h, false);
  }
  norm();
  const double up_matrices = gated_matrices(m) - 1.0;
  if (moe) {
    tensors.push_back(h * d(m.moe->num_experts) / t);
    if (const double ffn = d(m.moe->shared_expert_ffn_hidden_size); ffn > 0.0) {
      tensors.push_back(up_matrices * h * ffn / t);
      tensors.push_back(ffn * h / t);
    }
  } else {
    const double ffn = d(m.ffn_hidden_size);
    linear(up_matrices * h * ffn, ffn, true);
    linear(ffn * h, h, false);
  }
  return tensors;
}

double padded_vocab_size(const ModelSpec& m, int tensor) {
  const double multiple = d(kVocabPaddingMultiple) * d(tensor);
  return std::ceil(d(m.vocab_size) / multiple) * multiple;
}

double layer_parameters_per_rank(const ModelSpec& m, int tensor) {
  // Replicated on every rank: GPT's two LayerNorms (weight and bias) and the biases of the
  // row-parallel output projection and MLP down projection; Llama's two RMSNorms.
  const double h = d(m.hidden_size);
  const double replicated =
      (is_gpt_family(m) ? 4.0 * h + 2.0 * h : 2.0 * h) + attention_norm_weights(m);
  return (layer_parameters(m) - replicated) / d(tensor) + replicated;
}

double layer_matmul_parameters_per_rank(const ModelSpec& m, int tensor) {
  return (attention_weights(m) + mlp_weights(m)) / d(tensor);
}

double word_embedding_parameters_per_rank(const ModelSpec& m, int tensor) {
  return padded_vocab_size(m, tensor) * d(m.hidden_size) / d(tensor);
}

double input_embedding_parameters_per_rank(const ModelSpec& m, int tensor) {
  const double positions = input_embedding_parameters(m) - d(m.vocab_size) * d(m.hidden_size);
  return word_embedding_parameters_per_rank(m, tensor) + positions;
}

double head_parameters_per_rank(const ModelSpec& m, int tensor) {
  const double norm = (is_gpt_family(m) ? 2.0 : 1.0) * d(m.hidden_size);
  return norm + (m.tied_embeddings ? 0.0 : word_embedding_parameters_per_rank(m, tensor));
}

double input_embedding_parameters(const ModelSpec& m) {
  double params = d(m.vocab_size) * d(m.hidden_size);
  if (is_gpt_family(m))
    params += d(m.seq_length) * d(m.hidden_size);  // learned positions
  return params;
}

double head_parameters(const ModelSpec& m) {
  const double norm = (is_gpt_family(m) ? 2.0 : 1.0) * d(m.hidden_size);
  const double output = m.tied_embeddings ? 0.0 : d(m.vocab_size) * d(m.hidden_size);
  return norm + output;
}

double total_parameters(const ModelSpec& m) {
  const double moe_layers = num_moe_layers(m);
  const double layers = (d(m.num_layers) - moe_layers) * layer_parameters(m) +
                        (moe_layers > 0.0 ? moe_layers * moe_layer_parameters(m) : 0.0);
  return layers + input_embedding_parameters(m) + head_parameters(m);
}

double matmul_parameters(const ModelSpec& m) {
  // The logits GEMM uses V x h weights whether or not they are tied to the input embedding.
  const double moe_layers = num_moe_layers(m);
  double layers = (d(m.num_layers) - moe_layers) * (attention_weights(m) + mlp_weights(m));
  if (moe_layers > 0.0) {
    const double routed = d(m.moe->top_k) * expert_weights(m, m.moe->ffn_hidden_size);
    layers += moe_layers * (attention_weights(m) + moe_dense_weights(m) + routed);
  }
  return layers + d(m.vocab_size) * d(m.hidden_size);
}

}  // namespace capsim
