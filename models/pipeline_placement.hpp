#pragma once

// Which pipeline stage runs which part of the model under each schedule.

#include <optional>

#include "models/parallelism.hpp"

namespace capsim {

// A pipeline stage's model chunk: stage `stage` of the pipeline, its `chunk`-th virtual stage.
struct StageChunk {
  int stage = 0;
  int chunk = 0;
  bool operator==(const StageChunk&) const = default;
};

// Where virtual stage `virtual_stage` (its place in model order, 0 .. pipeline x chunks - 1)
// runs. Megatron's interleaving loops: virtual stage c·P + s is chunk c of stage s. DualPipeV
// is V-shaped (DeepSeek's DualPipe repository, dualpipev.py): chunk 0 of stage s is virtual
// stage s, chunk 1 is 2P - 1 - s, so stage 0 holds the first and the last.
[[nodiscard]] inline StageChunk stage_chunk_of(Schedule schedule, int pipeline, int virtual_stage) {
  if (schedule == Schedule::kDualPipeV) {
    return virtual_stage < pipeline ? StageChunk{virtual_stage, 0}
                                    : StageChunk{2 * pipeline - 1 - virtual_stage, 1};
  }
  return {virtual_stage % pipeline, virtual_stage / pipeline};
}
// The inverse: the virtual stage that chunk `chunk` of stage `stage` runs.
[[nodiscard]] inline int virtual_stage_of(Schedule schedule, int pipeline, int stage, int chunk) {
  if (schedule == Schedule::kDualPipeV)
    return chunk == 0 ? stage : 2 * pipeline - 1 - stage;
  return chunk * pipeline + stage;
}
// The chunk whose activations chunk `chunk` of stage `stage` takes (the previous virtual stage),
// or nullopt for the model's first.
[[nodiscard]] inline std::optional<StageChunk> previous_chunk(Schedule schedule, int pipeline,
                                                              int stage, int chunk) {
  const int virtual_stage = virtual_stage_of(schedule, pipeline, stage, chunk);
  if (virtual_stage == 0)
    return std::nullopt;
  return stage_chunk_of(schedule, pipeline, virtual_stage - 1);
}
// The chunk that takes chunk `chunk` of stage `stage`'s activations (the next virtual stage), or
// nullopt for the model's last of `chunks` per stage.
[[nodiscard]] inline std::optional<StageChunk> next_chunk(Schedule schedule, int pipeline,
                                                          int chunks, int stage, int chunk) {
  const int virtual_stage = virtual_stage_of(schedule, pipeline, stage, chunk);
  if (virtual_stage + 1 == pipeline * chunks)
    return std::nullopt;
  return stage_chunk_of(schedule, pipeline, virtual_stage + 1);
}
// The fewest layers stage `stage` may hold: one per chunk, but under DualPipeV stage 0's chunk 1,
// which holds the head, may hold it alone (as Megatron's split lets the loss's chunk do).
[[nodiscard]] inline int least_stage_layers(Schedule schedule, int chunks, int stage) {
  return schedule == Schedule::kDualPipeV && stage == 0 ? 1 : chunks;
}
// The stage whose last chunk ends the model (the head, the loss, the MTP modules): the last,
// or stage 0 under DualPipeV.
[[nodiscard]] inline int head_stage(Schedule schedule, int pipeline) {
  return schedule == Schedule::kDualPipeV ? 0 : pipeline - 1;
}

}  // namespace capsim
