#include "io/megatron_arguments_known.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

namespace capsim::io {
namespace {

using Entry = std::pair<std::string_view, const char*>;

constexpr const char* kData = "data, tokenizer and checkpoint paths and formats";
constexpr const char* kLogging = "logging, evaluation and profiling";
constexpr const char* kHyper = "an optimization hyperparameter (the step does the same work)";
constexpr const char* kRouter = "a router loss or bias term (forced-balanced routing is modelled)";
constexpr const char* kSmall =
    "element-wise work within capsim's per-layer costs (norms, biases, rotary embeddings)";
constexpr const char* kRuntime = "process setup and run control";

// Sorted by name: lookup is a binary search (checked below).
constexpr auto kIgnored = std::to_array<Entry>({
    {"--accumulate-allreduce-grads-in-fp32", "bf16 training's default gradient reduction"},
    {"--adam-beta1", kHyper},
    {"--adam-beta2", kHyper},
    {"--adam-eps", kHyper},
    {"--add-bias-linear", kSmall},
    {"--add-qkv-bias", kSmall},
    {"--apply-query-key-layer-scaling", kSmall},
    {"--async-save", kData},
    {"--attention-softmax-in-fp32", kSmall},
    {"--auto-detect-ckpt-format", kData},
    {"--check-for-nan-in-loss-and-grad", kRuntime},
    {"--ckpt-assume-constant-structure", kData},
    {"--ckpt-format", kData},
    {"--ckpt-fully-parallel-load", kData},
    {"--ckpt-fully-parallel-save", kData},
    {"--clip-grad", kHyper},
    {"--cross-entropy-fusion-impl", "both implementations fuse the loss"},
    {"--data-cache-path", kData},
    {"--data-path", kData},
    {"--dataloader-type", kData},
    {"--disable-bias-linear", kSmall},
    {"--dist-ckpt-strictness", kData},
    {"--distributed-backend", kRuntime},
    {"--distributed-timeout-minutes", kRuntime},
    {"--end-weight-decay", kHyper},
    {"--eod-mask-loss", kData},
    {"--eval-interval", kLogging},
    {"--eval-iters", kLogging},
    {"--exit-duration-in-mins", kRuntime},
    {"--exit-interval", kRuntime},
    {"--exit-signal-handler", kRuntime},
    {"--finetune", kData},
    {"--hysteresis", kHyper},
    {"--init-method-std", kHyper},
    {"--initial-loss-scale", kHyper},
    {"--load", kData},
    {"--log-interval", kLogging},
    {"--log-memory-to-tensorboard", kLogging},
    {"--log-num-zeros-in-grad", kLogging},
    {"--log-params-norm", kLogging},
    {"--log-throughput", kLogging},
    {"--log-timers-to-tensorboard", kLogging},
    {"--log-validation-ppl-to-tensorboard", kLogging},
    {"--logging-level", kLogging},
    {"--loss-scale", kHyper},
    {"--loss-scale-window", kHyper},
    {"--lr", kHyper},
    {"--lr-decay-iters", kHyper},
    {"--lr-decay-samples", kHyper},
    {"--lr-decay-style", kHyper},
    {"--lr-warmup-fraction", kHyper},
    {"--lr-warmup-init", kHyper},
    {"--lr-warmup-iters", kHyper},
    {"--lr-warmup-samples", kHyper},
    {"--manual-gc", kRuntime},
    {"--manual-gc-interval", kRuntime},
    {"--merge-file", kData},
    {"--min-loss-scale", kHyper},
    {"--min-lr", kHyper},
    {"--mock-data", kData},
    {"--moe-aux-loss-coeff", kRouter},
    {"--moe-grouped-gemm", "capsim models the experts as grouped GEMMs"},
    {"--moe-router-bias-update-rate", kRouter},
    {"--moe-router-dtype", kRouter},
    {"--moe-router-enable-expert-bias", kRouter},
    {"--moe-router-force-load-balancing",
     "capsim models forced-balanced routing (load_imbalance 1)"},
    {"--moe-router-load-balancing-type", kRouter},
    {"--moe-router-pre-softmax", kRouter},
    {"--moe-router-topk-scaling-factor", kRouter},
    {"--moe-z-loss-coeff", kRouter},
    {"--mtp-loss-scaling-factor", kHyper},
    {"--no-load-optim", kData},
    {"--no-load-rng", kData},
    {"--no-mmap-bin-files", kData},
    {"--norm-epsilon", kHyper},
    {"--normalization", kSmall},
    {"--num-workers", kData},
    {"--profile", kLogging},
    {"--profile-step-end", kLogging},
    {"--profile-step-start", kLogging},
    {"--qk-layernorm", kSmall},
    {"--rampup-batch-size",
     "the ramp-up before the full global batch (capsim models the full batch)"},
    {"--reset-attention-mask", kData},
    {"--reset-position-ids", kData},
    {"--rotary-base", kSmall},
    {"--rotary-percent", kSmall},
    {"--rotary-scaling-factor", kSmall},
    {"--save", kData},
    {"--save-interval", kData},
    {"--seed", kHyper},
    {"--split", kData},
    {"--start-weight-decay", kHyper},
    {"--tensorboard-dir", kLogging},
    {"--tensorboard-log-interval", kLogging},
    {"--tensorboard-queue-size", kLogging},
    {"--timing-log-level", kLogging},
    {"--timing-log-option", kLogging},
    {"--tokenizer-model", kData},
    {"--tokenizer-type", kData},
    {"--train-data-path", kData},
    {"--train-iters", kRuntime},
    {"--train-samples", kRuntime},
    {"--transformer-impl", "capsim models Transformer Engine's kernels"},
    {"--use-checkpoint-args", kData},
    {"--use-dist-ckpt", kData},
    {"--use-flash-attn", "flash attention is capsim's default"},
    {"--use-mcore-models", "capsim models Megatron-Core"},
    {"--use-precision-aware-optimizer", "read with --exp-avg-dtype"},
    {"--use-rotary-position-embeddings", kSmall},
    {"--valid-data-path", kData},
    {"--vocab-file", kData},
    {"--wandb-exp-name", kLogging},
    {"--wandb-project", kLogging},
    {"--wandb-save-dir", kLogging},
    {"--weight-decay", kHyper},
    {"--weight-decay-incr-style", kHyper},
});

constexpr const char* kUnfused = "an unfused kernel that capsim models fused";
constexpr const char* kBf16Ends =
    "the first and last layers' GEMMs in bf16 (capsim runs every layer in the low precision)";
constexpr const char* kDropping = "expert capacity and token dropping (capsim models dropless MoE)";

// Sorted by name.
constexpr auto kUnmodelled = std::to_array<Entry>({
    {"--cpu-offloading", "activations and weights offloaded to the host"},
    {"--cuda-graph-impl", "CUDA graphs (fewer kernel launches)"},
    {"--cuda-graph-scope", "CUDA graphs (fewer kernel launches)"},
    {"--delay-wgrad-compute", "weight-gradient GEMMs deferred to overlap communication"},
    {"--enable-cuda-graph", "CUDA graphs (fewer kernel launches)"},
    {"--external-cuda-graph", "CUDA graphs (fewer kernel launches)"},
    {"--first-last-layers-bf16", kBf16Ends},
    {"--fp8-amax-history-len", "fp8 scaling details"},
    {"--moe-expert-capacity-factor", kDropping},
    {"--moe-pad-expert-input-to-capacity", kDropping},
    {"--moe-token-drop-policy", kDropping},
    {"--no-bias-dropout-fusion", kUnfused},
    {"--no-bias-gelu-fusion", kUnfused},
    {"--no-bias-swiglu-fusion", kUnfused},
    {"--no-gradient-accumulation-fusion", kUnfused},
    {"--no-masked-softmax-fusion", kUnfused},
    {"--no-persist-layer-norm", kUnfused},
    {"--num-layers-at-end-in-bf16", kBf16Ends},
    {"--num-layers-at-start-in-bf16", kBf16Ends},
    {"--optimizer", "an optimizer other than Adam (memory and update step)"},
});

constexpr bool by_name(const Entry& a, const Entry& b) {
  return a.first < b.first;
}
static_assert(std::is_sorted(kIgnored.begin(), kIgnored.end(), by_name));
static_assert(std::is_sorted(kUnmodelled.begin(), kUnmodelled.end(), by_name));

template <size_t N>
const char* lookup(const std::array<Entry, N>& entries, std::string_view name) {
  const auto it = std::lower_bound(entries.begin(), entries.end(), name,
                                   [](const Entry& e, std::string_view n) { return e.first < n; });
  return it != entries.end() && it->first == name ? it->second : nullptr;
}

}  // namespace

const char* ignored_megatron_argument(std::string_view name) {
  return lookup(kIgnored, name);
}

const char* unmodelled_megatron_argument(std::string_view name) {
  return lookup(kUnmodelled, name);
}

}  // namespace capsim::io
