// The training stacks' catalog and how a stack's settings meet a scenario's layout.
#include "models/training_stack.hpp"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace capsim {
namespace {

bool none_explicit(std::string_view) {
  return false;
}

TEST(TrainingStackTest, EveryIssueStackIsKnownOnceWithADefaultVersion) {
  const std::vector<std::string> names = training_stack_names();
  EXPECT_EQ(names, (std::vector<std::string>{"megatron-core", "nemo", "megatron-bridge",
                                             "megatron-deepspeed", "deepspeed", "pytorch-fsdp",
                                             "llm-foundry", "torchtitan"}));
  for (const std::string& name : names) {
    const TrainingStack* by_default = find_training_stack(name);
    ASSERT_NE(by_default, nullptr) << name;
    const std::vector<std::string> versions = training_stack_versions(name);
    ASSERT_FALSE(versions.empty());
    EXPECT_EQ(by_default->version, versions.front()) << name;
    EXPECT_EQ(std::set<std::string>(versions.begin(), versions.end()).size(), versions.size());
    for (const std::string& version : versions)
      EXPECT_EQ(find_training_stack(name, version)->version, version);
  }
  EXPECT_EQ(find_training_stack("megatron"), nullptr);
  EXPECT_EQ(find_training_stack("nemo", "1999"), nullptr);
  EXPECT_TRUE(training_stack_versions("megatron").empty());
}

TEST(TrainingStackTest, ExplicitKeysKeepTheirValues) {
  const StackSettings& deepspeed = find_training_stack("megatron-deepspeed")->settings;
  Parallelism p;
  p.zero_stage = 1;
  p.overlap_grad_reduce = true;
  p.tp_backward_overlap = false;
  apply_stack_settings(
      deepspeed, [](std::string_view key) { return key == "overlap_grad_reduce"; }, p);
  EXPECT_TRUE(p.overlap_grad_reduce);
  EXPECT_FALSE(p.overlap_param_gather);  // the stack's, under the explicit gradient overlap
  EXPECT_TRUE(p.tp_backward_overlap);    // unsaid: the stack's
}

// Megatron-Bridge's precision presets gather fp8 parameters for delayed and current scaling
// and MXFP8, not for blockwise scaling or NVFP4; the other stacks keep 16-bit parameters.
TEST(TrainingStackTest, MegatronBridgeKeepsFp8ParametersWhereItsPresetsGatherThem) {
  const StackSettings& bridge = find_training_stack("megatron-bridge")->settings;
  const StackSettings& nemo = find_training_stack("nemo")->settings;
  for (const auto& [precision, kept] :
       std::vector<std::pair<Precision, bool>>{{Precision::kFp8, true},
                                               {Precision::kFp8Cs, true},
                                               {Precision::kMxfp8, true},
                                               {Precision::kFp8Blockwise, false},
                                               {Precision::kNvfp4, false},
                                               {Precision::kBf16, false}}) {
    Parallelism p;
    p.precision = precision;
    apply_stack_settings(bridge, none_explicit, p);
    EXPECT_EQ(p.fp8_params, kept) << to_string(precision);
    EXPECT_FALSE(keeps_fp8_parameters(nemo, precision)) << to_string(precision);
  }
}

TEST(TrainingStackTest, SettingsApplyOnlyWhereTheLayoutHasThem) {
  const StackSettings& nemo1 = find_training_stack("nemo", "2023")->settings;
  Parallelism p;
  p.sequence_parallel = false;
  p.precision = Precision::kFp16;
  apply_stack_settings(nemo1, none_explicit, p);
  EXPECT_FALSE(p.tp_comm_overlap);             // no sequence parallelism to overlap
  EXPECT_FALSE(p.master_weights.has_value());  // fp16 weights hold no bf16 high halves
  p.sequence_parallel = true;
  p.precision = Precision::kBf16;
  apply_stack_settings(nemo1, none_explicit, p);
  EXPECT_TRUE(p.tp_comm_overlap);
  EXPECT_EQ(p.master_weights, MasterWeights::kFp32Remainders);
  p.precision = Precision::kFp8;
  p.fp8_params = true;
  apply_stack_settings(
      nemo1, [](std::string_view key) { return key == "fp8_params"; }, p);
  EXPECT_FALSE(p.master_weights.has_value());  // fp8 tensors keep a full master

  Parallelism zero3;
  zero3.zero_stage = 3;
  apply_stack_settings(find_training_stack("deepspeed")->settings, none_explicit, zero3);
  EXPECT_TRUE(zero3.overlap_grad_reduce);  // ZeRO-3 reduces layer by layer whatever the stack
}

TEST(TrainingStackTest, GradientsReduceInTheTrainingPrecisionWhereTheStackDoes) {
  for (const Precision precision : {Precision::kBf16, Precision::kFp16}) {
    Parallelism p;
    p.precision = precision;
    apply_stack_settings(find_training_stack("pytorch-fsdp")->settings, none_explicit, p);
    EXPECT_EQ(p.grad_reduce_precision, precision);
    apply_stack_settings(find_training_stack("torchtitan")->settings, none_explicit, p);
    EXPECT_EQ(p.grad_reduce_precision, Precision::kFp32);
  }
  Parallelism fp8;
  fp8.precision = Precision::kFp8;
  apply_stack_settings(find_training_stack("deepspeed")->settings, none_explicit, fp8);
  EXPECT_FALSE(fp8.grad_reduce_precision.has_value());
}

TEST(TrainingStackTest, KernelsFollowTheStackUnlessTheModelNamesThem) {
  ModelSpec model;
  apply_stack_kernels(find_training_stack("deepspeed", "2021")->settings, none_explicit, model);
  EXPECT_EQ(model.attention, AttentionKernel::kMaterialized);
  EXPECT_EQ(model.cross_entropy, CrossEntropyKernel::kUnfused);
  model.cross_entropy = CrossEntropyKernel::kFused;
  apply_stack_kernels(
      find_training_stack("llm-foundry")->settings,
      [](std::string_view key) { return key == "cross_entropy"; }, model);
  EXPECT_EQ(model.attention, AttentionKernel::kTriton);  // MPT's attn_impl default
  EXPECT_EQ(model.cross_entropy, CrossEntropyKernel::kFused);
}

}  // namespace
}  // namespace capsim
