#include "models/memory_model.hpp"

#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "models/catalog.hpp"
#include "models/gpu_catalog.hpp"
#include "models/parameter_count.hpp"

namespace capsim::memory_model_test {
namespace {

// GPT-style models of Korthikanti et al. 2022 Table 3 (s = 2048, V = 51200, f = 4h, MHA).
ModelSpec gpt(int layers, int hidden, int heads) {
  ModelSpec m;
  m.name = "gpt";
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_attention_heads = heads;
  m.num_kv_heads = heads;
  m.ffn_hidden_size = 4 * hidden;
  m.seq_length = 2048;
  m.vocab_size = 51200;
  m.tied_embeddings = true;
  return m;
}
ModelSpec gpt3_175b() {
  return gpt(96, 12288, 96);
}
ModelSpec mt_nlg_530b() {
  return gpt(105, 20480, 128);
}

// Llama-2 70B (Touvron et al. 2023): SwiGLU, GQA with 8 KV heads, untied embeddings.
ModelSpec llama2_70b() {
  ModelSpec m;
  m.name = "llama2-70b";
  m.num_layers = 80;
  m.hidden_size = 8192;
  m.num_attention_heads = 64;
  m.num_kv_heads = 8;
  m.ffn_hidden_size = 28672;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 4096;
  m.vocab_size = 32000;
  return m;
}

Parallelism tp(int t, bool sp, Recompute recompute) {
  Parallelism p;
  p.tensor = t;
  p.sequence_parallel = sp;
  p.recompute = recompute;
  return p;
}

const GpuSpec& a100() {
  return *builtin_catalog().find_gpu("A100-SXM4-80GB");
}

double sbh(const ModelSpec& m) {
  return static_cast<double>(m.seq_length) * static_cast<double>(m.hidden_size);
}
double five_as_over_h(const ModelSpec& m) {
  return 5.0 * m.num_attention_heads * m.seq_length / static_cast<double>(m.hidden_size);
}

// Korthikanti et al. 2022 Table 2, every row, for GPT-3 175B with b = 1 and t = 8 (the paper's
// materialised attention; AttentionMemory::kMaterialized).
TEST(MemoryActivationTest, MatchesKorthikantiTable2ForGpt3) {
  const ModelSpec m = gpt3_175b();
  const double x = sbh(m);
  const double k = five_as_over_h(m);
  EXPECT_DOUBLE_EQ(k, 80.0);  // the paper's "5as/h = 80" for GPT-3 (§4.2.3)
  const auto act = [&](int t, bool sp, Recompute r) {
    return activation_bytes_per_layer(m, tp(t, sp, r), AttentionMemory::kMaterialized);
  };
  EXPECT_DOUBLE_EQ(act(1, false, Recompute::kNone), x * (34.0 + k));
  EXPECT_DOUBLE_EQ(act(8, false, Recompute::kNone), x * (10.0 + 24.0 / 8 + k / 8));
  EXPECT_DOUBLE_EQ(act(8, true, Recompute::kNone), x / 8 * (34.0 + k));
  EXPECT_DOUBLE_EQ(act(8, false, Recompute::kSelective), x * (10.0 + 24.0 / 8));
  EXPECT_DOUBLE_EQ(act(8, true, Recompute::kSelective), x / 8 * 34.0);
  EXPECT_DOUBLE_EQ(act(8, false, Recompute::kFull), 2.0 * x);
  EXPECT_DOUBLE_EQ(act(8, true, Recompute::kFull), 2.0 * x / 8);
  // 34sbh/t for GPT-3 at t = 8: 106,954,752 bytes (102 MiB) per layer per micro-batch.
  EXPECT_DOUBLE_EQ(act(8, true, Recompute::kSelective), 106954752.0);
}

// FlashAttention never stores the s x s scores, so by default "none" equals "selective".
TEST(MemoryActivationTest, FlashAttentionDropsTheScoresTerm) {
  const ModelSpec m = gpt3_175b();
  const Parallelism none = tp(8, true, Recompute::kNone);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, none), sbh(m) / 8 * 34.0);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, none),
                   activation_bytes_per_layer(m, tp(8, true, Recompute::kSelective),
                                              AttentionMemory::kMaterialized));
}

// Without dropout (`model.dropout: false`, e.g. MPT) the two 1-byte masks per layer go (34sbh ->
// 32sbh) and the materialised scores keep only the softmax output (5as²b -> 2as²b); a Llama
// model (no dropout by convention) is unchanged by an explicit false and grows with true.
TEST(MemoryActivationTest, DropoutMasksFollowTheModel) {
  ModelSpec m = gpt3_175b();
  const double x = sbh(m);
  const double k = five_as_over_h(m);
  const Parallelism none = tp(1, false, Recompute::kNone);
  m.dropout = false;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, none), x * 32.0);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, none, AttentionMemory::kMaterialized),
                   x * (32.0 + k * 2.0 / 5.0));
  ModelSpec llama = llama2_70b();
  const double conventional = activation_bytes_per_layer(llama, none);
  llama.dropout = false;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(llama, none), conventional);
  llama.dropout = true;
  EXPECT_GT(activation_bytes_per_layer(llama, none), conventional);
}

// Korthikanti §4.2.3 states selective recomputation saves 70% of the activation memory of
// GPT-3 and 65% of MT-NLG's: 1 - 34/(34 + 5as/h) with 5as/h = 80 and 64.
TEST(MemoryActivationTest, SelectiveSavingsMatchPaperStatedPercentages) {
  const auto saving = [](const ModelSpec& m) {
    const double none = activation_bytes_per_layer(m, tp(8, true, Recompute::kNone),
                                                   AttentionMemory::kMaterialized);
    const double sel = activation_bytes_per_layer(m, tp(8, true, Recompute::kSelective),
                                                  AttentionMemory::kMaterialized);
    return 1.0 - sel / none;
  };
  EXPECT_NEAR(saving(gpt3_175b()), 0.70, 0.005);    // computed 0.7018
  EXPECT_NEAR(saving(mt_nlg_530b()), 0.65, 0.005);  // computed 0.6531
}

// The abstract's "reduces activation memory by 5x": TP alone vs TP + SP + selective at t = 8
// for the four Table 3 models (22B, 175B, 530B, 1T). The formulas give 6.2x, 5.4x, 4.9x, 4.9x.
TEST(MemoryActivationTest, SequenceParallelPlusSelectiveIsAboutFiveFold) {
  for (const ModelSpec& m : {gpt(48, 6144, 64), gpt3_175b(), mt_nlg_530b(), gpt(128, 25600, 160)}) {
    const double baseline = activation_bytes_per_layer(m, tp(8, false, Recompute::kNone),
                                                       AttentionMemory::kMaterialized);
    const double reduced = activation_bytes_per_layer(m, tp(8, true, Recompute::kSelective),
                                                      AttentionMemory::kMaterialized);
    EXPECT_GT(baseline / reduced, 4.9) << m.hidden_size;
    EXPECT_LT(baseline / reduced, 6.3) << m.hidden_size;
  }
}

// Megatron-LM theoretical_memory_usage.py (compute_activation_memory, SP + selective): first
// stage = [sbh(18 + 4f/h)·L + 8sbp + sbhp] / t, times 1 + (p - 1)/(p·v) when interleaved.
TEST(MemoryActivationTest, FirstStageMatchesMegatronTheoreticalMemory) {
  const ModelSpec m = gpt3_175b();
  for (int v : {1, 2, 3}) {
    Parallelism par = tp(8, true, Recompute::kSelective);
    par.pipeline = 8;
    par.data = 16;
    par.global_batch_size = 1536;
    par.virtual_pipeline_stages = v;
    par.schedule = v > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
    const MemoryEstimate est = estimate_memory(m, par, a100());
    const double s = m.seq_length;
    const double h = m.hidden_size;
    const double p = 8;
    double megatron = (sbh(m) * (18.0 + 4.0 * 4.0) * m.num_layers + 8 * s * p + s * h * p) / 8;
    if (v > 1)
      megatron *= 1.0 + (p - 1) / (p * v);
    const StageMemory& first = est.stages.front();
    // Megatron also divides the int64 token ids by t; we do not (they are not split).
    EXPECT_NEAR((first.activations_bytes + first.embedding_logits_bytes) / megatron, 1.0, 1e-3)
        << "v=" << v;
  }
}

// Megatron-LM theoretical_memory_usage.py (compute_weight_and_optimizer_memory): the most loaded
// shard holds (block/p + V·h)/t parameters, V the padded vocabulary (32000 -> 32768 over 8
// ranks), at 18 bytes, or 6 + 12/d with the distributed optimizer (= our bf16 ZeRO-1). That
// formula also divides the replicated RMSNorm weights by t (1.3e-4 of the shard here).
TEST(MemoryStatesTest, FirstStageMatchesMegatronWeightAndOptimizerMemory) {
  const ModelSpec m = llama2_70b();
  for (int zero : {0, 1}) {
    Parallelism par = tp(8, true, Recompute::kSelective);
    par.pipeline = 4;
    par.data = 8;
    par.global_batch_size = 256;
    par.zero_stage = zero;
    const StageMemory first = estimate_memory(m, par, a100()).stages.front();
    const double block = m.num_layers * layer_parameters(m) + m.hidden_size;  // + final norm
    const double shard = (block / 4 + 32768.0 * m.hidden_size) / 8;
    const double megatron = shard * (zero == 0 ? 18.0 : 6.0 + 12.0 / 8);
    const double ours = first.weights_bytes + first.gradients_bytes + first.optimizer_bytes;
    EXPECT_NEAR(ours / megatron, 1.0, 2e-4) << "zero=" << zero;
  }
}

// Rajbhandari et al. 2020 Figure 1: a 7.5B model with fp16 mixed-precision Adam (K = 12) on 64
// data-parallel GPUs needs 120 GB (baseline), 31.4 GB (P_os), 16.6 GB (P_os+g), 1.88 GB (P_os+g+p).
TEST(MemoryStatesTest, ZeroStagesMatchZeroPaperFigure1) {
  const double psi = 7.5e9;
  const double stated_gb[] = {120.0, 31.4, 16.6, 1.88};
  const BytesPerParameter bpp = bytes_per_parameter(Precision::kFp16);
  EXPECT_DOUBLE_EQ(bpp.total_bytes(), 16.0);
  EXPECT_DOUBLE_EQ(bytes_per_parameter(Precision::kBf16).total_bytes(), 18.0);
  ModelSpec m = gpt(32, 4096, 32);
  for (int zero = 0; zero <= 3; ++zero) {
    Parallelism par;
    par.data = 64;
    par.global_batch_size = 64;
    par.zero_stage = zero;
    par.precision = Precision::kFp16;
    const StageMemory s = estimate_memory(m, par, a100()).stages.front();
    const double per_param =
        (s.weights_bytes + s.gradients_bytes + s.optimizer_bytes) / s.parameters;
    EXPECT_NEAR(per_param * psi / 1e9 / stated_gb[zero], 1.0, 0.005) << "zero=" << zero;
  }
}

// Unset, the optimizer keys give Megatron's table: 12 B per parameter for 16-bit and fp8
// training, 8 for fp32 (no separate master).
TEST(MemoryStatesTest, OptimizerDefaultsMatchTheMegatronTable) {
  for (Precision precision :
       {Precision::kFp16, Precision::kBf16, Precision::kFp8, Precision::kFp32}) {
    Parallelism par;
    par.precision = precision;
    EXPECT_EQ(optimizer_bytes_per_parameter(par), bytes_per_parameter(precision).optimizer_bytes);
  }
}

// The optimizer column is master + 2 x moment bytes over D (ZeRO-1 here, D = 8): Apex
// DistributedFusedAdam with dtype=bf16 keeps its master copy and moments in bf16 (6 B); with
// store_param_remainders the int16 remainders and fp32 moments (10 B); NeMo's store_params=False
// with bf16 moments keeps no master (4 B); Megatron-Core's --main-params-dtype fp16 with fp32
// moments 10 B. Weights and gradients do not change.
TEST(MemoryStatesTest, OptimizerColumnFollowsMasterAndMomentStorage) {
  const ModelSpec m = llama2_70b();
  Parallelism par = tp(8, true, Recompute::kSelective);
  par.pipeline = 4;
  par.data = 8;
  par.global_batch_size = 256;
  par.zero_stage = 1;
  const StageMemory defaults = estimate_memory(m, par, a100()).stages.front();
  EXPECT_NEAR(defaults.optimizer_bytes, 12.0 * defaults.parameters / 8, 1.0);
  const auto optimizer_bytes_per_param = [&](std::optional<Precision> state, MasterWeights master) {
    Parallelism with = par;
    with.optimizer_state_precision = state;
    with.master_weights = master;
    const StageMemory s = estimate_memory(m, with, a100()).stages.front();
    EXPECT_EQ(s.weights_bytes, defaults.weights_bytes);
    EXPECT_EQ(s.gradients_bytes, defaults.gradients_bytes);
    return s.optimizer_bytes * 8 / s.parameters;
  };
  EXPECT_NEAR(optimizer_bytes_per_param(Precision::kBf16, MasterWeights::kBf16), 6.0, 1e-9);
  EXPECT_NEAR(optimizer_bytes_per_param(std::nullopt, MasterWeights::kFp32Remainders), 10.0, 1e-9);
  EXPECT_NEAR(optimizer_bytes_per_param(Precision::kBf16, MasterWeights::kNone), 4.0, 1e-9);
  EXPECT_NEAR(optimizer_bytes_per_param(Precision::kFp32, MasterWeights::kFp16), 10.0, 1e-9);
  EXPECT_NEAR(optimizer_bytes_per_param(Precision::kFp32, MasterWeights::kFp32), 12.0, 1e-9);
}

// FSDP mixed precision drops the 16-bit shard because the fp32 master rebuilds it; remainders
// need the bf16 shard (its high half), so ZeRO-3 then keeps it: 2 + 4 + (2 + 8) over D, the same
// 16 B as FSDP's 4 + 4 + 8, split differently.
TEST(MemoryStatesTest, ZeroThreeKeepsTheSixteenBitShardBesideRemainders) {
  const ModelSpec m = llama2_70b();
  Parallelism par = tp(8, true, Recompute::kFull);
  par.data = 4;
  par.zero_stage = 3;
  par.master_weights = MasterWeights::kFp32Remainders;
  const StageMemory s = estimate_memory(m, par, a100()).stages.front();
  EXPECT_NEAR(s.weights_bytes, 2.0 * s.parameters / 4, 1.0);
  EXPECT_NEAR(s.weights_bytes + s.gradients_bytes + s.optimizer_bytes, 16.0 * s.parameters / 4,
              1.0);
}

// The Adam step's traffic per parameter (iteration_model.cpp): 34 B by default for every
// 16-bit and fp8 precision; then 2 x master + the 16-bit weights written (+ read, when they are
// the master's high half), 4 x moment bytes, 8 B of gradient reads.
TEST(MemoryStatesTest, AdamStepBytesFollowTheStorage) {
  for (Precision precision : {Precision::kBf16, Precision::kFp8}) {
    Parallelism par;
    par.precision = precision;
    EXPECT_EQ(adam_step_bytes_per_parameter(par), 34.0);
  }
  // fp16's loss scaling: the 16-bit gradients copied into fp32 (2 + 4) and unscaled (4 + 4);
  // no copy when they were reduced (and accumulated) in fp32.
  Parallelism fp16;
  fp16.precision = Precision::kFp16;
  EXPECT_EQ(adam_step_bytes_per_parameter(fp16), 34.0 + 6.0 + 8.0);
  fp16.grad_reduce_precision = Precision::kFp32;
  EXPECT_EQ(adam_step_bytes_per_parameter(fp16), 34.0 + 8.0);
  Parallelism par;
  par.master_weights = MasterWeights::kFp32Remainders;
  EXPECT_EQ(adam_step_bytes_per_parameter(par), 8.0 + 16.0 + (4.0 + 2.0 + 2.0));
  par.optimizer_state_precision = Precision::kBf16;
  par.master_weights = MasterWeights::kBf16;
  EXPECT_EQ(adam_step_bytes_per_parameter(par), 8.0 + 8.0 + (4.0 + 2.0));
  par.master_weights = MasterWeights::kNone;
  EXPECT_EQ(adam_step_bytes_per_parameter(par), 8.0 + 8.0 + (2.0 + 2.0));
}

TEST(MemoryScheduleTest, MicroBatchesInFlightPerSchedule) {
  Parallelism par;
  par.pipeline = 8;
  par.global_batch_size = 16;                              // 16 micro-batches
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, 0), 8.0);  // 1F1B: p - i
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, 7), 1.0);
  par.schedule = Schedule::kZeroBubble;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, 3), 5.0);
  par.schedule = Schedule::kGpipe;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, 7), 16.0);
  par.schedule = Schedule::kInterleaved;
  par.virtual_pipeline_stages = 4;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, 0), 8.0 * (1.0 + 7.0 / 32.0));
  // Groups of 12 micro-batches: warm-up (8 - 1)·2 + (4 - 1)·12 chunk forwards, plus one.
  par.global_batch_size = 24;
  par.microbatch_group_size = 12;
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, 0), (14.0 + 36.0 + 1.0) / 4.0);
  par.microbatch_group_size = 0;
  par.global_batch_size = 16;
  par.schedule = Schedule::kOneFOneB;
  par.global_batch_size = 4;  // fewer micro-batches than stages
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, 0), 4.0);
  // DualPipeV: 2P + 1 chunk forwards on every stage, each chunk half the stage.
  par.schedule = Schedule::kDualPipeV;
  par.virtual_pipeline_stages = 2;
  par.global_batch_size = 16;
  for (const int stage : {0, 3, 7})
    EXPECT_DOUBLE_EQ(micro_batches_in_flight(par, stage), 17.0 / 2.0);
  EXPECT_DOUBLE_EQ(weight_gradients_pending(par, 7), 0.0);
}

// DualPipeV's V puts the model's last chunk, and with it the head and its logits, on stage 0,
// beside the embedding; the last stage holds layers only.
TEST(MemoryScheduleTest, DualPipeVHoldsTheHeadOnTheFirstStage) {
  const ModelSpec m = llama2_70b();
  Parallelism par = tp(8, true, Recompute::kFull);
  par.pipeline = 8;
  par.global_batch_size = 16;
  const GpuSpec gpu = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  const MemoryEstimate one_f_one_b = estimate_memory(m, par, gpu);
  par.schedule = Schedule::kDualPipeV;
  par.virtual_pipeline_stages = 2;
  const MemoryEstimate dual = estimate_memory(m, par, gpu);
  EXPECT_GT(dual.stages.front().embedding_logits_bytes,
            one_f_one_b.stages.front().embedding_logits_bytes);
  EXPECT_LT(dual.stages.back().embedding_logits_bytes,
            one_f_one_b.stages.back().embedding_logits_bytes);
  EXPECT_GT(dual.stages.front().parameters, one_f_one_b.stages.front().parameters);
  EXPECT_LT(dual.stages.back().parameters, one_f_one_b.stages.back().parameters);
  // Tied embeddings: the head on the embedding's stage needs no copy of the word embedding.
  ModelSpec tied = m;
  tied.tied_embeddings = true;
  EXPECT_NEAR(
      dual.stages.front().parameters - estimate_memory(tied, par, gpu).stages.front().parameters,
      word_embedding_parameters_per_rank(m, par.tensor), 1.0);
}

// ZB-H1 (estimate/pipeline_schedule.cpp) lets stage i defer up to i weight-gradient passes: with
// m >= p every stage holds p micro-batches' worth, p - i in flight plus i waiting for W, each
// keeping the linear inputs and output gradients (no-recompute, FlashAttention bytes), whatever
// the recompute mode. 1F1B defers none.
TEST(MemoryScheduleTest, ZeroBubbleKeepsWhatItsDeferredWeightGradientsNeed) {
  const ModelSpec m = llama2_70b();
  Parallelism par = tp(8, true, Recompute::kFull);
  par.pipeline = 8;
  par.global_batch_size = 16;
  par.schedule = Schedule::kZeroBubble;
  const MemoryEstimate zb = estimate_memory(m, par, a100());
  par.schedule = Schedule::kOneFOneB;
  const MemoryEstimate one_f_one_b = estimate_memory(m, par, a100());
  Parallelism no_recompute = par;
  no_recompute.recompute = Recompute::kNone;
  const double w_layer = activation_bytes_per_layer(m, no_recompute);
  for (int i = 0; i < 8; ++i) {
    par.schedule = Schedule::kZeroBubble;
    EXPECT_DOUBLE_EQ(weight_gradients_pending(par, i), i);
    EXPECT_EQ(zb.stages[static_cast<size_t>(i)].micro_batches_in_flight, 8) << i;
    EXPECT_DOUBLE_EQ(zb.stages[static_cast<size_t>(i)].activations_bytes -
                         one_f_one_b.stages[static_cast<size_t>(i)].activations_bytes,
                     10.0 * i * w_layer)
        << i;
    par.schedule = Schedule::kOneFOneB;
    EXPECT_DOUBLE_EQ(weight_gradients_pending(par, i), 0.0);
  }
  par.schedule = Schedule::kZeroBubble;
  par.global_batch_size = 4;  // fewer micro-batches than stages: min(p, m) - min(p - i, m)
  EXPECT_DOUBLE_EQ(weight_gradients_pending(par, 3), 0.0);
  EXPECT_DOUBLE_EQ(weight_gradients_pending(par, 6), 2.0);
}

// ZeRO-3 gathers the word embedding on the first stage and the output layer on the last, beside
// the two prefetched layers; with tied embeddings and no pipeline they are one matrix.
TEST(MemoryStageTest, ZeroThreeGathersTheEmbeddingAndOutputLayer) {
  ModelSpec m = llama2_70b();
  Parallelism par = tp(8, true, Recompute::kFull);
  par.data = 4;
  par.zero_stage = 3;
  const double word = 32768.0 * 8192 / 8;  // padded vocabulary
  const double layers = 2.0 * layer_parameters_per_rank(m, 8);
  // bf16 (FSDP mixed precision): the gathered 16-bit buffer is separate from the fp32 shard.
  const double share = 2.0;
  const StageMemory untied = estimate_memory(m, par, a100()).stages.front();
  EXPECT_NEAR(untied.communication_bytes - 2.0 * kBucketStagingBytes, (layers + 2.0 * word) * share,
              1.0);
  m.tied_embeddings = true;
  const StageMemory tied = estimate_memory(m, par, a100()).stages.front();
  EXPECT_NEAR(tied.communication_bytes - 2.0 * kBucketStagingBytes, (layers + word) * share, 1.0);
  // fp16 (DeepSpeed): each rank's own quarter is its slice of the gathered buffer.
  par.precision = Precision::kFp16;
  const StageMemory fp16 = estimate_memory(m, par, a100()).stages.front();
  EXPECT_NEAR(fp16.communication_bytes - 2.0 * kBucketStagingBytes,
              (layers + word) * 2.0 * (1.0 - 1.0 / 4), 1.0);
}

// FSDP full shard with bf16 compute keeps the fp32 shard (the optimizer's master copy), the
// fp32 sharded gradient and Adam's moments: 16 B per parameter over D, no 16-bit shard (FSDP
// frees it after each all-gather). fp16 (DeepSpeed ZeRO-3) keeps its fp16 partition: 2 + 2 + 12.
TEST(MemoryStageTest, ZeroThreeKeepsNoSixteenBitShardUnderFsdpMixedPrecision) {
  const ModelSpec m = llama2_70b();
  Parallelism par = tp(8, true, Recompute::kFull);
  par.data = 4;
  par.zero_stage = 3;
  const StageMemory bf16 = estimate_memory(m, par, a100()).stages.front();
  EXPECT_EQ(bf16.weights_bytes, 0.0);
  EXPECT_NEAR(bf16.gradients_bytes + bf16.optimizer_bytes, 16.0 * bf16.parameters / 4, 1.0);
  par.precision = Precision::kFp16;
  const StageMemory fp16 = estimate_memory(m, par, a100()).stages.front();
  EXPECT_NEAR(fp16.weights_bytes + fp16.gradients_bytes + fp16.optimizer_bytes,
              16.0 * fp16.parameters / 4, 1.0);
  EXPECT_GT(fp16.weights_bytes, 0.0);
}

TEST(MemoryStageTest, EmbeddingLogitsAndTiedCopy) {
  const ModelSpec m = gpt3_175b();
  Parallelism par = tp(8, true, Recompute::kSelective);
  par.pipeline = 8;
  par.global_batch_size = 64;
  const MemoryEstimate est = estimate_memory(m, par, a100());
  const double s = m.seq_length;
  const double v = m.vocab_size;
  const StageMemory& last = est.stages.back();
  // Last stage: fp32 softmax + bf16 logits (6sbV/t) and the final norm's input and output
  // (4sbh/t).
  EXPECT_DOUBLE_EQ(last.embedding_logits_bytes, 6.0 * s * v / 8 + 4.0 * sbh(m) / 8);
  // A single-kernel loss keeps the bf16 logits for backward instead of an fp32 softmax.
  ModelSpec single = m;
  single.cross_entropy = CrossEntropyKernel::kSingleKernel;
  EXPECT_DOUBLE_EQ(estimate_memory(single, par, a100()).stages.back().embedding_logits_bytes,
                   4.0 * s * v / 8 + 4.0 * sbh(m) / 8);
  // Tied embeddings with p > 1: the last stage keeps a copy of the word embedding.
  const double word = v * m.hidden_size / 8;
  EXPECT_NEAR(last.parameters, 12.0 * layer_parameters_per_rank(m, 8) + word + 2.0 * m.hidden_size,
              1.0);
  EXPECT_DOUBLE_EQ(est.stages[3].embedding_logits_bytes, 0.0);
  par.pipeline = 1;
  const StageMemory only = estimate_memory(m, par, a100()).stages.front();
  // p = 1: layers and word embedding split by t; norms, row-parallel biases, positions and the
  // final norm replicated (GPT: 6h per layer).
  const double replicated = 6.0 * m.hidden_size;
  EXPECT_NEAR(only.parameters,
              total_parameters(m) -
                  (m.num_layers * (layer_parameters(m) - replicated) + v * m.hidden_size) * 7 / 8,
              1.0);
}

// Full recompute keeps each layer's input for the micro-batches in flight plus one layer's
// activations live during its backward recompute.
TEST(MemoryStageTest, FullRecomputeAddsOneLiveLayer) {
  const ModelSpec m = gpt3_175b();
  Parallelism par = tp(8, true, Recompute::kFull);
  par.pipeline = 8;
  par.global_batch_size = 64;
  const StageMemory first = estimate_memory(m, par, a100()).stages.front();
  const double input = 2.0 * sbh(m) / 8;
  EXPECT_DOUBLE_EQ(first.activations_bytes, 12 * 8 * input + (34.0 * sbh(m) / 8 - input));
}

// Published layouts: GPT-3 175B at t = 8, p = 8 with SP + selective ran on 80 GB A100s
// (Korthikanti Table 3); the same model on one GPU does not fit; MT-NLG 530B at t = 8, p = 35
// fits with SP + selective but its TP-only, no-recompute activations alone exceed 80 GB
// (Korthikanti Figure 1).
// Transformer Engine's fp8 weight caches (fp8 weight + fp8 transpose, 2 B per GEMM weight
// element) count with the weights when the parameters are bf16; fp8 parameters (1 B + a 1 B
// transpose) hold as many bytes as bf16 weights and have no cache.
TEST(MemoryFp8Test, WeightCachesAddTwoBytesPerGemmWeight) {
  const ModelSpec m = llama2_70b();
  Parallelism bf16 = tp(8, true, Recompute::kSelective);
  bf16.pipeline = 4;
  Parallelism fp8 = bf16;
  fp8.precision = Precision::kFp8;
  Parallelism fp8_params = fp8;
  fp8_params.fp8_params = true;
  const MemoryEstimate b = estimate_memory(m, bf16, *builtin_catalog().find_gpu("H100-SXM5-80GB"));
  const MemoryEstimate f = estimate_memory(m, fp8, *builtin_catalog().find_gpu("H100-SXM5-80GB"));
  const MemoryEstimate fp =
      estimate_memory(m, fp8_params, *builtin_catalog().find_gpu("H100-SXM5-80GB"));
  // Llama-2 70B per TP-8 rank: (2h^2 + 2h*kv + 3hf) / 8 = 106,954,752 GEMM weights per layer.
  EXPECT_DOUBLE_EQ(layer_matmul_parameters_per_rank(m, 8), 106954752.0);
  for (int i = 0; i < 4; ++i) {
    const double layers = 20.0;
    EXPECT_DOUBLE_EQ(f.stages[i].weights_bytes - b.stages[i].weights_bytes,
                     2.0 * layers * layer_matmul_parameters_per_rank(m, 8))
        << i;
    EXPECT_DOUBLE_EQ(fp.stages[i].weights_bytes, b.stages[i].weights_bytes) << i;
    EXPECT_DOUBLE_EQ(f.stages[i].gradients_bytes, b.stages[i].gradients_bytes) << i;
  }
  // Under ZeRO-3 TE keeps the caches sharded over the data-parallel group.
  fp8.zero_stage = 3;
  fp8.data = 4;
  fp8.global_batch_size = 64;
  Parallelism fp8_zero3_params = fp8;
  fp8_zero3_params.fp8_params = true;
  const MemoryEstimate z = estimate_memory(m, fp8, *builtin_catalog().find_gpu("H100-SXM5-80GB"));
  const MemoryEstimate zp =
      estimate_memory(m, fp8_zero3_params, *builtin_catalog().find_gpu("H100-SXM5-80GB"));
  EXPECT_DOUBLE_EQ(z.stages[1].weights_bytes - zp.stages[1].weights_bytes,
                   2.0 * 20.0 * layer_matmul_parameters_per_rank(m, 8) / 4.0);
  // and gathers the two live layers' caches with their weights.
  EXPECT_DOUBLE_EQ(z.stages[1].communication_bytes - zp.stages[1].communication_bytes,
                   2.0 * 2.0 * layer_matmul_parameters_per_rank(m, 8) * (1.0 - 1.0 / 4.0));
}

// Under fp8, TE saves the two norm outputs and the MLP activation output in fp8 (1 B) and the
// attention projection's input in fp8 too, a copy beside flash attention's bf16 output when
// that is kept (no recompute): GPT-3 (f = 4h) with TP+SP goes from 34sbh/t to
// (34 - 2 + 1 - 4)sbh/t = 29sbh/t, 27sbh/t under selective recompute.
TEST(MemoryFp8Test, ActivationsCountTeFp8TensorsAtOneByte) {
  const ModelSpec m = gpt3_175b();
  Parallelism p = tp(8, true, Recompute::kNone);
  p.precision = Precision::kFp8;
  // Flash attention keeps its bf16 output beside the projection's fp8 copy: 34 - 2 - 4 + 1.
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, p), sbh(m) / 8 * 29.0);
  // Selective recompute checkpoints core attention: only the fp8 copy is kept, 34 - 2 - 4 - 1.
  p.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, p), sbh(m) / 8 * 27.0);
  // Without SP the norm outputs are whole on every rank: 10sbh - 2sbh + (1 - 4)sbh/t.
  p.recompute = Recompute::kNone;
  p.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, p), sbh(m) * (8.0 + 21.0 / 8));
  // Materialised attention keeps its bf16 scores, and its backward needs the probabilities
  // and V, not the output: the projection's input is kept only in fp8 (2 + (1 + 4)/t saved).
  Parallelism bf16 = p;
  bf16.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, bf16, AttentionMemory::kMaterialized) -
                       activation_bytes_per_layer(m, p, AttentionMemory::kMaterialized),
                   sbh(m) * (2.0 + 5.0 / 8));
  // Full recompute keeps only the bf16 layer input.
  p.recompute = Recompute::kFull;
  bf16.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(m, p), activation_bytes_per_layer(m, bf16));
  // SwiGLU (Llama-2 70B, TP 8 + SP, selective): the f-wide product goes to fp8, the 2f
  // gate/up output stays; the norm outputs and the projection's input too.
  const ModelSpec l = llama2_70b();
  Parallelism lp = tp(8, true, Recompute::kSelective);
  Parallelism lb = lp;
  lp.precision = Precision::kFp8;
  const double s = static_cast<double>(l.seq_length);
  EXPECT_DOUBLE_EQ(activation_bytes_per_layer(l, lb) - activation_bytes_per_layer(l, lp),
                   s * (2.0 * 8192 + 8192 + 28672) / 8);
}

TEST(MemoryFitTest, PublishedLayouts) {
  Parallelism par = tp(8, true, Recompute::kSelective);
  par.pipeline = 8;
  par.data = 16;
  par.global_batch_size = 1536;
  par.zero_stage = 1;
  EXPECT_TRUE(estimate_memory(gpt3_175b(), par, a100()).fits);
  EXPECT_FALSE(estimate_memory(gpt3_175b(), tp(1, false, Recompute::kFull), a100()).fits);

  par.pipeline = 35;
  par.data = 8;
  par.global_batch_size = 2240;
  const MemoryEstimate ok = estimate_memory(mt_nlg_530b(), par, a100());
  EXPECT_TRUE(ok.fits) << ok.peak_bytes / 1e9;
  EXPECT_EQ(ok.worst_stage, 0);
  par.sequence_parallel = false;
  par.recompute = Recompute::kNone;
  const MemoryEstimate big =
      estimate_memory(mt_nlg_530b(), par, a100(), AttentionMemory::kMaterialized);
  EXPECT_FALSE(big.fits);
  EXPECT_GT(big.stages.front().activations_bytes, 80e9);
}

// The worked example of docs/memory.md: GPT-3 175B as in scenarios' Selene layout (t = 8, p = 8,
// d = 16, SP, selective, ZeRO-1, bf16, 1536 sequences) on A100-80GB. Pins the breakdown.
TEST(MemoryWorkedExampleTest, Gpt3OnSelene) {
  Parallelism par = tp(8, true, Recompute::kSelective);
  par.pipeline = 8;
  par.data = 16;
  par.global_batch_size = 1536;
  par.zero_stage = 1;
  const MemoryEstimate est = estimate_memory(gpt3_175b(), par, a100());
  const StageMemory& s = est.stages.front();
  EXPECT_EQ(est.worst_stage, 0);
  EXPECT_EQ(s.micro_batches_in_flight, 8);
  EXPECT_NEAR(s.weights_bytes / kGiB, 5.258, 0.001);
  EXPECT_NEAR(s.gradients_bytes / kGiB, 10.515, 0.001);
  EXPECT_NEAR(s.optimizer_bytes / kGiB, 1.972, 0.001);
  EXPECT_NEAR(s.activations_bytes / kGiB, 9.5625, 0.0001);  // 12 layers x 8 x 102 MiB
  EXPECT_NEAR(s.embedding_logits_bytes / kGiB, 0.024, 0.001);
  EXPECT_NEAR(s.communication_bytes / kGiB, 0.047, 0.001);
  EXPECT_NEAR(s.reserve_bytes / kGiB, 1.479, 0.001);
  EXPECT_NEAR(est.peak_bytes / kGiB, 28.857, 0.001);
  EXPECT_NEAR(est.stages.back().total_bytes() / kGiB, 19.978, 0.001);
  EXPECT_TRUE(est.fits);
}

// ---- Properties over seeded random layouts (LevelDB-style Random rnd(301)). ----

struct Case {
  ModelSpec model;
  Parallelism par;
};

Case random_case(std::mt19937_64& rnd) {
  const auto pick = [&](std::initializer_list<int> xs) {
    return *(xs.begin() + static_cast<std::ptrdiff_t>(rnd() % xs.size()));
  };
  Case c;
  const bool llama = rnd() % 2 == 0;
  const int heads = pick({16, 32, 64});
  c.model = gpt(pick({8, 16, 32, 48}), heads * 128, heads);
  c.model.num_kv_heads = llama ? 8 : heads;
  if (llama) {
    c.model.ffn_activation = FfnActivation::kSwiglu;
    c.model.ffn_hidden_size = c.model.hidden_size * 8 / 3;
    c.model.tied_embeddings = false;
  }
  c.model.vocab_size = pick({32000, 51200, 128256});
  c.par.tensor = pick({1, 2, 4, 8});
  c.par.pipeline = pick({1, 2, 4, 8});
  c.par.data = pick({1, 2, 8, 64});
  c.par.context = pick({1, 2});
  c.par.micro_batch_size = pick({1, 2});
  c.par.global_batch_size = c.par.micro_batch_size * c.par.data * pick({1, 4, 16});
  c.par.schedule = static_cast<Schedule>(rnd() % 4);
  c.par.virtual_pipeline_stages = c.par.schedule == Schedule::kInterleaved ? 2 : 1;
  c.par.recompute = static_cast<Recompute>(rnd() % 3);
  c.par.sequence_parallel = c.par.tensor > 1 && rnd() % 2 == 0;
  c.par.zero_stage = static_cast<int>(rnd() % 4);
  c.par.precision = static_cast<Precision>(rnd() % 3);
  return c;
}

double peak(const Case& c) {
  return estimate_memory(c.model, c.par, a100()).peak_bytes;
}

TEST(MemoryPropertyTest, BiggerModelNeverNeedsLess) {
  std::mt19937_64 rnd(301);
  for (int i = 0; i < 500; ++i) {
    const Case c = random_case(rnd);
    Case deeper = c;
    deeper.model.num_layers += c.par.pipeline;
    EXPECT_LE(peak(c), peak(deeper)) << i;
    Case wider = c;
    wider.model.hidden_size += 128 * 4;
    wider.model.num_attention_heads += 4;
    if (c.model.num_kv_heads == c.model.num_attention_heads)
      wider.model.num_kv_heads += 4;
    wider.model.ffn_hidden_size += 4 * 128 * 4;
    EXPECT_LE(peak(c), peak(wider)) << i;
    Case more_vocab = c;
    more_vocab.model.vocab_size += 1024;
    EXPECT_LE(peak(c), peak(more_vocab)) << i;
  }
}

TEST(MemoryPropertyTest, MoreTensorParallelNeverNeedsMorePerGpu) {
  std::mt19937_64 rnd(302);
  for (int i = 0; i < 500; ++i) {
    Case c = random_case(rnd);
    c.par.tensor = 1;
    double previous = peak(c);
    for (int t : {2, 4, 8}) {
      c.par.tensor = t;
      const double now = peak(c);
      EXPECT_LE(now, previous) << i << " t=" << t;
      previous = now;
    }
  }
}

TEST(MemoryPropertyTest, HigherZeroStageNeverNeedsMore) {
  std::mt19937_64 rnd(303);
  for (int i = 0; i < 500; ++i) {
    Case c = random_case(rnd);
    c.par.zero_stage = 0;
    double previous = peak(c);
    for (int z = 1; z <= 3; ++z) {
      c.par.zero_stage = z;
      const double now = peak(c);
      EXPECT_LE(now, previous) << i << " zero=" << z;
      previous = now;
    }
  }
}

// Adam's moments in 16 bits never need more memory than in fp32, whatever the master copy
// (bf16 and fp16 moments take the same bytes); and a smaller master never needs more: fp32,
// then a 16-bit copy (fp16, valid with every training precision), then none.
TEST(MemoryPropertyTest, SmallerOptimizerStorageNeverNeedsMore) {
  std::mt19937_64 rnd(305);
  for (int i = 0; i < 500; ++i) {
    Case c = random_case(rnd);
    double previous_master = 0.0;
    for (MasterWeights master :
         {MasterWeights::kFp32, MasterWeights::kFp16, MasterWeights::kNone}) {
      c.par.master_weights = master;
      c.par.optimizer_state_precision = Precision::kFp32;
      const double fp32 = peak(c);
      c.par.optimizer_state_precision = Precision::kBf16;
      const double bf16 = peak(c);
      c.par.optimizer_state_precision = Precision::kFp16;
      EXPECT_LE(bf16, fp32) << i;
      EXPECT_EQ(peak(c), bf16) << i;
      if (master != MasterWeights::kFp32) {
        EXPECT_LE(fp32, previous_master) << i << " " << to_string(master);
      }
      previous_master = fp32;
    }
  }
}

TEST(MemoryPropertyTest, FullLeSelectiveLeNone) {
  std::mt19937_64 rnd(304);
  for (int i = 0; i < 500; ++i) {
    for (AttentionMemory attention : {AttentionMemory::kFlash, AttentionMemory::kMaterialized}) {
      Case c = random_case(rnd);
      const auto at = [&](Recompute r) {
        c.par.recompute = r;
        return estimate_memory(c.model, c.par, a100(), attention).peak_bytes;
      };
      const double full = at(Recompute::kFull);
      const double selective = at(Recompute::kSelective);
      const double none = at(Recompute::kNone);
      EXPECT_LE(full, selective) << i;
      EXPECT_LE(selective, none) << i;
    }
  }
}

// Transformer Engine only lowers what fp8 saves: for every layout, recompute mode and attention
// kernel, fp8's activations (with or without fp8 parameters) never exceed bf16's.
TEST(MemoryPropertyTest, Fp8ActivationsNeverExceedBf16) {
  std::mt19937_64 rnd(305);
  for (int i = 0; i < 500; ++i) {
    for (AttentionMemory attention : {AttentionMemory::kFlash, AttentionMemory::kMaterialized}) {
      Case c = random_case(rnd);
      Parallelism bf16_par = c.par;
      bf16_par.precision = Precision::kBf16;
      c.par.precision = Precision::kFp8;
      c.par.fp8_params = rnd() % 2 == 0;
      EXPECT_LE(activation_bytes_per_layer(c.model, c.par, attention),
                activation_bytes_per_layer(c.model, bf16_par, attention))
          << i;
      const MemoryEstimate bf16 = estimate_memory(c.model, bf16_par, a100(), attention);
      const MemoryEstimate fp8 = estimate_memory(c.model, c.par, a100(), attention);
      for (size_t s = 0; s < bf16.stages.size(); ++s)
        EXPECT_LE(fp8.stages[s].activations_bytes, bf16.stages[s].activations_bytes) << i;
    }
  }
}

}  // namespace
}  // namespace capsim::memory_model_test
