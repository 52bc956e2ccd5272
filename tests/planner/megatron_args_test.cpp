// The Megatron-LM arguments of a planned layout, uneven stage splits included.
#include "planner/megatron_args.hpp"

#include <string>

#include <gtest/gtest.h>

namespace capsim::planner {
namespace {

Scenario llama_405b() {
  Scenario s;
  s.model.num_layers = 126;
  s.model.hidden_size = 16384;
  s.model.num_attention_heads = 128;
  s.model.num_kv_heads = 8;
  s.model.ffn_hidden_size = 53248;
  s.model.ffn_activation = FfnActivation::kSwiglu;
  s.model.seq_length = 8192;
  s.parallelism.tensor = 8;
  s.parallelism.pipeline = 16;
  s.parallelism.data = 128;
  s.parallelism.global_batch_size = 2048;
  s.parallelism.sequence_parallel = true;
  s.parallelism.zero_stage = 1;
  return s;
}

TEST(MegatronArgsTest, EvenLayout) {
  const std::string a = megatron_arguments(llama_405b());
  for (const char* arg :
       {"--num-layers 126", "--group-query-attention --num-query-groups 8", "--swiglu",
        "--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 16",
        "--sequence-parallel", "--micro-batch-size 1", "--global-batch-size 2048",
        "--use-distributed-optimizer", "--bf16"}) {
    EXPECT_NE(a.find(arg), std::string::npos) << arg << " in " << a;
  }
  EXPECT_EQ(a.find("--pipeline-model-parallel-layout"), std::string::npos);
  EXPECT_EQ(a.find("--recompute"), std::string::npos);
}

TEST(MegatronArgsTest, UnevenStagesBecomeAPipelineLayout) {
  Scenario s = llama_405b();
  s.parallelism.stage_layers = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
  std::string want = "--pipeline-model-parallel-layout \"Et*7|";
  for (int i = 0; i < 14; ++i)
    want += "t*8|";
  want += "t*7L\"";
  EXPECT_NE(megatron_arguments(s).find(want), std::string::npos) << megatron_arguments(s);
  // Interleaved: virtual stage j of rank i is chunk j·p + i, each rank's layers halved.
  s.parallelism.pipeline = 2;
  s.parallelism.virtual_pipeline_stages = 2;
  s.parallelism.stage_layers = {4, 6};
  s.parallelism.recompute = Recompute::kFull;
  s.parallelism.zero_stage = 3;
  const std::string a = megatron_arguments(s);
  EXPECT_NE(a.find("--num-virtual-stages-per-pipeline-rank 2"), std::string::npos) << a;
  EXPECT_EQ(a.find("--microbatch-group-size-per-virtual-pipeline-stage"), std::string::npos) << a;
  s.parallelism.microbatch_group_size = 3;
  EXPECT_NE(megatron_arguments(s).find("--microbatch-group-size-per-virtual-pipeline-stage 3"),
            std::string::npos);
  EXPECT_NE(a.find("--pipeline-model-parallel-layout \"Et*2|t*3|t*2|t*3L\""), std::string::npos)
      << a;
  EXPECT_NE(a.find("--recompute-granularity full --recompute-method uniform"), std::string::npos);
  EXPECT_NE(a.find("--use-torch-fsdp2"), std::string::npos);
}

}  // namespace
}  // namespace capsim::planner
