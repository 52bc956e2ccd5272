#pragma once

#include <string>
#include <vector>

#include "models/cluster_spec.hpp"
#include "models/model_spec.hpp"
#include "models/parallelism.hpp"
#include "models/pipeline_placement.hpp"
#include "models/training_stack.hpp"

namespace capsim {

// The input of `capsim simulate`: a model on a cluster with a layout and a profile.
struct Scenario {
  std::string name;
  ModelSpec model;
  ClusterSpec cluster;
  Parallelism parallelism;
  std::string profile_path;  // resolved path; empty: the default profile of the cluster
  // The training stack the scenario names (its settings already applied to the model's kernels
  // and the parallelism's stack keys), or nullptr; points into training_stacks().
  const TrainingStack* stack = nullptr;
};

// Whether `layers` split over `virtual_stages` (pipeline × virtual chunks) as Megatron-Core
// does with --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split:
// embedding and loss count as a layer each: layers + 2 divide evenly, layers do not; the first and
// last virtual stage hold one layer less (none at one per stage: 405B's 126 layers on 16 x 8).
[[nodiscard]] bool is_megatron_embedding_loss_split(int layers, int virtual_stages);

// Layers held by each pipeline stage: stage_layers, DeepSpeed's split (partition_method), an
// even split, or Megatron's split that counts the embedding and the loss as layers
// (is_megatron_embedding_loss_split).
[[nodiscard]] std::vector<int> layers_per_stage(const ModelSpec& model,
                                                const Parallelism& parallelism);

// Layers of virtual chunk `chunk` of a stage holding `stage_layers` over `virtual_stages`
// chunks. When they do not divide evenly, the chunks that hold the embedding (stage 0's first)
// or the loss (the last stage's last) get the fewer layers, as Megatron's split gives them;
// on other stages the first chunks do. Under DualPipeV chunk 0 takes the odd layer (stage 0's
// chunk 1 holds the loss).
[[nodiscard]] int layers_in_chunk(int stage_layers, int stage, int chunk, int pipeline,
                                  int virtual_stages, Schedule schedule = Schedule::kInterleaved);

// Calls `visit(stage, chunk)` for every model chunk in model order (virtual stage 0 first).
template <typename Visit>
void for_each_chunk_in_model_order(const Parallelism& parallelism, Visit&& visit) {
  const int p = parallelism.pipeline;
  const int v = parallelism.virtual_pipeline_stages;
  for (int vs = 0; vs < p * v; ++vs) {
    const StageChunk at = stage_chunk_of(parallelism.schedule, p, vs);
    visit(at.stage, at.chunk);
  }
}

}  // namespace capsim
