#include "models/parameter_count.hpp"

#include <cmath>

#include "models/as_double.hpp"

namespace capsim {
namespace {

// Weights of the attention block: Q and O are h x h, K and V are h x (kv_heads x head_dim).
double attention_weights(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  const double kv = d(m.num_kv_heads) * d(m.head_dim());
  return 2.0 * h * h + 2.0 * h * kv;
}

double mlp_weights(const ModelSpec& m) {
  const double matrices = m.ffn_activation == FfnActivation::kSwiglu ? 3.0 : 2.0;
  return matrices * d(m.hidden_size) * d(m.ffn_hidden_size);
}

}  // namespace

bool is_gpt_family(const ModelSpec& model) {
  return model.ffn_activation == FfnActivation::kGelu;
}

bool has_dropout(const ModelSpec& model) {
  return model.dropout.value_or(is_gpt_family(model));
}

double layer_parameters(const ModelSpec& m) {
  const double h = d(m.hidden_size);
  double params = attention_weights(m) + mlp_weights(m);
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

double padded_vocab_size(const ModelSpec& m, int tensor) {
  const double multiple = d(kVocabPaddingMultiple) * d(tensor);
  return std::ceil(d(m.vocab_size) / multiple) * multiple;
}

double layer_parameters_per_rank(const ModelSpec& m, int tensor) {
  // Replicated on every rank: GPT's two LayerNorms (weight and bias) and the biases of the
  // row-parallel output projection and MLP down projection; Llama's two RMSNorms.
  const double h = d(m.hidden_size);
  const double replicated = is_gpt_family(m) ? 4.0 * h + 2.0 * h : 2.0 * h;
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
  return d(m.num_layers) * layer_parameters(m) + input_embedding_parameters(m) + head_parameters(m);
}

double matmul_parameters(const ModelSpec& m) {
  // The logits GEMM uses V x h weights whether or not they are tied to the input embedding.
  return d(m.num_layers) * (attention_weights(m) + mlp_weights(m)) +
         d(m.vocab_size) * d(m.hidden_size);
}

}  // namespace capsim
