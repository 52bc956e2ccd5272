// Parameter counts and FLOPs pinned to published figures.
#include "models/parameter_count.hpp"

#include <gtest/gtest.h>

#include "models/workload.hpp"

namespace capsim {
namespace {

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.name = "GPT-3 175B";
  m.num_layers = 96;
  m.hidden_size = 12288;
  m.num_attention_heads = 96;
  m.num_kv_heads = 96;
  m.ffn_hidden_size = 4 * 12288;
  m.ffn_activation = FfnActivation::kGelu;
  m.seq_length = 2048;
  m.vocab_size = 51200;
  m.tied_embeddings = true;
  return m;
}

ModelSpec llama(int layers, int hidden, int heads, int kv, int ffn, int vocab) {
  ModelSpec m;
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_attention_heads = heads;
  m.num_kv_heads = kv;
  m.ffn_hidden_size = ffn;
  m.ffn_activation = FfnActivation::kSwiglu;
  m.seq_length = 4096;
  m.vocab_size = vocab;
  m.tied_embeddings = false;
  return m;
}

// Brown et al. 2020 Table 2.1 lists 175.0B; with Megatron's padded vocabulary (51,200) and
// learned positions the count is 174.6B (Narayanan et al. 2021, Table 1).
TEST(ParameterCountTest, Gpt3175b) {
  EXPECT_NEAR(total_parameters(gpt3_175b()) / 1e9, 174.6, 0.05);
  EXPECT_DOUBLE_EQ(total_parameters(gpt3_175b()), 174615822336.0 + 2 * 12288);
}

// Touvron et al. 2023 (Llama 2): 70B model, 68.98B parameters as counted by Hugging Face.
TEST(ParameterCountTest, Llama2_70b) {
  EXPECT_NEAR(total_parameters(llama(80, 8192, 64, 8, 28672, 32000)) / 1e9, 68.98, 0.005);
}

// Llama 3 herd paper, Table 3: 405B with 126 layers, h=16384, 8 KV heads, FFN 53248,
// vocabulary 128,256: about 405.8B.
TEST(ParameterCountTest, Llama3_405b) {
  EXPECT_NEAR(total_parameters(llama(126, 16384, 128, 8, 53248, 128256)) / 1e9, 405.85, 0.01);
}

TEST(ParameterCountTest, UntyingAddsTheOutputMatrix) {
  ModelSpec tied = gpt3_175b();
  ModelSpec untied = tied;
  untied.tied_embeddings = false;
  EXPECT_DOUBLE_EQ(total_parameters(untied) - total_parameters(tied), 51200.0 * 12288.0);
}

// Megatron pads the vocabulary to a multiple of 128 rows per tensor-parallel rank
// (_vocab_size_with_padding): GPT-2's 50257 is 50304 on one rank and 51200 over 8.
TEST(ParameterCountTest, VocabularyIsPaddedLikeMegatron) {
  ModelSpec m = gpt3_175b();
  m.vocab_size = 50257;
  EXPECT_DOUBLE_EQ(padded_vocab_size(m, 1), 50304.0);
  EXPECT_DOUBLE_EQ(padded_vocab_size(m, 8), 51200.0);
  m.vocab_size = 128256;  // Llama 3: a multiple of 128 already, not of 512
  EXPECT_DOUBLE_EQ(padded_vocab_size(m, 1), 128256.0);
  EXPECT_DOUBLE_EQ(padded_vocab_size(m, 4), 128512.0);
  EXPECT_DOUBLE_EQ(word_embedding_parameters_per_rank(m, 4), 128512.0 / 4 * 12288);
}

// Per tensor-parallel rank, a GPT layer keeps its two LayerNorms (4h) and the biases of its
// row-parallel projections (2h) whole; a Llama layer its two RMSNorms (2h).
TEST(ParameterCountTest, TensorParallelRanksReplicateNormsAndRowParallelBiases) {
  const ModelSpec gpt = gpt3_175b();
  const double h = gpt.hidden_size;
  EXPECT_DOUBLE_EQ(layer_parameters_per_rank(gpt, 1), layer_parameters(gpt));
  EXPECT_DOUBLE_EQ(layer_parameters_per_rank(gpt, 8),
                   (layer_parameters(gpt) - 6.0 * h) / 8.0 + 6.0 * h);
  const ModelSpec l = llama(80, 8192, 64, 8, 28672, 32000);
  EXPECT_DOUBLE_EQ(layer_parameters_per_rank(l, 8),
                   (layer_parameters(l) - 2.0 * 8192) / 8.0 + 2.0 * 8192);
  // Positions and the final norm are replicated, the padded word embedding split.
  EXPECT_DOUBLE_EQ(input_embedding_parameters_per_rank(gpt, 8),
                   51200.0 * h / 8.0 + gpt.seq_length * h);
  EXPECT_DOUBLE_EQ(head_parameters_per_rank(l, 8), 8192.0 + 32768.0 * 8192 / 8.0);
}

double sum(const std::vector<double>& values) {
  double total = 0.0;
  for (const double v : values)
    total += v;
  return total;
}

// Megatron's ParallelTransformerLayer holds twelve tensors (two LayerNorms, the fused QKV,
// output projection and two MLP projections, each with weight and bias); a Llama layer six (two
// RMSNorms, fused QKV, output, fused gate/up, down). They add up to the layer's parameters.
TEST(ParameterCountTest, LayerTensorsAreMegatronsModulesAndSumToTheLayer) {
  const ModelSpec gpt = gpt3_175b();
  const double h = gpt.hidden_size;
  const std::vector<double> g = layer_parameter_tensors_per_rank(gpt, 1, false);
  ASSERT_EQ(g.size(), 12U);
  EXPECT_DOUBLE_EQ(g[2], 3.0 * h * h);  // fused QKV weight
  EXPECT_DOUBLE_EQ(g[3], 3.0 * h);      // and its bias
  EXPECT_DOUBLE_EQ(sum(g), layer_parameters(gpt));
  EXPECT_DOUBLE_EQ(sum(layer_parameter_tensors_per_rank(gpt, 8, false)),
                   layer_parameters_per_rank(gpt, 8));
  const ModelSpec l = llama(80, 8192, 64, 8, 28672, 32000);
  const std::vector<double> t = layer_parameter_tensors_per_rank(l, 8, false);
  ASSERT_EQ(t.size(), 6U);
  EXPECT_DOUBLE_EQ(t[4], 2.0 * 8192 * 28672 / 8.0);  // gate and up fused
  EXPECT_DOUBLE_EQ(sum(t), layer_parameters_per_rank(l, 8));
}

// Megatron's hardware FLOPs with full recompute: 96·B·s·l·h²(1 + s/6h + V/16lh)
// (Narayanan et al. 2021, §5.1), per token (B·s = 1), exactly.
TEST(FlopsTest, MegatronFormulaWithFullRecompute) {
  const ModelSpec m = gpt3_175b();
  const double l = m.num_layers;
  const double h = m.hidden_size;
  const double s = m.seq_length;
  const double v = m.vocab_size;
  const double megatron = 96.0 * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  EXPECT_NEAR(hardware_flop_per_token(m, Recompute::kFull) / megatron, 1.0, 1e-12);
}

// Model FLOPs per token: 6N + 12·l·h·s (PaLM appendix B), N the matmul parameters.
TEST(FlopsTest, ModelFlopsFollowPalmConvention) {
  const ModelSpec m = gpt3_175b();
  const double n = matmul_parameters(m);
  EXPECT_DOUBLE_EQ(model_flop_per_token(m), 6.0 * n + 12.0 * 96 * 12288 * 2048);
  // No recompute executes exactly the model FLOPs; selective adds the attention forward.
  EXPECT_DOUBLE_EQ(hardware_flop_per_token(m, Recompute::kNone), model_flop_per_token(m));
  EXPECT_DOUBLE_EQ(hardware_flop_per_token(m, Recompute::kSelective) - model_flop_per_token(m),
                   4.0 * 96 * 12288 * 2048);
}

// The lowered GEMMs of one layer (forward, no TP) carry 2·tokens·(layer matmul weights) FLOPs.
TEST(WorkloadTest, LayerGemmFlopsMatchWeights) {
  const ModelSpec m = llama(80, 8192, 64, 8, 28672, 32000);
  Parallelism p;
  p.micro_batch_size = 2;
  const double tokens = 2.0 * m.seq_length;
  double forward_gemm_flop = 0.0;
  double backward_gemm_flop = 0.0;
  for (const Op& op : lower_layer(m, p)) {
    if (op.kind != KernelKind::kGemm)
      continue;
    (op.pass == Pass::kForward ? forward_gemm_flop : backward_gemm_flop) += op.flop;
  }
  const double weights = layer_parameters(m) - 2.0 * m.hidden_size;  // minus the norms
  EXPECT_DOUBLE_EQ(forward_gemm_flop, 2.0 * tokens * weights);
  EXPECT_DOUBLE_EQ(backward_gemm_flop, 2.0 * forward_gemm_flop);
}

TEST(WorkloadTest, TensorParallelSplitsGemmShapes) {
  const ModelSpec m = gpt3_175b();
  Parallelism p;
  p.tensor = 8;
  for (const Op& op : lower_layer(m, p)) {
    if (op.kind == KernelKind::kGemm && op.pass == Pass::kForward &&
        std::string_view(op.name) == "qkv") {
      EXPECT_DOUBLE_EQ(op.gemm.m, 2048.0);
      EXPECT_DOUBLE_EQ(op.gemm.n, 3.0 * 12288 / 8);
      EXPECT_DOUBLE_EQ(op.gemm.k, 12288.0);
    }
    if (op.kind == KernelKind::kGemm && op.pass == Pass::kForward &&
        std::string_view(op.name) == "mlp_down") {
      EXPECT_DOUBLE_EQ(op.gemm.k, 4.0 * 12288 / 8);
      EXPECT_DOUBLE_EQ(op.gemm.n, 12288.0);
    }
  }
}

TEST(WorkloadTest, CausalAttentionIsHalfTheConventionalFlops) {
  const ModelSpec m = gpt3_175b();
  Parallelism p;
  for (const Op& op : lower_layer(m, p)) {
    if (op.kind == KernelKind::kAttention && op.pass == Pass::kForward) {
      EXPECT_DOUBLE_EQ(op.flop, 0.5 * 4.0 * 2048.0 * 2048.0 * 12288.0);
      EXPECT_EQ(op.head_dim, 128);
    }
  }
}

// fp8 linears add Transformer Engine's cast-transpose traffic: 4 bytes per element of the
// attention projection's input, and per output-gradient element of every GEMM but the up
// projection (cast inside the activation's backward); the QKV and MLP inputs are cast by the norm
// and activation kernels that make them, leaving 1 byte (the transpose); 16-bit layouts add none.
TEST(WorkloadTest, Fp8LinearsAddCastTransposeTraffic) {
  const ModelSpec m = llama(80, 8192, 64, 8, 28672, 32000);
  Parallelism p;
  p.tensor = 4;
  double bf16_bytes = 0.0;
  for (const Op& op : lower_layer(m, p)) {
    if (op.kind == KernelKind::kMemoryBound)
      bf16_bytes += op.bytes;
  }
  p.precision = Precision::kFp8;
  const double tokens = m.seq_length;
  double cast_fwd = 0.0;
  double cast_bwd = 0.0;
  double other_bytes = 0.0;
  for (const Op& op : lower_layer(m, p)) {
    if (op.kind != KernelKind::kMemoryBound)
      continue;
    if (std::string_view(op.name).find("_fp8_cast") == std::string_view::npos) {
      other_bytes += op.bytes;
      continue;
    }
    (op.pass == Pass::kForward ? cast_fwd : cast_bwd) += op.bytes;
  }
  const double h = m.hidden_size;
  const double qkv_out = (h + 2.0 * 8 * 128) / 4;
  // Forward: qkv, mlp_up and mlp_down inputs fused (1 B), attn_proj's cast (4 B).
  const double fwd_per_token = 1.0 * h + 4.0 * h / 4 + 1.0 * h + 1.0 * 28672.0 / 4;
  // Backward: qkv, attn_proj and mlp_down output gradients (4 B); mlp_up's is fused.
  const double bwd_per_token = 4.0 * (qkv_out + h + h);
  EXPECT_DOUBLE_EQ(cast_fwd, tokens * fwd_per_token);
  EXPECT_DOUBLE_EQ(cast_bwd, tokens * bwd_per_token);
  EXPECT_DOUBLE_EQ(other_bytes, bf16_bytes);  // the rest stays 16-bit
}

// The loss follows Megatron's vocab-parallel cross-entropy pass by pass: per logit, forward
// 38 B at 16 bits (fp32 copy 2 + 4, max 4, subtract, exp and divide 8 each, exp-sum 4), backward
// 14 B (multiply 8, cast back 4 + 2); the vocabulary is split over TP ranks.
TEST(WorkloadTest, CrossEntropyMakesMegatronsPasses) {
  ModelSpec m = llama(32, 4096, 32, 8, 14336, 128256);
  m.cross_entropy = CrossEntropyKernel::kUnfused;
  Parallelism p;
  p.tensor = 2;
  p.micro_batch_size = 2;
  const double logits = 2.0 * m.seq_length * 128256.0 / 2.0;
  double fwd = 0.0;
  double bwd = 0.0;
  for (const Op& op : lower_head(m, p)) {
    if (std::string_view(op.name) == "cross_entropy")
      (op.pass == Pass::kForward ? fwd : bwd) += op.bytes;
  }
  EXPECT_DOUBLE_EQ(fwd, 38.0 * logits);
  EXPECT_DOUBLE_EQ(bwd, 14.0 * logits);
}

// An unpadded vocabulary (GPT-2's 50257) is padded before it is split: each of 4 ranks computes
// 12672 logits per token (50688 / 4), a whole, aligned GEMM width.
TEST(WorkloadTest, LogitsRunOnThePaddedVocabulary) {
  ModelSpec m = gpt3_175b();
  m.vocab_size = 50257;
  Parallelism p;
  p.tensor = 4;
  bool found = false;
  for (const Op& op : lower_head(m, p)) {
    if (std::string_view(op.name) == "logits" && op.pass == Pass::kForward) {
      EXPECT_DOUBLE_EQ(op.gemm.n, 12672.0);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

// nn.Embedding's weight gradient is dense: each micro-batch zero-fills the rank's whole table
// (padded vocab/t x h) and adds it into the main gradient (fp32 for bf16 training: 2 + 2 + 4 + 4
// bytes per element), a weight-gradient pass.
TEST(WorkloadTest, EmbeddingWeightGradientTouchesTheWholeTable) {
  const ModelSpec m = llama(32, 4096, 32, 8, 14336, 128256);
  Parallelism p;
  p.tensor = 4;
  p.precision = Precision::kBf16;
  double weight_bytes = 0.0;
  for (const Op& op : lower_embedding(m, p)) {
    if (op.pass == Pass::kBackwardWeight)
      weight_bytes += op.bytes;
  }
  EXPECT_DOUBLE_EQ(weight_bytes, 128512.0 / 4 * 4096 * 12.0);
}

// The fused implementation (Megatron-Core --cross-entropy-loss-fusion) makes 12 B fewer forward
// passes per logit (copy with max, subtract with exp); its backward is the same.
TEST(WorkloadTest, FusedCrossEntropyMakesFewerForwardPasses) {
  ModelSpec m = llama(32, 4096, 32, 8, 14336, 128256);
  const Parallelism p;
  const double logits = m.seq_length * 128256.0;
  const auto bytes = [&](Pass pass) {
    double total = 0.0;
    for (const Op& op : lower_head(m, p)) {
      if (std::string_view(op.name) == "cross_entropy" && op.pass == pass)
        total += op.bytes;
    }
    return total;
  };
  m.cross_entropy = CrossEntropyKernel::kFused;
  EXPECT_DOUBLE_EQ(bytes(Pass::kForward), 26.0 * logits);
  EXPECT_DOUBLE_EQ(bytes(Pass::kBackwardInput), 14.0 * logits);
  // One kernel each way (flash-attn's loss): two reads forward, a read and a write backward.
  m.cross_entropy = CrossEntropyKernel::kSingleKernel;
  EXPECT_DOUBLE_EQ(bytes(Pass::kForward), 4.0 * logits);
  EXPECT_DOUBLE_EQ(bytes(Pass::kBackwardInput), 4.0 * logits);
}

}  // namespace
}  // namespace capsim
