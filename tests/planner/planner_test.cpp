// Search, pruning counts, ranking, Pareto front, failure model and determinism of the planner,
// with in-process confirm functions (the event engine runs in planner_event_test.cpp).
#include "planner/planner.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/byte_units.hpp"
#include "models/catalog.hpp"
#include "models/instance_catalog.hpp"
#include "models/memory_model.hpp"
#include "models/pricing.hpp"
#include "models/training_stack.hpp"
#include "planner/failure_model.hpp"
#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/stage_split.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/layout_rules.hpp"
#include "estimate/stage_balance.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "io/text_format.hpp"
#include "tests/planner/skewed_confirmer.hpp"
#include "tests/test_paths.hpp"

namespace capsim::planner {
namespace {

using capsim::testing::kTestDataDir;

ModelSpec small_model() {
  ModelSpec m;
  m.name = "GPT 1.3B";
  m.num_layers = 24;
  m.hidden_size = 2048;
  m.num_attention_heads = 16;
  m.num_kv_heads = 16;
  m.ffn_hidden_size = 8192;
  m.seq_length = 2048;
  m.vocab_size = 51200;
  m.tied_embeddings = true;
  return m;
}

// A plan over one p4de node with a hand-countable space (see PruningCountsByHand).
PlanSpec hand_plan() {
  PlanSpec plan;
  plan.name = "hand";
  plan.model = small_model();
  plan.tokens = 1e9;
  plan.deadline_s = 365 * 86400.0;
  plan.instances = {{"p4de.24xlarge", {{Pricing::kOnDemand, 27.0}}}};
  plan.node_counts = {1};
  plan.global_batch_sizes = {64};
  SearchSpace& s = plan.space;
  s.tensor = {2, 16};
  s.pipeline = {1, 2, 5};
  s.virtual_pipeline_stages = {1};
  s.micro_batch_size = {1, 3};
  s.context = {1};
  s.schedule = {Schedule::kOneFOneB};
  s.recompute = {Recompute::kNone};
  s.zero_stage = {0, 2};
  s.sequence_parallel = {false};
  s.precision = {Precision::kBf16};
  return plan;
}

TEST(CheckStructureTest, EachReason) {
  const ModelSpec m = small_model();
  const ClusterSpec c = cluster_for_instance(*builtin_catalog().find_instance("p4de.24xlarge"), 2);
  Parallelism p;
  p.tensor = 8;
  p.pipeline = 2;
  p.data = 1;
  p.global_batch_size = 8;
  EXPECT_EQ(check_structure(m, c, p), std::nullopt);
  Parallelism q = p;
  q.tensor = 16;
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kTensorExceedsNode);
  q = p;
  q.data = 2;
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kGpuCount);
  q.data = 0;  // what the search gives where tensor x pipeline x context does not divide the GPUs
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kGpuCount);
  ModelSpec odd = m;
  odd.num_attention_heads = 12;  // 12 % 8 != 0
  EXPECT_EQ(check_structure(odd, c, p), PruneReason::kTensorDivisibility);
  q = p;
  q.pipeline = 1;
  q.context = 2;
  odd = m;
  odd.seq_length = 2050;  // not divisible by 2 x 2
  EXPECT_EQ(check_structure(odd, c, q), PruneReason::kContextDivisibility);
  q = p;
  q.schedule = Schedule::kInterleaved;
  q.virtual_pipeline_stages = 5;  // 24 % 10 != 0
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kLayerDivisibility);
  q = p;
  q.stage_layers = {11, 13};  // an uneven split that sums to 24 is fine...
  EXPECT_EQ(check_structure(m, c, q), std::nullopt);
  q.stage_layers = {11, 12};  // ...one that does not is not
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kLayerDivisibility);
  q = p;
  q.micro_batch_size = 3;
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kBatchDivisibility);
  q = p;
  q.schedule = Schedule::kInterleaved;
  q.virtual_pipeline_stages = 2;
  q.global_batch_size = 3;  // 3 micro-batches over 2 stages
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kInterleavedMicroBatches);
  q = p;
  q.zero_stage = 2;
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kZeroWithPipeline);
  EXPECT_EQ(check_structure(m, c, q, /*stack_shards_with_pipeline=*/true), std::nullopt);
  q = p;
  q.precision = Precision::kFp8;
  EXPECT_EQ(check_structure(m, c, q), PruneReason::kFp8Unsupported);
  q = p;
  q.sequence_parallel = true;
  odd = m;
  odd.seq_length = 2052;  // not divisible by tensor: a layout rule without a reason of its own
  EXPECT_EQ(check_structure(odd, c, q), PruneReason::kInvalidLayout);
  q.micro_batch_size = 3;  // the batch rule has one, and it comes first
  EXPECT_EQ(check_structure(odd, c, q), PruneReason::kBatchDivisibility);
}

// The planner prunes exactly the layouts that break a layout rule (what `capsim simulate`
// rejects) or one of its own two rules.
TEST(CheckStructureTest, PrunesWhatTheLayoutRulesReject) {
  const ModelSpec m = small_model();
  const ClusterSpec c = cluster_for_instance(*builtin_catalog().find_instance("p4d.24xlarge"), 2);
  std::mt19937_64 rnd(301);
  const auto pick = [&rnd](std::vector<int> values) {
    return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rnd)];
  };
  int pruned = 0;
  for (int i = 0; i < 5000; ++i) {
    Parallelism p;
    p.tensor = pick({1, 2, 4, 8, 16});
    p.pipeline = pick({1, 2, 4});
    p.data = pick({1, 2, 4});
    p.context = pick({1, 2});
    p.micro_batch_size = pick({1, 2});
    p.global_batch_size = pick({8, 16});
    p.virtual_pipeline_stages = pick({1, 2});
    p.schedule = p.virtual_pipeline_stages > 1 ? Schedule::kInterleaved : Schedule::kOneFOneB;
    p.sequence_parallel = pick({0, 1}) == 1;
    p.zero_stage = pick({0, 1, 2});
    p.precision = pick({0, 1}) == 1 ? Precision::kFp8 : Precision::kBf16;
    const bool planner_rule = p.tensor > c.gpus_per_node || (p.zero_stage >= 2 && p.pipeline > 1);
    const bool broken = !estimate::layout_problems(m, c, p).empty();
    EXPECT_EQ(check_structure(m, c, p).has_value(), planner_rule || broken) << i;
    pruned += planner_rule || broken ? 1 : 0;
  }
  EXPECT_GT(pruned, 100);
  EXPECT_LT(pruned, 5000);
}

TEST(UnevenStagesTest, LighterEndsLikeLlama3) {
  // Llama-3 405B: 126 layers over 16 stages as 7 + 14 x 8 + 7 (Dubey et al. 2024, §3.3.2).
  std::vector<int> llama(16, 8);
  llama.front() = 7;
  llama.back() = 7;
  EXPECT_EQ(uneven_stage_layers(126, 16, 1), llama);
  // Units of v layers: 63 chunks of 2 over 16 stages; the last stage is one chunk lighter.
  std::vector<int> v2(16, 8);
  v2.back() = 6;
  EXPECT_EQ(uneven_stage_layers(126, 16, 2), v2);
  // 48 over 32: sixteen stages of 1 at the ends, sixteen of 2 in the middle.
  const std::vector<int> s = uneven_stage_layers(48, 32, 1);
  ASSERT_EQ(s.size(), 32u);
  for (size_t i = 0; i < s.size(); ++i)
    EXPECT_EQ(s[i], (i < 8 || i >= 24) ? 1 : 2) << i;
  EXPECT_TRUE(uneven_stage_layers(10, 20, 1).empty());  // fewer layers than stages
  // Not a multiple of v: layer by layer, as with one chunk, while each chunk keeps a layer.
  EXPECT_EQ(uneven_stage_layers(61, 16, 2), uneven_stage_layers(61, 16, 1));
  EXPECT_EQ(uneven_stage_layers(63, 4, 2), (std::vector<int>{16, 16, 16, 15}));
  EXPECT_TRUE(uneven_stage_layers(31, 16, 2).empty());  // a stage of one layer over two chunks
}

// An interleaved layout whose micro-batches do not go in groups of P gets the smallest group
// Megatron-Core runs them in: DeepSeek-V3's 120 micro-batches per replica on 16 stages, 20.
TEST(UnevenStagesTest, InterleavedLayoutsGetAMicroBatchGroupThatFits) {
  Parallelism p;
  p.pipeline = 16;
  p.virtual_pipeline_stages = 2;
  p.schedule = Schedule::kInterleaved;
  p.data = 128;
  p.global_batch_size = 15360;
  choose_micro_batch_group(p);
  EXPECT_EQ(p.microbatch_group_size, 20);
  p.global_batch_size = 16384;  // 128 micro-batches: P's groups fit
  choose_micro_batch_group(p);
  EXPECT_EQ(p.microbatch_group_size, 0);
  p.global_batch_size = 128 * 17;  // 17: one group of all, whatever P
  choose_micro_batch_group(p);
  EXPECT_EQ(p.microbatch_group_size, 17);
  p.global_batch_size = 128 * 15;  // fewer than P: none fits
  choose_micro_batch_group(p);
  EXPECT_EQ(p.microbatch_group_size, 0);
  p.schedule = Schedule::kOneFOneB;  // only the interleaved schedule has groups
  p.virtual_pipeline_stages = 1;
  p.global_batch_size = 15360;
  choose_micro_batch_group(p);
  EXPECT_EQ(p.microbatch_group_size, 0);
}

// Llama-3 405B's 126 layers (on a narrow model) over 16 stages: one layout on 4 x p5.
PlanSpec llama3_split_plan() {
  PlanSpec plan = hand_plan();
  plan.model.num_layers = 126;
  plan.model.hidden_size = 1024;
  plan.model.ffn_hidden_size = 4096;
  plan.instances = {{"p5.48xlarge", {{Pricing::kOnDemand, 55.04}}}};
  plan.node_counts = {4};
  plan.global_batch_sizes = {256};
  plan.space.tensor = {2};
  plan.space.pipeline = {16};
  plan.space.micro_batch_size = {1};
  plan.space.zero_stage = {0};
  return plan;
}

TEST(UnevenStagesTest, PlannerSearchesLlama3Split) {
  PlanSpec plan = llama3_split_plan();
  plan.space.balance_stages = false;  // the screen's own split (balancing: the next test)
  const PlanResult r = run_plan(plan, {});
  for (int i = 0; i < kNumPruneReasons; ++i) {
    EXPECT_EQ(r.pruned.counts[static_cast<size_t>(i)], 0) << to_string(static_cast<PruneReason>(i));
  }
  ASSERT_EQ(r.screened, 1);
  EXPECT_EQ(r.balanced_splits, 0U);
  const Parallelism& p = r.candidates.at(0).candidate.parallelism;
  EXPECT_EQ(p.stage_layers, uneven_stage_layers(126, 16, 1));
  EXPECT_NE(candidate_scenario(plan, r.candidates[0].candidate).name.find("-uneven"),
            std::string::npos);
  // Without uneven stages the candidate still runs: 126 + 2 layers split evenly over 16 stages,
  // Megatron's split counting the embedding and the loss as layers (the same 7 + 14x8 + 7).
  plan.space.uneven_stages = false;
  const PlanResult even_only = run_plan(plan, {});
  ASSERT_EQ(even_only.screened, 1);
  const Scenario megatron = candidate_scenario(plan, even_only.candidates.at(0).candidate);
  EXPECT_TRUE(megatron.parallelism.stage_layers.empty());
  EXPECT_EQ(layers_per_stage(megatron.model, megatron.parallelism),
            uneven_stage_layers(126, 16, 1));
  // 125 layers split neither way.
  plan.model.num_layers = 125;
  const PlanResult none = run_plan(plan, {});
  EXPECT_EQ(none.screened, 0);
  EXPECT_EQ(none.pruned.of(PruneReason::kLayerDivisibility), 1);
}

// A candidate is tried when an even split could bring it within the window, not only when it is
// there already: on a narrow model with a 128,000-word head, PP16 screens at under half PP2's
// throughput, but its last stage does 2.3x the mean stage's work.
TEST(UnevenStagesTest, BalancingTriesWhatAnEvenSplitCouldBringIntoTheWindow) {
  PlanSpec plan = llama3_split_plan();
  plan.model.num_layers = 64;
  plan.model.vocab_size = 128000;
  plan.space.pipeline = {2, 16};
  plan.space.balance_stages = false;
  const PlanResult unbalanced = run_plan(plan, {});
  std::vector<ScreenedCandidate> pool = unbalanced.candidates;
  std::stable_sort(pool.begin(), pool.end(), faster);
  ASSERT_EQ(pool.size(), 2U);
  ASSERT_EQ(pool[1].candidate.parallelism.pipeline, 16);
  const Evaluation before = pool[1].analytic;
  ASSERT_LT(before.tokens_per_s * kBalanceWindow, pool[0].analytic.tokens_per_s);
  ASSERT_GT(before.tokens_per_s * before.busiest_over_mean_busy * kBalanceWindow,
            pool[0].analytic.tokens_per_s);
  plan.space.balance_stages = true;
  const ScreenWork work = enumerate_work(plan);
  std::vector<ScreenedCandidate> tried = pool;
  EXPECT_EQ(balance_pool_splits(plan, work.profiles, tried), 2U);
  const auto pp16 = std::find_if(tried.begin(), tried.end(), [](const ScreenedCandidate& c) {
    return c.candidate.parallelism.pipeline == 16;
  });
  ASSERT_NE(pp16, tried.end());
  EXPECT_FALSE(pp16->candidate.parallelism.stage_layers.empty());
  EXPECT_LT(pp16->analytic.iteration_time_s, before.iteration_time_s);
  EXPECT_EQ(pp16->analytic.busiest_over_mean_busy, 1.0);
  // Already even (a busiest stage at the mean), it would stay out of the window as it is.
  pool[1].analytic.busiest_over_mean_busy = 1.0;
  EXPECT_EQ(balance_pool_splits(plan, work.profiles, pool), 1U);
  EXPECT_TRUE(pool[1].candidate.parallelism.stage_layers.empty());
}

// With balance_stages (the default) the leading pipelined candidates get the split that evens
// their stages' work: on this narrow model (hidden 1,024) the 51,200-word head weighs about
// three layers, so the last stage gives layers away. The screen's time and the scenario follow.
TEST(UnevenStagesTest, PlannerBalancesTheSplit) {
  PlanSpec plan = llama3_split_plan();
  plan.space.balance_stages = false;
  const PlanResult plain = run_plan(plan, {});
  plan.space.balance_stages = true;
  const PlanResult balanced = run_plan(plan, {});
  ASSERT_EQ(balanced.candidates.size(), 1U);
  EXPECT_EQ(balanced.balanced_splits, 1U);
  const ScreenedCandidate& c = balanced.candidates[0];
  const std::vector<int>& split = c.candidate.parallelism.stage_layers;
  EXPECT_NE(split, uneven_stage_layers(126, 16, 1));
  EXPECT_LT(split.back(), 7);
  EXPECT_EQ(std::accumulate(split.begin(), split.end(), 0), 126);
  EXPECT_LT(c.analytic.iteration_time_s, plain.candidates.at(0).analytic.iteration_time_s);
  // The candidate's scenario runs that split, at the time the screen reports.
  const Scenario sc = candidate_scenario(plan, c.candidate);
  EXPECT_EQ(sc.parallelism.stage_layers, split);
  EXPECT_DOUBLE_EQ(estimate::estimate_iteration(sc, io::resolve_profile(sc)).iteration_time_s,
                   c.analytic.iteration_time_s);
}

// Llama 3 70B on 8 x p5 with TP4 PP4 1F1B and micro-batch 2 (the shipped scenario's model):
// the even split needs 83.1 GiB on stage 0, which holds four micro-batches' activations. With
// balance_stages the screen moves layers off it until it fits and screens the layout so; without,
// it is pruned for memory.
TEST(UnevenStagesTest, PlannerFitsALayoutByItsSplit) {
  PlanSpec plan = hand_plan();
  const Scenario llama =
      io::load_scenario(std::string(CAPSIM_SOURCE_DIR) + "/scenarios/llama3-70b-p5/scenario.json");
  plan.model = llama.model;
  plan.instances = {{"p5.48xlarge", {{Pricing::kOnDemand, 55.04}}}};
  plan.node_counts = {8};
  plan.global_batch_sizes = {128};
  plan.space.tensor = {4};
  plan.space.pipeline = {4};
  plan.space.context = {2};
  plan.space.micro_batch_size = {2};
  plan.space.zero_stage = {1};
  plan.space.sequence_parallel = {true};
  plan.space.balance_stages = false;
  const PlanResult pruned = run_plan(plan, {});
  EXPECT_EQ(pruned.screened, 0);
  EXPECT_EQ(pruned.pruned.of(PruneReason::kMemory), 1);
  plan.space.balance_stages = true;
  const PlanResult fitted = run_plan(plan, {});
  ASSERT_EQ(fitted.screened, 1);
  EXPECT_EQ(fitted.fitted_splits, 1);
  EXPECT_EQ(fitted.pruned.of(PruneReason::kMemory), 0);
  const ScreenedCandidate& c = fitted.candidates.at(0);
  const std::vector<int>& split = c.candidate.parallelism.stage_layers;
  ASSERT_EQ(split.size(), 4U);
  EXPECT_LT(split.front(), 20);
  EXPECT_LE(c.analytic.peak_memory_bytes, c.analytic.capacity_bytes);
  const Scenario sc = candidate_scenario(plan, c.candidate);
  EXPECT_TRUE(estimate::estimate_iteration(sc, io::resolve_profile(sc)).memory.fits);
}

// A mixture-of-experts plan searches its expert degrees: TP 2 x DP 4 on one node of 8 GPUs
// folds EP x ETP (2, the tensor degree) into 8 and splits the 8 experts, so EP 1, 2 and 4 run
// while 3 (experts) and 8 (16 expert ranks) count as expert_divisibility; only such a plan's
// report lists that reason.
TEST(PlannerTest, ExpertDegreesAreSearchedAndPruned) {
  PlanSpec plan = hand_plan();
  plan.model.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 2048};
  plan.space.tensor = {2};
  plan.space.pipeline = {1};
  plan.space.micro_batch_size = {1};
  plan.space.zero_stage = {0};
  plan.space.sequence_parallel = {true};
  plan.space.expert = {1, 2, 3, 4, 8};
  plan.confirm_top_k = 3;
  const PlanResult r = run_plan(plan, {});
  EXPECT_EQ(r.enumerated, 5);
  EXPECT_EQ(r.screened, 3);
  EXPECT_EQ(r.pruned.of(PruneReason::kExpertDivisibility), 2);
  std::set<int> degrees;
  for (const ScreenedCandidate& c : r.candidates) {
    degrees.insert(c.candidate.parallelism.expert);
    const Scenario sc = candidate_scenario(plan, c.candidate);
    EXPECT_EQ(sc.parallelism.expert, c.candidate.parallelism.expert);
    EXPECT_EQ(sc.name.find("-ep") != std::string::npos, c.candidate.parallelism.expert > 1);
  }
  EXPECT_EQ(degrees, (std::set<int>{1, 2, 4}));
  EXPECT_EQ(plan_to_json(plan, r, 0, false).at("pruned").at("expert_divisibility"), 2);
  const PlanSpec dense = hand_plan();
  EXPECT_FALSE(plan_to_json(dense, run_plan(dense, {}), 0, false)
                   .at("pruned")
                   .contains("expert_divisibility"));
}

// A plan's stack gives every mixture-of-experts candidate its dispatcher, and the all-to-all
// overlap to those that can run it (not with full recompute).
TEST(PlannerTest, StackExpertExchangeReachesTheCandidatesThatRunIt) {
  for (const Recompute recompute : {Recompute::kNone, Recompute::kFull}) {
    PlanSpec plan = hand_plan();
    plan.model.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 2048};
    plan.space.tensor = {2};
    plan.space.pipeline = {1};
    plan.space.sequence_parallel = {true};
    plan.space.recompute = {recompute};
    plan.space.expert = {4};
    plan.stack.token_dispatcher = TokenDispatcher::kDeepEp;
    plan.stack.moe_a2a_overlap = true;
    const PlanResult r = run_plan(plan, {});
    ASSERT_FALSE(r.candidates.empty());
    for (const ScreenedCandidate& c : r.candidates) {
      const Parallelism& p = c.candidate.parallelism;
      EXPECT_EQ(p.token_dispatcher, TokenDispatcher::kDeepEp);  // TP 2: expert ranks to exchange
      EXPECT_EQ(p.moe_a2a_overlap, recompute != Recompute::kFull);
    }
  }
}

// A plan's stack gives its recompute modules to the selective-recompute candidates, whose
// winning scenario writes them back.
TEST(PlannerTest, StackRecomputeModulesReachTheSelectiveCandidates) {
  PlanSpec plan = hand_plan();
  plan.model.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 2048};
  plan.space.tensor = {2};
  plan.space.pipeline = {1};
  plan.space.sequence_parallel = {true};
  plan.space.recompute = {Recompute::kSelective};
  plan.space.expert = {4};
  plan.stack.recompute_modules = kRecomputeLayernorm | kRecomputeMoeActivation;
  const PlanResult r = run_plan(plan, {});
  ASSERT_FALSE(r.candidates.empty());
  for (const ScreenedCandidate& c : r.candidates) {
    EXPECT_EQ(c.candidate.parallelism.recompute_modules, plan.stack.recompute_modules);
    const nlohmann::json written = io::scenario_to_json(candidate_scenario(plan, c.candidate));
    EXPECT_EQ(written.at("parallelism").at("recompute_modules"),
              (nlohmann::json{"layernorm", "moe_act"}));
  }
}

// An expert tensor degree above a node's GPUs is pruned as tensor above the node would be.
TEST(CheckStructureTest, ExpertTensorBeyondTheNode) {
  ModelSpec m = small_model();
  m.moe = MoeSpec{.num_experts = 8, .top_k = 2, .ffn_hidden_size = 2048};
  const ClusterSpec c = cluster_for_instance(*builtin_catalog().find_instance("p4de.24xlarge"), 2);
  Parallelism p;
  p.tensor = 1;
  p.data = 16;
  p.global_batch_size = 16;
  p.expert_tensor = 16;
  EXPECT_EQ(check_structure(m, c, p), PruneReason::kTensorExceedsNode);
  p.expert_tensor = 2;
  p.expert = 8;
  EXPECT_EQ(check_structure(m, c, p), std::nullopt);
  p.expert = 3;
  EXPECT_EQ(check_structure(m, c, p), PruneReason::kExpertDivisibility);
}

// A stack that shards data parallelism in pipelines (torchtitan) keeps the ZeRO-2 candidate with
// PP that PruningCountsByHand prunes.
TEST(PlannerTest, AStackShardingWithPipelinesKeepsZeroTwoWithPipeline) {
  PlanSpec plan = hand_plan();
  plan.stack_shards_with_pipeline = true;
  const PlanResult r = run_plan(plan, {});
  EXPECT_EQ(r.enumerated, 24);
  EXPECT_EQ(r.screened, 4);
  EXPECT_EQ(r.pruned.of(PruneReason::kZeroWithPipeline), 0);
}

// The plan says whose kernel speed its iteration times assume: a named stack's own where its
// published runs fitted a factor on the instance's family (Megatron-DeepSpeed on A100), the
// shipped profiles' elsewhere.
TEST(PlannerTest, TheKernelSpeedNoteNamesTheStackWhoseFactorItUses) {
  const auto kernel_note = [](const PlanResult& r) {
    for (const std::string& note : r.notes) {
      if (note.starts_with("iteration times"))
        return note;
    }
    return std::string();
  };
  PlanSpec plan = hand_plan();
  EXPECT_TRUE(kernel_note(run_plan(plan, {}))
                  .starts_with("iteration times assume kernels as fast as in published 2022-2025 "
                               "Megatron-LM/NeMo runs"));

  plan.named_stack = find_training_stack("megatron-deepspeed");
  const std::string a100 = kernel_note(run_plan(plan, {}));
  EXPECT_TRUE(
      a100.starts_with("iteration times on ampere GPUs assume kernels as fast as in "
                       "published megatron-deepspeed runs on them"))
      << a100;
  EXPECT_EQ(a100.find("on other GPUs"), std::string::npos) << a100;

  plan.instances.push_back({"p5.48xlarge", {{Pricing::kOnDemand, 98.0}}});
  const std::string mixed = kernel_note(run_plan(plan, {}));
  EXPECT_NE(mixed.find("; on other GPUs kernels as fast as in published 2022-2025"),
            std::string::npos)
      << mixed;
}

TEST(PlannerTest, PruningCountsByHand) {
  // tensor 16 > 8 GPUs per node: 3 pipelines x 2 micro x 2 ZeRO = 12 candidates.
  // tensor 2, pipeline 5: 10 does not divide 8 GPUs: 4.
  // tensor 2, pipeline 1 (data 4): micro 3 -> 64 % 12: 2 batch; micro 1: 2 screened.
  // tensor 2, pipeline 2 (data 2): micro 3 -> 64 % 6: 2 batch; micro 1: ZeRO-2 with PP: 1;
  // ZeRO-0: 1 screened.
  const PlanResult r = run_plan(hand_plan(), {});
  EXPECT_EQ(r.enumerated, 24);
  EXPECT_EQ(r.screened, 3);
  EXPECT_EQ(r.pruned.of(PruneReason::kTensorExceedsNode), 12);
  EXPECT_EQ(r.pruned.of(PruneReason::kGpuCount), 4);
  EXPECT_EQ(r.pruned.of(PruneReason::kBatchDivisibility), 4);
  EXPECT_EQ(r.pruned.of(PruneReason::kZeroWithPipeline), 1);
  EXPECT_EQ(r.pruned.of(PruneReason::kMemory), 0);
  EXPECT_EQ(r.pruned.of(PruneReason::kBelowTarget), 0);
  EXPECT_EQ(r.pruned.of(PruneReason::kInvalidLayout), 0);
  long long total = r.screened;
  for (auto n : r.pruned.counts)
    total += n;
  EXPECT_EQ(total, r.enumerated);  // every candidate is screened or pruned exactly once
}

// EC2 capacity blocks are bought whole: 1-day steps to 14 days, then 7-day steps.
TEST(PricingTest, CapacityBlocksAreBilledWhole) {
  const double day = 86400.0;
  EXPECT_DOUBLE_EQ(billed_hours(Pricing::kCapacityBlock, 2.66 * day), 72.0);
  EXPECT_DOUBLE_EQ(billed_hours(Pricing::kCapacityBlock, 3.0 * day), 72.0);
  EXPECT_DOUBLE_EQ(billed_hours(Pricing::kCapacityBlock, 14.5 * day), 21.0 * 24);
  EXPECT_DOUBLE_EQ(billed_hours(Pricing::kOnDemand, 2.66 * day), 2.66 * 24);
  EXPECT_DOUBLE_EQ(billed_hours(Pricing::kReserved, 2.66 * day), 2.66 * 24);
}

// A search restricted to sequence parallelism, or to the interleaved schedule, still covers the
// layouts where those are no choice: TP 1 runs without SP, a single stage as 1F1B.
TEST(PlannerTest, RestrictedListsKeepTheLayoutsWhereTheyAreNoChoice) {
  PlanSpec plan = hand_plan();
  plan.space.tensor = {1, 2};
  plan.space.pipeline = {1};
  plan.space.micro_batch_size = {1};
  plan.space.zero_stage = {0};
  plan.space.sequence_parallel = {true};
  const PlanResult sp = run_plan(plan, {});
  bool tp1 = false;
  for (const auto& c : sp.candidates) {
    if (c.candidate.parallelism.tensor == 1) {
      tp1 = true;
      EXPECT_FALSE(c.candidate.parallelism.sequence_parallel);
    }
  }
  EXPECT_TRUE(tp1);
  plan.space.sequence_parallel = {false};
  plan.space.tensor = {2};
  plan.space.pipeline = {1, 2};
  plan.space.schedule = {Schedule::kInterleaved};
  plan.space.virtual_pipeline_stages = {2};
  const PlanResult interleaved = run_plan(plan, {});
  bool one_stage = false;
  for (const auto& c : interleaved.candidates) {
    if (c.candidate.parallelism.pipeline == 1) {
      one_stage = true;
      EXPECT_EQ(c.candidate.parallelism.schedule, Schedule::kOneFOneB);
    }
  }
  EXPECT_TRUE(one_stage);
}

// The default plan's 30B model on 4 p4d nodes (32 A100-40GB), 1F1B only: a space small enough
// to count by hand which layouts fit.
PlanSpec thirty_b_on_four_p4d() {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.instances = {{"p4d.24xlarge", {{Pricing::kOnDemand, 21.96}}}};
  plan.node_counts = {4};
  plan.space.pipeline = {1, 2, 4, 8};
  plan.space.schedule = {Schedule::kOneFOneB};
  return plan;
}

struct FitCounts {
  long long fits = 0;
  long long no_fit = 0;
  long long refits = 0;  // of the fits: pipelined layouts that fit by their split only
};

// Counts, apart from the planner's screen, which of thirty_b_on_four_p4d()'s layouts fit with
// the memory model and leave the plan's headroom (by their split or, with balance_stages, by
// one that split_that_fits finds), each starting from the plan's stack settings.
FitCounts count_fits(const PlanSpec& plan) {
  FitCounts counts;
  const ClusterSpec c = cluster_for_instance(*builtin_catalog().find_instance("p4d.24xlarge"), 4);
  const GpuSpec& gpu = c.gpu;
  for (int t : plan.space.tensor) {
    for (int pp : plan.space.pipeline) {
      for (int mb : plan.space.micro_batch_size) {
        for (Recompute rc : plan.space.recompute) {
          for (int z : plan.space.zero_stage) {
            for (bool sp : plan.space.sequence_parallel) {
              Parallelism p = plan.stack;
              p.tensor = t;
              p.pipeline = pp;
              p.data = 32 / (t * pp);
              p.micro_batch_size = mb;
              p.global_batch_size = 2048;
              p.recompute = rc;
              p.zero_stage = z;
              p.sequence_parallel = sp;
              if ((sp && t == 1) || check_structure(plan.model, c, p))
                continue;
              const MemoryEstimate m = estimate_memory(plan.model, p, gpu);
              const double limit = m.capacity_bytes - plan.memory_headroom_bytes;
              const bool fits = m.fits && m.peak_bytes <= limit;
              // With balance_stages a pipelined layout may fit by its split instead.
              const bool refits =
                  !fits && plan.space.balance_stages &&
                  estimate::split_that_fits(plan.model, p, gpu, limit, &m).has_value();
              (fits || refits ? counts.fits : counts.no_fit) += 1;
              counts.refits += refits ? 1 : 0;
            }
          }
        }
      }
    }
  }
  return counts;
}

TEST(PlannerTest, MemoryPruningMatchesTheMemoryModel) {
  const PlanSpec plan = thirty_b_on_four_p4d();
  const PlanResult r = run_plan(plan, {});
  const FitCounts counts = count_fits(plan);
  EXPECT_EQ(r.pruned.of(PruneReason::kMemory), counts.no_fit);
  EXPECT_EQ(r.screened, counts.fits);
  EXPECT_EQ(r.fitted_splits, counts.refits);
  EXPECT_GT(counts.no_fit, 0);
  EXPECT_GT(counts.fits, 0);
  EXPECT_GT(counts.refits, 0);
}

// A headroom prunes exactly the layouts whose peak comes within it of the HBM, and every
// candidate left keeps it free.
TEST(PlannerTest, MemoryHeadroomPrunesTheLayoutsThatDoNotLeaveIt) {
  PlanSpec plan = thirty_b_on_four_p4d();
  const long long without = run_plan(plan, {}).pruned.of(PruneReason::kMemory);
  plan.memory_headroom_bytes = 4.0 * kGiB;
  const PlanResult r = run_plan(plan, {});
  const FitCounts counts = count_fits(plan);
  EXPECT_EQ(r.pruned.of(PruneReason::kMemory), counts.no_fit);
  EXPECT_EQ(r.screened, counts.fits);
  EXPECT_GT(counts.no_fit, without);
  ASSERT_FALSE(r.candidates.empty());
  for (const ScreenedCandidate& c : r.candidates) {
    EXPECT_LE(c.analytic.peak_memory_bytes, c.analytic.capacity_bytes - plan.memory_headroom_bytes);
  }
}

// The plan's stack (here Apex distributed Adam with dtype=bf16 over bf16 weights: bf16
// moments, no master copy) reaches every candidate: the memory model prunes exactly the
// layouts that do not fit with it, fewer than with the default fp32 optimizer state.
TEST(PlannerTest, StackSettingsReachEveryCandidate) {
  PlanSpec plan = thirty_b_on_four_p4d();
  const PlanResult defaults = run_plan(plan, {});
  plan.stack.optimizer_state_precision = Precision::kBf16;
  plan.stack.master_weights = MasterWeights::kNone;
  const PlanResult r = run_plan(plan, {});
  const FitCounts counts = count_fits(plan);
  EXPECT_EQ(r.pruned.of(PruneReason::kMemory), counts.no_fit);
  EXPECT_LT(counts.no_fit, defaults.pruned.of(PruneReason::kMemory));
  ASSERT_FALSE(r.candidates.empty());
  for (const ScreenedCandidate& sc : r.candidates) {
    EXPECT_EQ(sc.candidate.parallelism.optimizer_state_precision, Precision::kBf16);
    EXPECT_EQ(sc.candidate.parallelism.master_weights, MasterWeights::kNone);
  }
}

// The overlap flags apply where they exist: ZeRO-3 always overlaps its reduce-scatters, and
// only ZeRO-1/2 have a parameter gather to overlap (the others keep the scenario default, so
// every candidate's scenario reads back).
TEST(PlannerTest, StackOverlapFlagsApplyWhereTheyExist) {
  PlanSpec plan = hand_plan();
  plan.space.zero_stage = {0, 1, 2, 3};
  plan.stack.overlap_grad_reduce = false;
  plan.stack.overlap_param_gather = false;
  plan.confirm_top_k = 1000;  // keep every screened layout
  const PlanResult r = run_plan(plan, {});
  std::set<int> stages;
  for (const ScreenedCandidate& sc : r.candidates) {
    const Parallelism& p = sc.candidate.parallelism;
    stages.insert(p.zero_stage);
    EXPECT_EQ(p.overlap_grad_reduce, p.zero_stage == 3) << p.zero_stage;
    EXPECT_EQ(p.overlap_param_gather, p.zero_stage == 3) << p.zero_stage;
  }
  EXPECT_EQ(stages, (std::set<int>{0, 1, 2, 3}));
}

// fp8_params reaches the fp8 candidates only: bf16 candidates have no fp8 parameters, and the
// scenario rules reject fp8_params without fp8.
TEST(PlannerTest, StackFp8ParamsReachOnlyTheFp8Candidates) {
  PlanSpec plan = hand_plan();
  plan.instances = {{"p5.48xlarge", {{Pricing::kOnDemand, 55.0}}}};
  plan.space.precision = {Precision::kBf16, Precision::kFp8};
  plan.confirm_top_k = 1000;  // keep every screened layout
  plan.stack.fp8_params = true;
  const PlanResult r = run_plan(plan, {});
  std::set<Precision> precisions;
  for (const ScreenedCandidate& sc : r.candidates) {
    const Parallelism& p = sc.candidate.parallelism;
    precisions.insert(p.precision);
    EXPECT_EQ(p.fp8_params, p.precision == Precision::kFp8);
  }
  EXPECT_EQ(precisions, (std::set<Precision>{Precision::kBf16, Precision::kFp8}));
}

// tp_comm_overlap reaches the sequence-parallel candidates only (the scenario rules reject it
// without SP), and it makes them faster.
TEST(PlannerTest, StackTpCommOverlapReachesOnlyTheSequenceParallelCandidates) {
  PlanSpec plan = hand_plan();
  plan.space.sequence_parallel = {false, true};
  plan.confirm_top_k = 1000;  // keep every screened layout
  const PlanResult serial = run_plan(plan, {});
  plan.stack.tp_comm_overlap = true;
  const PlanResult overlapped = run_plan(plan, {});
  ASSERT_EQ(serial.candidates.size(), overlapped.candidates.size());
  std::set<bool> seen;
  for (size_t i = 0; i < overlapped.candidates.size(); ++i) {
    const Parallelism& p = overlapped.candidates[i].candidate.parallelism;
    seen.insert(p.sequence_parallel);
    EXPECT_EQ(p.tp_comm_overlap, p.sequence_parallel);
  }
  EXPECT_EQ(seen, (std::set<bool>{false, true}));
  double serial_best = 0.0;
  double overlapped_best = 0.0;
  for (size_t i = 0; i < overlapped.candidates.size(); ++i) {
    if (overlapped.candidates[i].candidate.parallelism.sequence_parallel) {
      overlapped_best = std::max(overlapped_best, overlapped.candidates[i].analytic.tokens_per_s);
    }
    if (serial.candidates[i].candidate.parallelism.sequence_parallel)
      serial_best = std::max(serial_best, serial.candidates[i].analytic.tokens_per_s);
  }
  EXPECT_GT(overlapped_best, serial_best);
}

// MFU is of each candidate's own precision's peak, so the table names the precision of every row:
// without it an fp8 row's MFU reads as half a bf16 row's.
TEST(PlannerTest, TableNamesEachRowsPrecision) {
  PlanSpec plan = hand_plan();
  plan.instances = {{"p5.48xlarge", {{Pricing::kOnDemand, 55.0}}}};
  plan.space.precision = {Precision::kBf16, Precision::kFp8};
  plan.confirm_top_k = 1000;  // keep every screened layout
  const PlanResult r = run_plan(plan, {});
  const std::string table = plan_table(plan, r, 0);
  EXPECT_NE(table.find(" prec "), std::string::npos);
  std::set<std::string> named;
  for (const char* precision : {"bf16", "fp8"}) {
    if (table.find(std::string(" ") + precision + " ") != std::string::npos)
      named.insert(precision);
  }
  EXPECT_EQ(named, (std::set<std::string>{"bf16", "fp8"}));
}

RankedEntry entry(double cost, double days) {
  RankedEntry e;
  e.cost_usd = cost;
  e.wall_time_s = days * 86400.0;
  return e;
}

TEST(ParetoTest, KeepsOnlyNonDominatedSortedByTime) {
  const std::vector<RankedEntry> entries{entry(10, 5), entry(8, 6),  entry(9, 7),  entry(8, 6),
                                         entry(20, 1), entry(15, 3), entry(30, 1), entry(15, 4)};
  EXPECT_EQ(pareto_front(entries), (std::vector<size_t>{4, 5, 0, 1}));
  EXPECT_TRUE(pareto_front({}).empty());
}

TEST(ParetoTest, FrontOfARealPlanIsNonDominated) {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.node_counts = {16, 32, 64, 128};
  plan.space.pipeline = {1, 2, 4, 8};
  const PlanResult r = run_plan(plan, {});
  ASSERT_FALSE(r.pareto.empty());
  for (size_t i = 0; i < r.pareto.size(); ++i) {
    if (i > 0) {
      EXPECT_GT(r.pareto[i].wall_time_s, r.pareto[i - 1].wall_time_s);
      EXPECT_LT(r.pareto[i].cost_usd, r.pareto[i - 1].cost_usd);
    }
    for (const auto& other : r.ranked) {
      if (!other.meets_target)
        continue;
      const bool dominates =
          other.cost_usd <= r.pareto[i].cost_usd && other.wall_time_s <= r.pareto[i].wall_time_s &&
          (other.cost_usd < r.pareto[i].cost_usd || other.wall_time_s < r.pareto[i].wall_time_s);
      EXPECT_FALSE(dominates);
    }
  }
}

TEST(FailureModelTest, YoungDalyInterval) {
  // sqrt(2 x 60 s x 3600 s) = 657.3 s (Young 1974).
  EXPECT_NEAR(young_daly_interval_s(60.0, 3600.0), 657.267069, 1e-6);
}

TEST(FailureModelTest, ExpectedWallTimeFollowsDaly) {
  FailureModel f;
  f.gpu_mtbf_s = 1024 * 50000.0 * 3600.0 / 1024.0;  // 50,000 h per GPU
  f.checkpoint_save_s = 60.0;
  f.checkpoint_restore_s = 300.0;
  const int gpus = 1024;
  const double solve = 30 * 86400.0;
  const FailureOverhead o = failure_overhead(f, gpus, solve);
  const double m = 50000.0 * 3600.0 / gpus;
  EXPECT_NEAR(o.cluster_mtbf_s, m, 1e-6);
  const double tau = std::sqrt(2.0 * 60.0 * m);
  EXPECT_NEAR(o.checkpoint_interval_s, tau, 1e-9);
  const double daly = m * std::exp(300.0 / m) * (std::exp((tau + 60.0) / m) - 1.0) * solve / tau;
  EXPECT_NEAR(o.expected_wall_s, daly, 1e-6 * daly);
  // First order: waste ~ delta/tau + tau/(2M) + R/M = 2·sqrt(δ/2M) + R/M.
  const double first_order = 2.0 * std::sqrt(60.0 / (2.0 * m)) + 300.0 / m;
  EXPECT_NEAR(o.expected_wall_s / solve - 1.0, first_order, 0.1 * first_order);
  // More GPUs fail more often: more overhead.
  EXPECT_GT(failure_overhead(f, 4 * gpus, solve).overhead_fraction, o.overhead_fraction);
  // Rare failures: overhead vanishes.
  FailureModel rare = f;
  rare.gpu_mtbf_s *= 1e6;
  EXPECT_LT(failure_overhead(rare, gpus, solve).overhead_fraction, 1e-3);
}

TEST(FailureModelTest, PlanChargesFailureOverhead) {
  PlanSpec plan = hand_plan();
  const PlanResult base = run_plan(plan, {});
  plan.failure = daly_failure_model(1000.0 * 3600.0, 120.0, 600.0);
  const PlanResult with = run_plan(plan, {});
  ASSERT_FALSE(base.ranked.empty());
  ASSERT_EQ(base.ranked.size(), with.ranked.size());
  EXPECT_GT(with.ranked[0].wall_time_s, base.ranked[0].wall_time_s);
  EXPECT_GT(with.ranked[0].cost_usd, base.ranked[0].cost_usd);
  EXPECT_GT(with.ranked[0].checkpoint_interval_s, 0.0);
  EXPECT_DOUBLE_EQ(with.ranked[0].time_to_train_s, base.ranked[0].time_to_train_s);
}

// A cluster that fails faster than it can restart never finishes: Daly's factor overflows a double
// (e^{R/M} with R/M in the millions). Its candidates are pruned, not ranked with infinite costs.
TEST(FailureModelTest, ClustersThatFailFasterThanTheyRestartArePruned) {
  PlanSpec plan = hand_plan();
  plan.failure = daly_failure_model(1.0, 120.0, 600.0);  // every GPU fails once a second
  EXPECT_FALSE(failure_slowdown(*plan.failure, 8) <= kMaxFailureSlowdown);
  const PlanResult r = run_plan(plan, {});
  EXPECT_TRUE(r.ranked.empty());
  EXPECT_GT(r.pruned.of(PruneReason::kFailures), 0);
  EXPECT_EQ(r.screened, 0);
  // A realistic MTBF prunes nothing for failures.
  plan.failure = daly_failure_model(50000.0 * 3600.0, 120.0, 600.0);
  const PlanResult ok = run_plan(plan, {});
  EXPECT_FALSE(ok.ranked.empty());
  EXPECT_EQ(ok.pruned.of(PruneReason::kFailures), 0);
}

using testing::skewed_confirmer;

// A stand-in for the event engine that agrees with the screen except on layouts with
// `slow_virtual_stages` virtual stages, which it runs `slowdown` times slower (as contention
// would slow one mesh).
ConfirmFn confirmer_slowing_virtual_stages(int slow_virtual_stages, double slowdown) {
  return testing::slowing_confirmer([=](const Scenario& sc) {
    return sc.parallelism.virtual_pipeline_stages == slow_virtual_stages ? slowdown : 1.0;
  });
}

// One group, 64 x p5, whose fastest layouts on the screen are pipelined (ZeRO 0-1), confirming
// `k` per group.
PlanSpec pipelined_p5_plan(int k) {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.instances = {{"p5.48xlarge", {{Pricing::kOnDemand, 55.04}}}};
  plan.node_counts = {64};
  plan.space.zero_stage = {0, 1};  // forces pipelines for a 30B model
  plan.space.pipeline = {1, 2, 4};
  plan.confirm_top_k = k;
  return plan;
}

// An event run that fails (here the first batch's first, the screen's favourite) leaves its
// candidate on the screen's numbers, and the report says which and why: the header's count, the
// row's engine, a list, the winner's line, and the JSON.
TEST(PlannerTest, FailedConfirmationsAreReported) {
  const PlanSpec plan = pipelined_p5_plan(4);
  const ConfirmFn screen_numbers = skewed_confirmer(0.0);
  auto failing = std::make_shared<std::string>();
  PlanOptions opts;
  opts.confirm = [&](const std::vector<Scenario>& scenarios, const ProgressFn& p) {
    ConfirmBatch batch = screen_numbers(scenarios, p);
    if (failing->empty())
      *failing = scenarios.front().name;
    for (size_t i = 0; i < scenarios.size(); ++i) {
      if (scenarios[i].name != *failing)
        continue;
      batch.outcomes[i].ok = false;
      batch.outcomes[i].error = "killed by signal 9 (Killed)";
    }
    return batch;
  };
  const PlanResult r = run_plan(plan, opts);
  ASSERT_EQ(r.failed_confirmations, 1);
  const ScreenedCandidate& best = r.candidates[r.ranked[0].candidate];
  ASSERT_EQ(candidate_scenario(plan, best.candidate).name, *failing);
  EXPECT_FALSE(best.confirmed);
  EXPECT_EQ(best.confirm_error, "killed by signal 9 (Killed)");

  const std::string table = plan_table(plan, r, 0);
  EXPECT_NE(table.find(io::printf_string("confirmed %d, 1 failed (event engine: yes)",
                                         r.confirmations - 1)),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("analytic (event run failed)\n"), std::string::npos);
  EXPECT_NE(table.find("failed event confirmations (these candidates rank on the analytic "
                       "screen's numbers):\n  " +
                       *failing + ": killed by signal 9 (Killed)\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("(not confirmed: its event run failed)\n"), std::string::npos);

  const nlohmann::json j = plan_to_json(plan, r, 0, false);
  EXPECT_EQ(j.at("search").at("failed_confirmations"), 1);
  const nlohmann::json failure = {{"scenario", *failing}, {"error", "killed by signal 9 (Killed)"}};
  EXPECT_EQ(j.at("confirmation_failures"), nlohmann::json::array({failure}));
  EXPECT_EQ(j.at("best").at("engine"), "analytic");
  EXPECT_EQ(j.at("best").at("confirm_error"), "killed by signal 9 (Killed)");

  // Without failures none of it appears.
  opts.confirm = screen_numbers;
  const PlanResult fine = run_plan(plan, opts);
  EXPECT_EQ(fine.failed_confirmations, 0);
  EXPECT_EQ(plan_table(plan, fine, 0).find("failed"), std::string::npos);
  const nlohmann::json fine_json = plan_to_json(plan, fine, 0, false);
  EXPECT_FALSE(fine_json.contains("confirmation_failures"));
  EXPECT_FALSE(fine_json.at("search").contains("failed_confirmations"));
}

TEST(PlannerTest, RanksOnConfirmedNumbers) {
  const PlanSpec plan = pipelined_p5_plan(8);
  PlanOptions opts;
  opts.confirm = skewed_confirmer(0.5);
  const PlanResult r = run_plan(plan, opts);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_TRUE(r.event_available);
  EXPECT_EQ(r.confirmations, static_cast<int>(r.candidates.size()));
  for (size_t i = 1; i < r.ranked.size(); ++i) {
    EXPECT_LE(r.ranked[i - 1].cost_usd, r.ranked[i].cost_usd);
  }
  const ScreenedCandidate& best = r.candidates[r.ranked[0].candidate];
  EXPECT_TRUE(best.confirmed);
  EXPECT_EQ(best.final_evaluation().engine, "event");
  double fastest_event = 0.0;
  for (const auto& c : r.candidates)
    fastest_event = std::max(fastest_event, c.event.tokens_per_s);
  EXPECT_DOUBLE_EQ(best.event.tokens_per_s, fastest_event);
  // The screen alone favours a pipelined layout that the skewed "event" numbers penalise.
  double fastest_screen = 0.0;
  size_t screen_best = 0;
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    if (r.candidates[i].analytic.tokens_per_s > fastest_screen) {
      fastest_screen = r.candidates[i].analytic.tokens_per_s;
      screen_best = i;
    }
  }
  EXPECT_EQ(r.screen_winner, screen_best);
  EXPECT_EQ(r.screen_winner_changed, screen_best != r.ranked[0].candidate);
}

// A group whose first choice the event engine runs slower than the screen ranked the group's
// next candidates gets those confirmed too (a second batch), and one of them wins; when the
// event engine agrees with the screen nothing more is confirmed.
TEST(PlannerTest, ConfirmsMoreWhereTheEventEngineRanTheFirstChoiceSlower) {
  const PlanSpec plan = pipelined_p5_plan(1);
  PlanOptions opts;
  opts.confirm = confirmer_slowing_virtual_stages(0, 1.0);
  const PlanResult agreed = run_plan(plan, opts);
  ASSERT_EQ(agreed.candidates.size(), 1u);
  EXPECT_EQ(agreed.second_batch, 0u);
  const Parallelism favourite = agreed.candidates[0].candidate.parallelism;
  ASSERT_GT(favourite.virtual_pipeline_stages, 1);

  // The favourite's mesh 10% slower: the next mesh (another virtual-stage count), within 10% on
  // the screen, is confirmed and wins; its own mesh is not confirmed again.
  opts.confirm = confirmer_slowing_virtual_stages(favourite.virtual_pipeline_stages, 1.1);
  const PlanResult r = run_plan(plan, opts);
  EXPECT_EQ(r.second_batch, 1u);  // at most K more per group
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_EQ(r.confirmations, 2);
  EXPECT_NE(r.candidates[1].candidate.parallelism.virtual_pipeline_stages,
            favourite.virtual_pipeline_stages);
  EXPECT_EQ(r.ranked[0].candidate, 1u);
  EXPECT_TRUE(r.screen_winner_changed);
  EXPECT_EQ(plan_to_json(plan, r, 5, false).at("search").at("second_batch_confirmations"), 1);
  EXPECT_NE(plan_table(plan, r, 5).find("1 confirmed in a second batch"), std::string::npos);
  EXPECT_EQ(plan_table(plan, agreed, 5).find("second batch"), std::string::npos);
  // The 10% disagreement is listed, with what it means.
  EXPECT_NE(plan_table(plan, r, 5).find("prices no link sharing"), std::string::npos);
  EXPECT_EQ(plan_table(plan, agreed, 5).find("prices no link sharing"), std::string::npos);
}

// A second batch that cannot run leaves the first batch's confirmations standing, with a note.
TEST(PlannerTest, AFailedSecondBatchKeepsTheFirst) {
  const PlanSpec plan = pipelined_p5_plan(1);
  const ConfirmFn slowing = confirmer_slowing_virtual_stages(6, 1.1);
  auto calls = std::make_shared<int>(0);
  PlanOptions opts;
  opts.confirm = [slowing, calls](const std::vector<Scenario>& scenarios, const ProgressFn& p) {
    if ((*calls)++ == 0)
      return slowing(scenarios, p);
    ConfirmBatch unavailable;
    unavailable.available = false;
    unavailable.reason = "gone";
    return unavailable;
  };
  const PlanResult r = run_plan(plan, opts);
  EXPECT_EQ(*calls, 2);
  EXPECT_TRUE(r.event_available);
  ASSERT_EQ(r.candidates.size(), 2u);
  EXPECT_TRUE(r.candidates[0].confirmed);
  EXPECT_FALSE(r.candidates[1].confirmed);
  EXPECT_EQ(r.confirmations, 1);
  bool noted = false;
  for (const auto& n : r.notes)
    noted = noted || n.find("second confirmation batch could not run (gone)") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(PlannerTest, MinTimeRanksByWallTime) {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.node_counts = {16, 32, 64};
  plan.objective = Objective::kMinTime;
  const PlanResult r = run_plan(plan, {});
  ASSERT_GT(r.ranked.size(), 2u);
  for (size_t i = 1; i < r.ranked.size(); ++i) {
    if (r.ranked[i].meets_target != r.ranked[i - 1].meets_target)
      continue;
    EXPECT_LE(r.ranked[i - 1].wall_time_s, r.ranked[i].wall_time_s);
  }
  EXPECT_EQ(r.candidates[r.ranked[0].candidate].candidate.num_nodes, 64);
}

TEST(PlannerTest, GlobalBatchRangeIsSearched) {
  PlanSpec plan = hand_plan();
  plan.space.tensor = {2};
  plan.space.pipeline = {1};
  plan.space.micro_batch_size = {1};
  plan.space.zero_stage = {0};
  plan.global_batch_sizes = {16, 32, 64};
  plan.confirm_top_k = 3;
  const PlanResult r = run_plan(plan, {});
  EXPECT_EQ(r.screened, 3);
  ASSERT_EQ(r.candidates.size(), 3u);
  // Larger batches amortise the gradient reduction: the fastest per token is the largest.
  EXPECT_EQ(r.candidates[r.ranked[0].candidate].candidate.parallelism.global_batch_size, 64);
}

TEST(PlannerTest, DeterministicWhateverTheThreadCount) {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.node_counts = {8, 16, 32, 64};
  PlanOptions one;
  one.jobs = 1;
  one.confirm = skewed_confirmer(0.1);
  PlanOptions two = one;
  two.jobs = 2;
  const std::string a = plan_to_json(plan, run_plan(plan, one), 0, false).dump(2);
  const std::string b = plan_to_json(plan, run_plan(plan, two), 0, false).dump(2);
  const std::string c = plan_to_json(plan, run_plan(plan, two), 0, false).dump(2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(b, c);
}

// The screen's lower bound settles layouts that cannot change the plan: with it and without,
// the plan is the same to the last digit, a reachable target or not.
TEST(PlannerTest, ScreenBoundsChangeNothing) {
  PlanSpec reachable = read_plan_text(default_plan_text(), "<default plan>");
  reachable.node_counts = {16, 32};
  PlanSpec unreachable = reachable;
  unreachable.deadline_s = 3600.0;
  for (const PlanSpec& plan : {reachable, unreachable}) {
    PlanOptions bounded;
    bounded.confirm = skewed_confirmer(0.1);
    PlanOptions full = bounded;
    full.screen_bounds = false;
    const PlanResult a = run_plan(plan, bounded);
    const PlanResult b = run_plan(plan, full);
    EXPECT_GT(a.bounded, a.screened / 10);
    EXPECT_EQ(b.bounded, 0);
    EXPECT_EQ(plan_to_json(plan, a, 0, false).dump(2), plan_to_json(plan, b, 0, false).dump(2));
    EXPECT_EQ(plan_table(plan, a, 0), plan_table(plan, b, 0));
  }
}

TEST(PlannerTest, JsonHasTheContractKeys) {
  PlanSpec plan = read_plan_text(default_plan_text(), "<default plan>");
  plan.node_counts = {16, 32};
  const PlanResult r = run_plan(plan, {});
  const nlohmann::json j = plan_to_json(plan, r, 5, false);
  for (const char* key : {"best", "ranked", "pareto", "pruned", "memory_headroom_gib"})
    EXPECT_TRUE(j.contains(key));
  for (const char* key : {"scenario", "instance", "pricing", "num_nodes", "iteration_time_s",
                          "time_to_train_days", "cost_usd"}) {
    EXPECT_TRUE(j.at("best").contains(key)) << key;
  }
  EXPECT_EQ(j.at("best").at("scenario").at("schema"), "capsim.scenario/v1");
  EXPECT_LE(j.at("ranked").size(), 5u);
  EXPECT_TRUE(j.at("pruned").contains("memory"));
  EXPECT_FALSE(j.contains("timing"));
  const std::string table = plan_table(plan, r, 5);
  EXPECT_NE(table.find("Pareto front"), std::string::npos);
  EXPECT_NE(table.find("pruned candidates"), std::string::npos);
}

TEST(PlannerTest, UnreachableTargetReportsTheFastest) {
  PlanSpec plan = hand_plan();
  plan.deadline_s = 1.0;  // 1e9 tokens in one second
  const PlanResult r = run_plan(plan, {});
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_FALSE(r.ranked[0].meets_target);
  EXPECT_EQ(r.pruned.of(PruneReason::kBelowTarget), r.screened);
  EXPECT_TRUE(best_scenario_json(plan, r).is_null());
  // The report says how far the fastest falls short, in the table and the JSON.
  const std::string reason = no_best_reason(plan, r);
  EXPECT_EQ(reason.find("the fastest candidate (1 x p4de.24xlarge) reaches "), 0u) << reason;
  EXPECT_NE(reason.find("% of the 1e+09 needed (node counts tried up to 1)"), std::string::npos)
      << reason;
  EXPECT_NE(plan_table(plan, r, 5).find("no configuration meets the target: " + reason),
            std::string::npos);
  EXPECT_EQ(plan_to_json(plan, r, 5, false).at("no_best_reason"), reason);
}

// When nothing fits, the report says so and names what the search left out that saves memory.
TEST(PlannerTest, NothingFittingSaysWhatWouldHelp) {
  PlanSpec plan = hand_plan();
  plan.model.num_layers = 960;  // about 48B parameters on one node, without ZeRO-3 or recompute
  plan.space.recompute = {Recompute::kNone};
  plan.space.zero_stage = {0, 1};
  const PlanResult r = run_plan(plan, {});
  ASSERT_TRUE(r.ranked.empty());
  EXPECT_GT(r.pruned.of(PruneReason::kMemory), 0);
  EXPECT_EQ(no_best_reason(plan, r),
            "no layout fits in memory on any instance and node count tried (up to 1 nodes); "
            "more nodes, full recompute in \"search\", ZeRO-3 in \"search\" or GPUs with more "
            "memory would help");
  EXPECT_FALSE(plan_to_json(plan, r, 5, false).at("best").is_object());
}

// Fast enough without failures, too slow with them: the report says the failures did it.
TEST(PlannerTest, DeadlineMissedOnlyThroughFailuresSaysSo) {
  PlanSpec plan = hand_plan();
  const PlanResult free_run = run_plan(plan, {});
  ASSERT_TRUE(free_run.ranked.front().meets_target);
  // A deadline just past the fastest failure-free time, and a GPU failure about every hour.
  double fastest_s = free_run.ranked.front().time_to_train_s;
  for (const RankedEntry& e : free_run.ranked)
    fastest_s = std::min(fastest_s, e.time_to_train_s);
  plan.deadline_s = 1.01 * fastest_s;
  plan.failure = daly_failure_model(8 * 3600.0, 60.0, 60.0);
  const PlanResult r = run_plan(plan, {});
  ASSERT_FALSE(r.ranked.empty());
  ASSERT_FALSE(r.ranked.front().meets_target);
  const std::string reason = no_best_reason(plan, r);
  EXPECT_NE(reason.find("is fast enough without failures, but takes"), std::string::npos) << reason;
}

// Training runs whole iterations: one token takes a full iteration, and a token count past a
// whole number of iterations takes the next one in full.
TEST(PlannerTest, TimeToTrainRoundsUpToWholeIterations) {
  PlanSpec plan = hand_plan();
  const double tokens_per_iteration = 64.0 * plan.model.seq_length;  // a global batch of 64
  const auto expect_iterations = [&](double tokens, double iterations) {
    plan.tokens = tokens;
    const PlanResult r = run_plan(plan, {});
    ASSERT_FALSE(r.ranked.empty());
    for (const RankedEntry& e : r.ranked) {
      const Evaluation& ev = r.candidates[e.candidate].final_evaluation();
      EXPECT_NEAR(e.time_to_train_s, iterations * ev.iteration_time_s,
                  1e-12 * iterations * ev.iteration_time_s)
          << tokens << " tokens";
      EXPECT_EQ(e.wall_time_s, e.time_to_train_s);  // no failure model
    }
  };
  expect_iterations(1.0, 1.0);
  expect_iterations(2.5 * tokens_per_iteration, 3.0);
  expect_iterations(3.0 * tokens_per_iteration, 3.0);
  // A whole number of iterations takes exactly tokens / throughput.
  const PlanResult whole = run_plan(plan, {});
  for (const RankedEntry& e : whole.ranked) {
    EXPECT_EQ(e.time_to_train_s,
              plan.tokens / whole.candidates[e.candidate].final_evaluation().tokens_per_s);
  }
  // A deadline shorter than one iteration: the throughput is there, a whole iteration is not.
  plan.tokens = 1.0;
  double shortest_s = whole.candidates[whole.ranked.front().candidate].analytic.iteration_time_s;
  for (const auto& c : whole.candidates)
    shortest_s = std::min(shortest_s, c.final_evaluation().iteration_time_s);
  plan.deadline_s = 0.5 * shortest_s;
  const PlanResult r = run_plan(plan, {});
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_FALSE(r.ranked.front().meets_target);
  const std::string reason = no_best_reason(plan, r);
  EXPECT_NE(reason.find("reaches the throughput needed, but training runs whole iterations of"),
            std::string::npos)
      << reason;
}

}  // namespace
}  // namespace capsim::planner
