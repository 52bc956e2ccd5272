#include "models/pipeline_partition.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "models/parameter_count.hpp"

namespace capsim {
namespace {

// Specs before the first transformer layer (the cast and the embedding) and after the last
// (final norm, head, cast back): Megatron-DeepSpeed megatron/model/gpt_model.py, GPTModelPipe.
constexpr int kSpecsBefore = 2;
constexpr int kSpecsAfter = 3;

}  // namespace

// DeepSpeed deepspeed/runtime/utils.py, partition_uniform (microsoft/DeepSpeed at 029615a3).
std::vector<int> partition_uniform(int num_items, int num_parts) {
  std::vector<int> parts(static_cast<size_t>(num_parts) + 1, 0);
  if (num_items <= num_parts) {
    for (int p = 0; p <= num_parts; ++p)
      parts[static_cast<size_t>(p)] = std::min(p, num_items);
    return parts;
  }
  const int chunk = num_items / num_parts;
  const int residual = num_items - chunk * num_parts;
  for (int p = 0; p <= num_parts; ++p)
    parts[static_cast<size_t>(p)] = p * chunk + std::min(p, residual);
  return parts;
}

// DeepSpeed deepspeed/runtime/utils.py, partition_balanced (microsoft/DeepSpeed at 029615a3):
// the linear partition problem, cost = max part - min part, over every cut k of the first i
// items into j parts.
std::vector<int> partition_balanced(const std::vector<double>& weights, int num_parts) {
  const int n = static_cast<int>(weights.size());
  const int m = num_parts;
  if (n <= m)
    return partition_uniform(n, m);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const auto at = [m](int i, int j) { return static_cast<size_t>(i) * (m + 1) + j; };
  const size_t cells = static_cast<size_t>(n + 1) * static_cast<size_t>(m + 1);
  std::vector<double> dp_max(cells, kInf);
  std::vector<double> dp_min(cells, kInf);
  std::vector<double> dp_cost(cells, kInf);
  std::vector<int> position(cells, 0);
  std::vector<double> prefix(static_cast<size_t>(n) + 1, 0.0);
  for (int i = 0; i < n; ++i)
    prefix[static_cast<size_t>(i) + 1] =
        prefix[static_cast<size_t>(i)] + weights[static_cast<size_t>(i)];
  dp_max[at(0, 0)] = 0.0;
  dp_cost[at(0, 0)] = 0.0;
  for (int i = 1; i <= n; ++i) {
    for (int j = 1; j <= std::min(i, m); ++j) {
      for (int k = 0; k < i; ++k) {
        const double part = prefix[static_cast<size_t>(i)] - prefix[static_cast<size_t>(k)];
        const double max_sum = std::max(dp_max[at(k, j - 1)], part);
        const double min_sum = std::min(dp_min[at(k, j - 1)], part);
        const double cost = max_sum - min_sum;
        if (dp_cost[at(i, j)] >= cost) {
          dp_cost[at(i, j)] = cost;
          dp_max[at(i, j)] = max_sum;
          dp_min[at(i, j)] = min_sum;
          position[at(i, j)] = k;
        }
      }
    }
  }
  std::vector<int> parts{n};
  for (int j = m; j >= 1; --j)
    parts.push_back(position[at(parts.back(), j)]);
  std::reverse(parts.begin(), parts.end());
  return parts;
}

double balanced_partition_work(const ModelSpec& model, int pipeline) {
  const double specs = static_cast<double>(model.num_layers) + kSpecsBefore + kSpecsAfter;
  return (specs + 1.0) * (specs + 1.0) * static_cast<double>(pipeline);
}

std::vector<double> layer_spec_parameters(const ModelSpec& model, const Parallelism& parallelism) {
  const int t = parallelism.tensor;
  const double embedding = input_embedding_parameters_per_rank(model, t);
  const double word = word_embedding_parameters_per_rank(model, t);
  // The tied head is the embedding module built again (a TiedLayerSpec): its parameters count
  // in full; an untied head is the output layer, the word embedding's shape.
  const double head = model.tied_embeddings ? embedding : word;
  const double final_norm =
      head_parameters_per_rank(model, t) - (model.tied_embeddings ? 0.0 : word);
  std::vector<double> out{0.0, embedding};
  for (int layer = 0; layer < model.num_layers; ++layer) {
    out.push_back(model.is_moe_layer(layer) ? moe_layer_dense_parameters_per_rank(model, t) +
                                                  expert_parameters_per_rank(model, parallelism)
                                            : layer_parameters_per_rank(model, t));
  }
  out.push_back(final_norm);
  out.push_back(head);
  out.push_back(0.0);
  return out;
}

std::vector<int> deepspeed_stage_layers(const ModelSpec& model, const Parallelism& parallelism,
                                        PartitionMethod method) {
  const int specs = model.num_layers + kSpecsBefore + kSpecsAfter;
  const std::vector<int> parts =
      method == PartitionMethod::kUniform
          ? partition_uniform(specs, parallelism.pipeline)
          : partition_balanced(layer_spec_parameters(model, parallelism), parallelism.pipeline);
  std::vector<int> out;
  for (size_t s = 0; s + 1 < parts.size(); ++s) {
    // Transformer layers are specs [kSpecsBefore, kSpecsBefore + num_layers).
    const int first = std::max(parts[s], kSpecsBefore);
    const int last = std::min(parts[s + 1], kSpecsBefore + model.num_layers);
    out.push_back(std::max(last - first, 0));
  }
  return out;
}

}  // namespace capsim
