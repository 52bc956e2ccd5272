// PartCostMemo must never change a cost: layouts priced through one memo, in any order, cost
// bit for bit what they cost alone. Checked over random valid scenarios and variants of each
// that change what the memo ignores (schedule, pipeline depth, ZeRO stage, batch, buckets,
// optimizer storage) and what it keys on (micro-batch, recompute, SP, precision, context).

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "estimate/iteration_model.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/models/random_scenario.hpp"

namespace capsim {
namespace {

using test::Rng;

void expect_same_group(const GroupShape& a, const GroupShape& b) {
  EXPECT_TRUE(a == b);
}

void expect_same_chunk(const ChunkCosts& a, const ChunkCosts& b) {
  EXPECT_EQ(a.first_layer, b.first_layer);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.has_embedding, b.has_embedding);
  EXPECT_EQ(a.has_head, b.has_head);
  EXPECT_EQ(a.forward_compute_s, b.forward_compute_s);
  EXPECT_EQ(a.forward_tp_comm_s, b.forward_tp_comm_s);
  EXPECT_EQ(a.forward_cp_comm_s, b.forward_cp_comm_s);
  EXPECT_EQ(a.backward_input_s, b.backward_input_s);
  EXPECT_EQ(a.backward_weight_s, b.backward_weight_s);
  EXPECT_EQ(a.backward_tp_comm_s, b.backward_tp_comm_s);
  EXPECT_EQ(a.backward_cp_comm_s, b.backward_cp_comm_s);
  EXPECT_EQ(a.recompute_s, b.recompute_s);
  EXPECT_EQ(a.recompute_tp_comm_s, b.recompute_tp_comm_s);
  EXPECT_EQ(a.activation_bytes, b.activation_bytes);
  EXPECT_EQ(a.parameter_count, b.parameter_count);
  EXPECT_EQ(a.layer_parameter_count, b.layer_parameter_count);
}

void expect_same_costs(const IterationCosts& a, const IterationCosts& b) {
  ASSERT_EQ(a.stages.size(), b.stages.size());
  for (size_t s = 0; s < a.stages.size(); ++s) {
    ASSERT_EQ(a.stages[s].chunks.size(), b.stages[s].chunks.size());
    for (size_t c = 0; c < a.stages[s].chunks.size(); ++c)
      expect_same_chunk(a.stages[s].chunks[c], b.stages[s].chunks[c]);
    EXPECT_EQ(a.stages[s].parameter_count, b.stages[s].parameter_count);
    EXPECT_EQ(a.stages[s].optimizer_s, b.stages[s].optimizer_s);
  }
  EXPECT_EQ(a.micro_batches, b.micro_batches);
  expect_same_group(a.tp_group, b.tp_group);
  expect_same_group(a.dp_group, b.dp_group);
  expect_same_group(a.pp_link, b.pp_link);
  EXPECT_EQ(a.dp_bucket_bytes, b.dp_bucket_bytes);
  EXPECT_EQ(a.megatron_core_buckets, b.megatron_core_buckets);
  EXPECT_EQ(a.compute_rate_during_comm, b.compute_rate_during_comm);
  EXPECT_EQ(a.grad_bytes_per_element, b.grad_bytes_per_element);
  EXPECT_EQ(a.param_bytes_per_element, b.param_bytes_per_element);
  EXPECT_EQ(a.layer_param_bytes_per_element, b.layer_param_bytes_per_element);
  EXPECT_EQ(a.tokens_per_iteration, b.tokens_per_iteration);
  EXPECT_EQ(a.model_flop_per_iteration, b.model_flop_per_iteration);
  EXPECT_EQ(a.hardware_flop_per_iteration, b.hardware_flop_per_iteration);
}

// `base` with what the memo ignores changed at random: the same GPUs, another pipeline depth
// (and so data parallelism), schedule, ZeRO stage, batch, buckets and optimizer storage.
Parallelism ignored_fields_changed(Rng& rng, const Parallelism& base, int gpus) {
  Parallelism p = base;
  p.pipeline = rng.pick(std::vector<int>{1, 2, 4});
  p.data = std::max(1, gpus / (p.tensor * p.context * p.pipeline));
  p.schedule = p.pipeline == 1
                   ? Schedule::kOneFOneB
                   : rng.pick(std::vector<Schedule>{Schedule::kOneFOneB, Schedule::kGpipe,
                                                    Schedule::kInterleaved, Schedule::kZeroBubble});
  p.virtual_pipeline_stages = p.schedule == Schedule::kInterleaved ? 2 : 1;
  p.global_batch_size =
      p.micro_batch_size * p.data * p.pipeline * rng.pick(std::vector<int>{1, 2, 4});
  p.zero_stage = rng.pick(std::vector<int>{0, 1, 2, 3});
  p.overlap_grad_reduce = p.zero_stage == 3 || rng.coin();
  p.overlap_param_gather = p.overlap_grad_reduce;
  p.dp_bucket_bytes = rng.pick(std::vector<double>{0.0, 25e6, 1e9});
  p.dp_buckets_every_chunk = rng.coin();
  if (rng.coin())
    p.optimizer_state_precision = Precision::kBf16;
  if (rng.coin())
    p.master_weights = MasterWeights::kFp32Remainders;
  if (rng.coin())
    p.grad_reduce_precision = Precision::kBf16;
  return p;
}

// `base` with what the memo keys on changed at random (the batch is set again by
// ignored_fields_changed).
Parallelism keyed_fields_changed(Rng& rng, const Parallelism& base) {
  Parallelism p = base;
  p.micro_batch_size = rng.pick(std::vector<int>{1, 2});
  p.recompute =
      rng.pick(std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull});
  p.sequence_parallel = p.tensor > 1 && rng.coin();
  p.tp_comm_overlap = p.sequence_parallel && rng.coin();
  p.tp_backward_overlap = rng.coin();
  return p;
}

TEST(PartCostMemoTest, LayoutsPricedThroughOneMemoCostWhatTheyCostAlone) {
  Rng rng(20261127);
  int checked = 0;
  for (int family = 0; family < 150; ++family) {
    const Scenario base = test::random_scenario(rng);
    const HardwareProfile profile = io::resolve_profile(base);
    estimate::PartCostMemo memo;
    for (int variant = 0; variant < 12; ++variant) {
      // Every other variant also changes what the memo keys on.
      Scenario s = base;
      if (variant % 2 == 1)
        s.parallelism = keyed_fields_changed(rng, s.parallelism);
      s.parallelism = ignored_fields_changed(rng, s.parallelism, base.cluster.num_gpus());
      if (!test::is_valid_input(s))
        continue;
      SCOPED_TRACE(io::scenario_to_json(s).dump());
      expect_same_costs(estimate::compute_iteration_costs(s, profile, &memo),
                        estimate::compute_iteration_costs(s, profile));
      ++checked;
    }
  }
  // Most variants must be valid layouts, or the test checks little.
  EXPECT_GT(checked, 600);
}

// The screen prices every layout into one IterationCosts whose vectors it reuses: whatever the
// layout before (deeper or shallower pipelines, more or fewer chunks), the costs are those of a
// fresh object.
TEST(PartCostMemoTest, CostsIntoReusedStorageAreFresh) {
  Rng rng(20261128);
  IterationCosts reused;
  estimate::PartCostMemo memo;
  for (int i = 0; i < 200; ++i) {
    const Scenario s = test::random_scenario(rng);
    SCOPED_TRACE(io::scenario_to_json(s).dump());
    const HardwareProfile profile = io::resolve_profile(s);
    estimate::compute_iteration_costs(s, profile, &memo, reused);
    expect_same_costs(reused, estimate::compute_iteration_costs(s, profile));
  }
}

TEST(PartCostMemoTest, ForgetsWhenTheModelClusterOrProfileChanges) {
  Rng rng(7);
  const Scenario first = test::random_scenario(rng);
  const HardwareProfile profile = io::resolve_profile(first);
  estimate::PartCostMemo memo;
  (void)estimate::compute_iteration_costs(first, profile, &memo);

  Scenario deeper = first;
  deeper.model.hidden_size *= 2;
  deeper.model.num_attention_heads *= 2;
  deeper.model.num_kv_heads *= 2;
  deeper.model.ffn_hidden_size *= 2;
  ASSERT_TRUE(test::is_valid_input(deeper));
  expect_same_costs(estimate::compute_iteration_costs(deeper, profile, &memo),
                    estimate::compute_iteration_costs(deeper, profile));

  Scenario faster_nvlink = first;
  faster_nvlink.cluster.intra_node_bandwidth_bytes_per_s *= 2.0;
  ASSERT_TRUE(test::is_valid_input(faster_nvlink));
  const HardwareProfile faster_profile = io::resolve_profile(faster_nvlink);
  expect_same_costs(estimate::compute_iteration_costs(faster_nvlink, faster_profile, &memo),
                    estimate::compute_iteration_costs(faster_nvlink, faster_profile));

  HardwareProfile slower = profile;
  slower.software_efficiency *= 0.5;
  expect_same_costs(estimate::compute_iteration_costs(first, slower, &memo),
                    estimate::compute_iteration_costs(first, slower));
}

}  // namespace
}  // namespace capsim
