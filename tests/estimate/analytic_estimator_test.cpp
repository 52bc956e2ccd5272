#include "estimate/analytic_estimator.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/collective_cost.hpp"
#include "models/datasheet_profile.hpp"
#include "models/parameter_count.hpp"

#include "estimate/iteration_model.hpp"
#include "estimate/layout_rules.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "io/validation_io.hpp"
#include "tests/qwen3_dualpipev.hpp"

namespace capsim {
namespace {

Scenario base_scenario() {
  return io::load_scenario(std::string(CAPSIM_TEST_DATA_DIR) + "/scenarios/valid.json");
}

HardwareProfile profile_for(const Scenario& s) {
  return datasheet_profile(s.cluster.gpu, s.cluster);
}

double sum_of_parts(const SimulationResult& r) {
  const auto& b = r.breakdown;
  return b.compute_s + b.tp_comm_exposed_s + b.cp_comm_exposed_s + b.pp_comm_exposed_s +
         b.dp_comm_exposed_s + b.bubble_s + b.optimizer_s + b.other_s;
}

TEST(AnalyticEstimatorTest, BreakdownSumsToIterationTime) {
  for (int zero : {0, 1, 3}) {
    Scenario s = base_scenario();
    s.parallelism.zero_stage = zero;
    const SimulationResult r = estimate::estimate_iteration(s, profile_for(s));
    EXPECT_NEAR(sum_of_parts(r), r.iteration_time_s, 1e-9 * r.iteration_time_s) << zero;
  }
}

// Overlapped sends (interleaved, ZB-H1): the full breakdown splits what the hops add to the
// pipeline off the bubble (a second replay without them); the time-only estimate skips that
// replay and counts them as bubble, with the same iteration time.
TEST(AnalyticEstimatorTest, OverlappedSendsAreExposedPpInTheFullBreakdownOnly) {
  for (const Schedule schedule : {Schedule::kInterleaved, Schedule::kZeroBubble}) {
    Scenario s = base_scenario();
    s.parallelism.schedule = schedule;
    s.parallelism.virtual_pipeline_stages = schedule == Schedule::kInterleaved ? 2 : 1;
    s.cluster.nic_bandwidth_bytes_per_s /= 8;  // slow hops, so they show
    const HardwareProfile profile = profile_for(s);
    const IterationCosts costs = estimate::compute_iteration_costs(s, profile);
    const SimulationResult full = estimate::estimate_iteration(s, costs, profile);
    const SimulationResult time_only = estimate::estimate_iteration(
        s, costs, profile, nullptr, estimate::EstimateDetail::kTimeOnly);
    EXPECT_EQ(full.iteration_time_s, time_only.iteration_time_s) << to_string(schedule);
    EXPECT_GT(full.breakdown.pp_comm_exposed_s, 0.0) << to_string(schedule);
    EXPECT_EQ(time_only.breakdown.pp_comm_exposed_s, 0.0) << to_string(schedule);
    EXPECT_NEAR(full.breakdown.pp_comm_exposed_s + full.breakdown.bubble_s,
                time_only.breakdown.bubble_s, 1e-9 * full.iteration_time_s)
        << to_string(schedule);
    EXPECT_NEAR(sum_of_parts(full), full.iteration_time_s, 1e-9 * full.iteration_time_s);
  }
}

TEST(AnalyticEstimatorTest, ThroughputFollowsIterationTime) {
  const Scenario s = base_scenario();
  const SimulationResult r = estimate::estimate_iteration(s, profile_for(s));
  EXPECT_EQ(r.engine, "analytic");
  EXPECT_NEAR(r.tokens_per_s * r.iteration_time_s, 64.0 * 2048, 1e-6);
  EXPECT_NEAR(r.tokens_per_s_per_gpu * 32, r.tokens_per_s, 1e-6);
  EXPECT_GT(r.mfu, 0.05);
  EXPECT_LT(r.mfu, 0.87);
  EXPECT_GE(r.hfu, r.mfu);  // selective recompute executes more than the model FLOPs
  EXPECT_FALSE(r.notes.empty());
}

// 1F1B with equal stages idles (p-1) stage steps: the bubble equals the other stages' steps.
TEST(AnalyticEstimatorTest, BubbleOfOneFOneBIsTheOtherStagesSteps) {
  Scenario s = base_scenario();
  const HardwareProfile p = profile_for(s);
  const IterationCosts costs = estimate::compute_iteration_costs(s, p);
  const SimulationResult r = estimate::estimate_iteration(s, costs, p);
  const double m = costs.micro_batches;
  // Two stages: bubble / (busy / m) is the lighter stage's step over the heavier one's, ~1.
  const double step = r.breakdown.compute_s / m + r.breakdown.tp_comm_exposed_s / m;
  EXPECT_GT(r.breakdown.bubble_s / step, 0.8);
  EXPECT_LE(r.breakdown.bubble_s / step, 1.0 + 1e-9);
}

TEST(AnalyticEstimatorTest, InterleavingShrinksTheBubble) {
  Scenario s = base_scenario();
  const double plain = estimate::estimate_iteration(s, profile_for(s)).breakdown.bubble_s;
  s.parallelism.schedule = Schedule::kInterleaved;
  s.parallelism.virtual_pipeline_stages = 4;
  const double interleaved = estimate::estimate_iteration(s, profile_for(s)).breakdown.bubble_s;
  EXPECT_NEAR(interleaved / plain, 0.25, 0.02);
}

TEST(AnalyticEstimatorTest, ZeroBubbleBeatsOneFOneB) {
  Scenario s = base_scenario();
  const double plain = estimate::estimate_iteration(s, profile_for(s)).breakdown.bubble_s;
  s.parallelism.schedule = Schedule::kZeroBubble;
  const double zb = estimate::estimate_iteration(s, profile_for(s)).breakdown.bubble_s;
  EXPECT_LT(zb, 0.6 * plain);
}

// Also under ZeRO-3, whose two streams are played layer by layer (zero3_streams.hpp): their
// phases shift with the bandwidth, and a faster link must still never make the step longer.
TEST(AnalyticEstimatorTest, MoreNicBandwidthIsNeverSlower) {
  for (int zero : {0, 1, 3}) {
    Scenario s = base_scenario();
    s.parallelism.zero_stage = zero;
    double previous = 1e30;
    for (double nic = 5e9; nic <= 100e9; nic *= 1.25) {
      s.cluster.nic_bandwidth_bytes_per_s = nic;
      HardwareProfile p = profile_for(base_scenario());  // fixed profile, varying hardware
      const double t = estimate::estimate_iteration(s, p).iteration_time_s;
      EXPECT_LE(t, previous * (1 + 1e-12)) << "ZeRO-" << zero << ", " << nic << " B/s";
      previous = t;
    }
  }
}

// Property: on an oversubscribed fabric a higher factor is never faster, and the base layout
// (TP4 PP2 DP4 on 4 nodes, one node per leaf: every ring and PP hop crosses) is slower at 2:1
// than non-blocking; a leaf holding every node is the non-blocking fabric.
TEST(AnalyticEstimatorTest, MoreOversubscriptionIsNeverFaster) {
  const Scenario plain = base_scenario();
  const HardwareProfile p = profile_for(plain);
  const double non_blocking = estimate::estimate_iteration(plain, p).iteration_time_s;
  Scenario s = plain;
  s.cluster.topology = Topology::kOversubscribed;
  double previous = non_blocking;
  for (const double factor : {2.0, 3.0, 4.0, 8.0}) {
    s.cluster.oversubscription = factor;
    const double t = estimate::estimate_iteration(s, p).iteration_time_s;
    EXPECT_GE(t, previous * (1 - 1e-12)) << factor;
    previous = t;
  }
  s.cluster.oversubscription = 2.0;
  EXPECT_GT(estimate::estimate_iteration(s, p).iteration_time_s, non_blocking);
  s.cluster.nodes_per_leaf = s.cluster.num_nodes;
  EXPECT_DOUBLE_EQ(estimate::estimate_iteration(s, p).iteration_time_s, non_blocking);
}

// Context-parallel rings that leave their leaf share its oversubscribed uplinks: TP8 x CP2 x PP2
// on 4 nodes puts each ring's ranks on two nodes, so with one node per leaf every CP
// exchange crosses and costs more than on the non-blocking fabric; with the whole cluster
// under one leaf it costs the same.
TEST(AnalyticEstimatorTest, ContextParallelRingsShareOversubscribedUplinks) {
  Scenario s = base_scenario();
  s.parallelism.tensor = 8;
  s.parallelism.context = 2;
  s.parallelism.data = 1;
  s.parallelism.sequence_parallel = true;
  s.parallelism.global_batch_size = 16;
  const HardwareProfile p = profile_for(s);
  const double non_blocking = estimate::estimate_iteration(s, p).breakdown.cp_comm_exposed_s;
  ASSERT_GT(non_blocking, 0.0);
  s.cluster.topology = Topology::kOversubscribed;
  s.cluster.oversubscription = 4.0;
  s.cluster.nodes_per_leaf = 1;
  EXPECT_GT(estimate::estimate_iteration(s, p).breakdown.cp_comm_exposed_s, 1.5 * non_blocking);
  s.cluster.nodes_per_leaf = s.cluster.num_nodes;
  EXPECT_DOUBLE_EQ(estimate::estimate_iteration(s, p).breakdown.cp_comm_exposed_s, non_blocking);
}

// The test scenario (TP4) as one pipeline stage of four layers over DP8: each layer's TP costs
// can be counted by hand.
Scenario one_stage_of_four_layers(bool sequence_parallel) {
  Scenario s = base_scenario();
  s.parallelism.sequence_parallel = sequence_parallel;
  s.parallelism.pipeline = 1;
  s.parallelism.data = 8;
  s.parallelism.global_batch_size = 64;
  s.model.num_layers = 4;
  return s;
}

// With sequence parallelism the backward all-gathers the QKV and MLP-up inputs again for their
// weight gradients, beside their data-gradient GEMMs: the layer's backward TP time is the two
// all-gather + reduce-scatter pairs plus, per re-gather, what exceeds its GEMM and the compute
// the gather's SMs slow (overlap.hpp); each re-gather adds at least the slowdown and at most
// the whole gather.
TEST(AnalyticEstimatorTest, SequenceParallelBackwardGathersTheColumnInputsAgain) {
  Scenario s = one_stage_of_four_layers(/*sequence_parallel=*/true);
  s.parallelism.tp_backward_overlap = false;  // every collective serial but the re-gathers
  const HardwareProfile p = profile_for(s);
  const IterationCosts costs = estimate::compute_iteration_costs(s, p);
  const ChunkCosts& chunk = costs.stages.front().chunks.front();
  const double buffer =
      2.0 * s.parallelism.micro_batch_size * s.model.seq_length * s.model.hidden_size;
  const double ag = collective_time_s(p, CollectiveKind::kAllGather, buffer, costs.tp_group);
  const double rs = collective_time_s(p, CollectiveKind::kReduceScatter, buffer, costs.tp_group);
  const double pairs = chunk.num_layers * 2.0 * (ag + rs);
  const double edges = ag + rs;  // the embedding's backward gathers, the head's scatters
  // Re-gathers: two per layer and the head's input (beside the logits' data-gradient GEMM).
  const double regathers = chunk.backward_tp_comm_s - pairs - edges;
  const double count = 2.0 * chunk.num_layers + 1.0;
  EXPECT_GE(regathers, count * ag * (1.0 - costs.compute_rate_during_comm) - 1e-12);
  EXPECT_LE(regathers, count * ag + 1e-12);
  // Without SP the backward all-reduces only.
  s.parallelism.sequence_parallel = false;
  const IterationCosts plain = estimate::compute_iteration_costs(s, p);
  const double ar = collective_time_s(p, CollectiveKind::kAllReduce, buffer, plain.tp_group);
  EXPECT_NEAR(plain.stages.front().chunks.front().backward_tp_comm_s,
              chunk.num_layers * 2.0 * ar + ar, 1e-12);
}

// The column-parallel layers' input-gradient collective (all-reduce, or reduce-scatter with SP)
// runs beside their weight-gradient GEMM: two per layer and the head's. Beside a GEMM that
// outlasts it, it costs only the compute its SMs slow, comm x (1 - rate).
TEST(AnalyticEstimatorTest, InputGradientCollectivesRunBesideTheWeightGradient) {
  for (const bool sp : {false, true}) {
    Scenario s = one_stage_of_four_layers(sp);
    const HardwareProfile p = profile_for(s);
    const IterationCosts overlapped = estimate::compute_iteration_costs(s, p);
    s.parallelism.tp_backward_overlap = false;
    const IterationCosts serial = estimate::compute_iteration_costs(s, p);
    const ChunkCosts& chunk = serial.stages.front().chunks.front();
    const double saved =
        chunk.backward_tp_comm_s - overlapped.stages.front().chunks.front().backward_tp_comm_s;
    const double buffer =
        2.0 * s.parallelism.micro_batch_size * s.model.seq_length * s.model.hidden_size;
    const double comm =
        collective_time_s(p, sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                          buffer, serial.tp_group);
    const double count = 2.0 * chunk.num_layers + 1.0;
    EXPECT_NEAR(saved, count * comm * serial.compute_rate_during_comm, 1e-9 * saved) << sp;
    EXPECT_EQ(chunk.forward_tp_comm_s, overlapped.stages.front().chunks.front().forward_tp_comm_s);
  }
}

// Under fp8 Transformer Engine all-gathers the cast inputs of its fp8 GEMMs (1 byte per
// element): the norm outputs before QKV and MLP-up and the output gradients before the
// projection's and MLP-down's data gradient. The reduce-scatters stay 16-bit, and so do the
// embedding's and the head's collectives (Megatron's own 16-bit layers).
TEST(AnalyticEstimatorTest, Fp8SequenceParallelGathersOneBytePerElement) {
  Scenario s = base_scenario();
  s.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  s.parallelism.sequence_parallel = true;
  const HardwareProfile p = profile_for(s);
  const auto middle_chunk = [&](Precision precision) {
    s.parallelism.precision = precision;
    return estimate::compute_iteration_costs(s, p).stages.front().chunks.front();
  };
  const ChunkCosts bf16 = middle_chunk(Precision::kBf16);
  const ChunkCosts fp8 = middle_chunk(Precision::kFp8);
  const IterationCosts costs = estimate::compute_iteration_costs(s, p);
  const double elements = s.parallelism.micro_batch_size * s.model.seq_length *
                          static_cast<double>(s.model.hidden_size);
  const double ag16 =
      collective_time_s(p, CollectiveKind::kAllGather, 2.0 * elements, costs.tp_group);
  const double ag8 = collective_time_s(p, CollectiveKind::kAllGather, elements, costs.tp_group);
  ASSERT_GT(ag16, ag8);
  // Forward: two gathers per layer, the embedding's scatter unchanged.
  EXPECT_NEAR(bf16.forward_tp_comm_s - fp8.forward_tp_comm_s, bf16.num_layers * 2.0 * (ag16 - ag8),
              1e-12);
  // Backward: the output-gradient gathers and the re-gathers beside the data-gradient GEMMs.
  EXPECT_GE(bf16.backward_tp_comm_s - fp8.backward_tp_comm_s,
            bf16.num_layers * 2.0 * (ag16 - ag8) - 1e-12);
  // The last stage's head gathers its logits input in 16 bits either way: only the layers'
  // gathers differ.
  const ChunkCosts fp8_head = estimate::compute_iteration_costs(s, p).stages.back().chunks.back();
  s.parallelism.precision = Precision::kBf16;
  const ChunkCosts bf16_head = estimate::compute_iteration_costs(s, p).stages.back().chunks.back();
  ASSERT_TRUE(bf16_head.has_head);
  EXPECT_NEAR(bf16_head.forward_tp_comm_s - fp8_head.forward_tp_comm_s,
              bf16_head.num_layers * 2.0 * (ag16 - ag8), 1e-12);
}

// Llama 3.1 405B's 126 layers on 8 stages of 8 virtual chunks, as Megatron-Core splits them with
// --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split: 128 / 64 =
// 2 layers per chunk, one on the chunk holding the embedding (stage 0's first) and on the one
// holding the loss (the last stage's last); model chunk k·p + s runs on stage s.
TEST(AnalyticEstimatorTest, MegatronSplitCountsTheEmbeddingAndLossAsLayers) {
  Scenario s = base_scenario();
  s.model.num_layers = 126;
  s.parallelism.pipeline = 8;
  s.parallelism.virtual_pipeline_stages = 8;
  s.parallelism.schedule = Schedule::kInterleaved;
  EXPECT_EQ(layers_per_stage(s.model, s.parallelism),
            (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  const IterationCosts costs = estimate::compute_iteration_costs(s, profile_for(s));
  int next_layer = 0;
  for (int k = 0; k < 8; ++k) {
    for (int stage = 0; stage < 8; ++stage) {
      const ChunkCosts& ch = costs.stages.at(stage).chunks.at(k);
      const bool edge = (stage == 0 && k == 0) || (stage == 7 && k == 7);
      EXPECT_EQ(ch.num_layers, edge ? 1 : 2) << stage << " " << k;
      EXPECT_EQ(ch.first_layer, next_layer);
      next_layer += ch.num_layers;
    }
  }
  EXPECT_EQ(next_layer, 126);
  // A middle stage's extra layers go to its later chunks, the last stage's to its earlier ones.
  EXPECT_EQ(layers_in_chunk(5, 3, 0, 8, 2), 2);
  EXPECT_EQ(layers_in_chunk(5, 3, 1, 8, 2), 3);
  EXPECT_EQ(layers_in_chunk(5, 7, 0, 8, 2), 3);
  EXPECT_EQ(layers_in_chunk(5, 7, 1, 8, 2), 2);
  // 125 layers split neither evenly nor Megatron's way.
  EXPECT_FALSE(is_megatron_embedding_loss_split(125, 64));
  EXPECT_FALSE(is_megatron_embedding_loss_split(128, 64));  // even: no need
  // One layer per chunk: the first chunk holds the embedding alone, the last the loss alone.
  EXPECT_TRUE(is_megatron_embedding_loss_split(62, 64));
  ModelSpec shallow;
  shallow.num_layers = 62;
  Parallelism eight_by_eight;
  eight_by_eight.pipeline = 8;
  eight_by_eight.virtual_pipeline_stages = 8;
  EXPECT_EQ(layers_per_stage(shallow, eight_by_eight), (std::vector<int>{7, 8, 8, 8, 8, 8, 8, 7}));
}

// The vocab-parallel loss all-reduces per-token fp32 values over TP: three in Megatron-Core's
// default implementation, two in its fused one (the last two concatenated).
TEST(AnalyticEstimatorTest, VocabParallelLossAllReducesOverTensorParallelism) {
  Scenario s = base_scenario();
  const HardwareProfile p = profile_for(s);
  const auto head_forward_tp = [&](CrossEntropyKernel kernel) {
    s.model.cross_entropy = kernel;
    const IterationCosts costs = estimate::compute_iteration_costs(s, p);
    return costs.stages.back().chunks.back().forward_tp_comm_s;
  };
  const double tokens = s.parallelism.micro_batch_size * s.model.seq_length;
  const double one = collective_time_s(p, CollectiveKind::kAllReduce, 4.0 * tokens,
                                       estimate::compute_iteration_costs(s, p).tp_group);
  EXPECT_GT(one, 0.0);
  EXPECT_NEAR(
      head_forward_tp(CrossEntropyKernel::kUnfused) - head_forward_tp(CrossEntropyKernel::kFused),
      one, 1e-12);
}

// Reducing gradients in bf16 instead of Megatron's default fp32 halves the DP bytes: the exposed
// DP time never grows and the main-gradient buffer shrinks by 2 bytes per local parameter.
TEST(AnalyticEstimatorTest, Bf16GradientReductionIsNeverSlower) {
  Scenario s = base_scenario();
  s.parallelism.zero_stage = 0;
  const HardwareProfile p = profile_for(s);
  const SimulationResult fp32 = estimate::estimate_iteration(s, p);
  s.parallelism.grad_reduce_precision = Precision::kBf16;
  EXPECT_EQ(estimate::compute_iteration_costs(s, p).grad_bytes_per_element, 2.0);
  const SimulationResult bf16 = estimate::estimate_iteration(s, p);
  EXPECT_LT(bf16.breakdown.dp_comm_exposed_s, fp32.breakdown.dp_comm_exposed_s);
  EXPECT_LT(bf16.memory.peak_bytes, fp32.memory.peak_bytes);
}

// The Adam step is memory bound over the bytes it moves (adam_step_bytes_per_parameter): Apex
// with dtype=bf16 moves 22 B per parameter where the default moves 34, so each stage's step
// moves 22/34 of the bytes (beside the kernel's launch overhead).
TEST(AnalyticEstimatorTest, OptimizerStepFollowsItsStorage) {
  Scenario s = base_scenario();
  const HardwareProfile p = profile_for(s);
  const auto transfer_s = [&p](const StageCosts& stage) {
    return stage.optimizer_s * p.software_efficiency - p.gemm.launch_overhead_s;
  };
  const IterationCosts fp32 = estimate::compute_iteration_costs(s, p);
  s.parallelism.optimizer_state_precision = Precision::kBf16;
  s.parallelism.master_weights = MasterWeights::kBf16;
  const IterationCosts bf16 = estimate::compute_iteration_costs(s, p);
  for (size_t i = 0; i < fp32.stages.size(); ++i) {
    EXPECT_NEAR(transfer_s(bf16.stages[i]) / transfer_s(fp32.stages[i]), 22.0 / 34.0, 1e-9);
  }
}

// Turning Megatron's overlap off never makes an iteration faster: the reduction then follows
// the backward pass and the parameter gather follows the step.
TEST(AnalyticEstimatorTest, WithoutOverlapIsNeverFaster) {
  for (int zero : {0, 1, 2}) {
    Scenario s = base_scenario();
    s.parallelism.zero_stage = zero;
    const HardwareProfile p = profile_for(s);
    const SimulationResult overlapped = estimate::estimate_iteration(s, p);
    s.parallelism.overlap_param_gather = false;
    const SimulationResult no_gather_overlap = estimate::estimate_iteration(s, p);
    s.parallelism.overlap_grad_reduce = false;
    const SimulationResult serial = estimate::estimate_iteration(s, p);
    EXPECT_GE(no_gather_overlap.iteration_time_s, overlapped.iteration_time_s) << zero;
    EXPECT_GT(serial.iteration_time_s, no_gather_overlap.iteration_time_s) << zero;
    EXPECT_GT(serial.breakdown.dp_comm_exposed_s, overlapped.breakdown.dp_comm_exposed_s);
    EXPECT_NEAR(sum_of_parts(serial), serial.iteration_time_s, 1e-9 * serial.iteration_time_s);
  }
}

// NCCL CTAs hold SMs while a collective overlaps compute (HardwareProfile::collective_sms): the
// compute rate beside a collective falls with the SMs taken, and overlapped ZeRO/DP
// communication is never cheaper for it; taking none reproduces free overlap.
TEST(AnalyticEstimatorTest, CollectiveSmsSlowOverlappedCompute) {
  for (int zero : {0, 1, 3}) {
    Scenario s = base_scenario();
    s.parallelism.zero_stage = zero;
    HardwareProfile p = profile_for(s);
    double previous_time = 0.0;
    double previous_rate = 2.0;
    for (int sms : {0, 8, 24, 48}) {
      p.collective_sms = sms;
      const IterationCosts costs = estimate::compute_iteration_costs(s, p);
      EXPECT_LT(costs.compute_rate_during_comm, previous_rate) << zero << " " << sms;
      EXPECT_GT(costs.compute_rate_during_comm, 0.0);
      const double t = estimate::estimate_iteration(s, costs, p).iteration_time_s;
      // Never faster (up to rounding: with one bucket per stage nothing overlaps compute).
      EXPECT_GE(t, previous_time * (1.0 - 1e-12)) << zero << " " << sms;
      previous_time = t;
      previous_rate = costs.compute_rate_during_comm;
    }
  }
  // Compute-bound per layer (8 sequences per micro-batch), so the slowed compute shows.
  Scenario s = base_scenario();
  s.parallelism.zero_stage = 3;
  s.parallelism.micro_batch_size = 8;
  HardwareProfile p = profile_for(s);
  p.collective_sms = 0;
  EXPECT_DOUBLE_EQ(estimate::compute_iteration_costs(s, p).compute_rate_during_comm, 1.0);
  const double free_overlap = estimate::estimate_iteration(s, p).iteration_time_s;
  p.collective_sms = 24;
  EXPECT_GT(estimate::estimate_iteration(s, p).iteration_time_s, free_overlap);
}

TEST(AnalyticEstimatorTest, BiggerModelIsNeverFaster) {
  Scenario s = base_scenario();
  const double small = estimate::estimate_iteration(s, profile_for(s)).iteration_time_s;
  s.model.num_layers = 48;
  const double big = estimate::estimate_iteration(s, profile_for(s)).iteration_time_s;
  EXPECT_GT(big, small);
}

TEST(AnalyticEstimatorTest, FullRecomputeCostsAboutAForward) {
  Scenario s = base_scenario();
  s.parallelism.recompute = Recompute::kNone;
  const double none = estimate::estimate_iteration(s, profile_for(s)).breakdown.compute_s;
  s.parallelism.recompute = Recompute::kFull;
  const double full = estimate::estimate_iteration(s, profile_for(s)).breakdown.compute_s;
  EXPECT_GT(full / none, 1.2);
  EXPECT_LT(full / none, 1.45);
}

TEST(AnalyticEstimatorTest, SingleGpuHasNoCommunication) {
  Scenario s = base_scenario();
  s.cluster.num_nodes = 1;
  s.cluster.gpus_per_node = 1;
  s.parallelism = Parallelism{};
  s.parallelism.global_batch_size = 4;
  s.model.num_layers = 4;
  const SimulationResult r = estimate::estimate_iteration(s, profile_for(s));
  EXPECT_EQ(r.breakdown.tp_comm_exposed_s, 0.0);
  EXPECT_EQ(r.breakdown.dp_comm_exposed_s, 0.0);
  EXPECT_EQ(r.breakdown.pp_comm_exposed_s, 0.0);
  EXPECT_EQ(r.breakdown.bubble_s, 0.0);
}

TEST(AnalyticEstimatorTest, Deterministic) {
  const Scenario s = base_scenario();
  const double a = estimate::estimate_iteration(s, profile_for(s)).iteration_time_s;
  const double b = estimate::estimate_iteration(s, profile_for(s)).iteration_time_s;
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace capsim

namespace capsim {
namespace {

// Materialised attention moves the s x s scores through HBM several times; for a small hidden
// size at s=2048 that costs tens of percent (the Megatron-LM 2021 regime).
// fp8 parameters travel as 1 byte in the parameter gathers (Megatron --fp8-param-gather, NeMo's
// uint8 param sync); a layer's norms and biases, the embedding and the head stay 16-bit.
TEST(AnalyticEstimatorTest, Fp8ParamsGatherTheGemmWeightsInOneByte) {
  Scenario s = base_scenario();
  s.cluster.gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  s.parallelism.precision = Precision::kFp8;
  const IterationCosts plain = estimate::compute_iteration_costs(s, profile_for(s));
  EXPECT_DOUBLE_EQ(plain.layer_param_bytes_per_element, 2.0);
  s.parallelism.fp8_params = true;
  const IterationCosts fp8 = estimate::compute_iteration_costs(s, profile_for(s));
  const double all = layer_parameters_per_rank(s.model, s.parallelism.tensor);
  const double matmul = layer_matmul_parameters_per_rank(s.model, s.parallelism.tensor);
  EXPECT_DOUBLE_EQ(fp8.layer_param_bytes_per_element, (matmul + 2.0 * (all - matmul)) / all);
  EXPECT_LT(fp8.layer_param_bytes_per_element, 1.01);
  EXPECT_DOUBLE_EQ(fp8.param_bytes_per_element, 2.0);
  const ChunkCosts& first = fp8.stages[0].chunks[0];
  EXPECT_DOUBLE_EQ(
      chunk_param_gather_bytes(fp8, first),
      first.num_layers * first.layer_parameter_count * fp8.layer_param_bytes_per_element +
          first.root_parameter_count() * 2.0);
  // ZeRO-1's exposed parameter gather can only shrink.
  s.parallelism.fp8_params = false;
  const double bf16_gather =
      estimate::estimate_iteration(s, profile_for(s)).breakdown.dp_comm_exposed_s;
  s.parallelism.fp8_params = true;
  EXPECT_LE(estimate::estimate_iteration(s, profile_for(s)).breakdown.dp_comm_exposed_s,
            bf16_gather);
}

TEST(AnalyticEstimatorTest, MaterializedAttentionIsSlowerAndCountsScores) {
  Scenario s = base_scenario();
  const double flash = estimate::estimate_iteration(s, profile_for(s)).breakdown.compute_s;
  s.model.attention = AttentionKernel::kMaterialized;
  const SimulationResult r = estimate::estimate_iteration(s, profile_for(s));
  EXPECT_GT(r.breakdown.compute_s, 1.05 * flash);
  EXPECT_GT(r.memory.peak_bytes, 0.0);
}

// The run Megatron-Bridge's skills/nemo-mbridge-perf-moe-comm-overlap/SKILL.md profiles:
// Qwen3-30B-A3B on 16 H100 in BF16, HybridEP at EP16, global batch 1,024 (the layout of the
// 26.02.01 Hopper validation case, in BF16).
Scenario profiled_qwen3_30b() {
  const std::vector<io::ValidationCase> cases = io::load_validation_cases(
      std::string(CAPSIM_SOURCE_DIR) + "/scenarios/validation/moe-hopper.json");
  const auto it = std::find_if(cases.begin(), cases.end(), [](const io::ValidationCase& c) {
    return c.id == "mbridge-26.02.01-Qwen3-30B-A3B-H100-16-FP8_CS";
  });
  EXPECT_NE(it, cases.end());
  Scenario s = it == cases.end() ? Scenario{} : it->scenario;
  s.parallelism.precision = Precision::kBf16;
  return s;
}

// Without the overlap each of the step's 64 x 48 dropless dispatches idles the GPU for the
// profile's share of its 1.893 s idle; with the overlap nothing idles, and the kernels run
// 1.600 s less, the exchange time the overlap hides.
TEST(MoeA2aOverlapTest, ReproducesTheProfiledHostIdleAndHiddenExchanges) {
  Scenario s = profiled_qwen3_30b();
  ASSERT_EQ(s.parallelism.token_dispatcher, TokenDispatcher::kDeepEp);
  const HardwareProfile profile = io::resolve_profile(s);
  s.parallelism.moe_a2a_overlap = false;
  const SimulationResult without = estimate::estimate_iteration(s, profile);
  s.model.moe->rank_capacity_factor = 1.0;  // padded: no counts to wait for
  const SimulationResult padded = estimate::estimate_iteration(s, profile);
  s.model.moe->rank_capacity_factor = 0.0;
  EXPECT_NEAR(without.breakdown.ep_comm_exposed_s - padded.breakdown.ep_comm_exposed_s,
              24.7138 - 22.821, 1e-6);
  s.parallelism.moe_a2a_overlap = true;
  const SimulationResult with = estimate::estimate_iteration(s, profile);
  EXPECT_NEAR(padded.breakdown.ep_comm_exposed_s - with.breakdown.ep_comm_exposed_s,
              22.821 - 21.221, 0.01);
  // Both steps within 5% of the profile's (24.714 s and 20.992 s).
  EXPECT_NEAR(without.iteration_time_s / 24.7138, 1.0, 0.05);
  EXPECT_NEAR(with.iteration_time_s / 20.992, 1.0, 0.05);
}

// Megatron-MoE-ModelZoo best_practice/qwen3/readme.md: Qwen3-235B-A22B on 256 H100 (BF16,
// DeepEP, TP2 PP8 EP32 VP4, global batch 2,048, recompute of layernorm and moe_act) takes
// 19.7 s per step without and 17.6 s with the 1F1B A2A overlap. The shipped scenario is that
// run; nothing is fitted to it, and both steps come within 8%.
TEST(MoeA2aOverlapTest, PredictsTheModelZooPairOnQwen3_235B) {
  Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                 "/scenarios/qwen3-235b-h100/scenario.json");
  s.parallelism.recompute_modules = kRecomputeLayernorm | kRecomputeMoeActivation;
  const HardwareProfile profile = io::resolve_profile(s);
  s.parallelism.moe_a2a_overlap = false;
  const double without = estimate::estimate_iteration(s, profile).iteration_time_s;
  s.parallelism.moe_a2a_overlap = true;
  const double with = estimate::estimate_iteration(s, profile).iteration_time_s;
  EXPECT_NEAR(without / 19.7, 1.0, 0.08);
  EXPECT_NEAR(with / 17.6, 1.0, 0.08);
  EXPECT_LT(with, without);
}

// Qwen3-235B-A22B's shipped layout on DualPipeV: with moe_a2a_overlap its paired forwards and
// backwards hide their exchanges behind each other (all of what the pairing hides), the
// unpaired ones do not; without it every exchange is exposed. Full recompute keeps the
// overlap, which replays the forward inside the paired backward; the replay's exchanges and
// its host wait at the dispatch stay exposed.
TEST(MoeA2aOverlapTest, DualPipeVPairsHideTheirExchanges) {
  Scenario s = test::qwen3_235b_on_dualpipev();
  const HardwareProfile profile = io::resolve_profile(s);
  for (const Recompute recompute : {Recompute::kSelective, Recompute::kFull}) {
    s.parallelism.recompute = recompute;
    s.parallelism.moe_a2a_overlap = false;
    const SimulationResult without = estimate::estimate_iteration(s, profile);
    s.parallelism.moe_a2a_overlap = true;
    EXPECT_TRUE(estimate::layout_problems(s.model, s.cluster, s.parallelism).empty());
    const SimulationResult with = estimate::estimate_iteration(s, profile);
    EXPECT_LT(with.iteration_time_s, without.iteration_time_s);
    const double hidden_at_least = recompute == Recompute::kFull ? 0.4 : 0.5;
    EXPECT_LT(with.breakdown.ep_comm_exposed_s,
              (1.0 - hidden_at_least) * without.breakdown.ep_comm_exposed_s);
    EXPECT_GT(with.breakdown.ep_comm_exposed_s, 0.0);
    EXPECT_GE(with.breakdown.bubble_s, 0.0);
  }
}

// MLA's projections replace the QKV GEMM Transformer Engine's comm-GEMM overlap pairs with, so
// tp_comm_overlap (as the NeMo stack sets it) leaves an MLA model's collectives as they were.
TEST(AnalyticEstimatorTest, MlaLayersTakeTheirCollectivesWithoutTheCommGemmOverlap) {
  Scenario s = io::load_scenario(std::string(CAPSIM_SOURCE_DIR) +
                                 "/scenarios/deepseek-v3-h100/scenario.json");
  ASSERT_TRUE(s.model.mla.has_value());
  ASSERT_TRUE(s.parallelism.sequence_parallel);
  const HardwareProfile profile = io::resolve_profile(s);
  const double without = estimate::estimate_iteration(s, profile).iteration_time_s;
  s.parallelism.tp_comm_overlap = true;
  EXPECT_EQ(estimate::estimate_iteration(s, profile).iteration_time_s, without);
}

}  // namespace
}  // namespace capsim
