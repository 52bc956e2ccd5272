#include "io/layout_rules.hpp"

#include <cstdint>
#include <numeric>
#include <string>

#include "io/input_error.hpp"

namespace capsim::io {
namespace {

template <class T>
std::string num(T v) {
  return std::to_string(v);
}

// Throws layout errors at /parallelism/<key> of the scenario being checked.
class LayoutErrors {
 public:
  LayoutErrors(const std::string& file, const std::string& pointer)
      : file_(file), par_(pointer + "/parallelism") {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(file_, par_ + "/" + key, message);
  }

 private:
  const std::string& file_;
  std::string par_;
};

void check_gpu_count(const ClusterSpec& c, const Parallelism& p, const LayoutErrors& e) {
  // 64-bit products: each factor may be up to 2^20, and an int product could wrap to a match.
  const std::int64_t layout_gpus = std::int64_t{p.tensor} * p.pipeline * p.data * p.context;
  if (layout_gpus != c.num_gpus()) {
    e.fail("data", "tensor (" + num(p.tensor) + ") x pipeline (" + num(p.pipeline) + ") x data (" +
                       num(p.data) + ") x context (" + num(p.context) + ") = " + num(layout_gpus) +
                       " must equal gpus_per_node (" + num(c.gpus_per_node) + ") x num_nodes (" +
                       num(c.num_nodes) + ") = " + num(c.num_gpus()));
  }
}

// Tensor parallelism splits the heads and the FFN columns evenly over its ranks.
void check_tensor_split(const ModelSpec& m, const Parallelism& p, const LayoutErrors& e) {
  if (m.num_attention_heads % p.tensor != 0) {
    e.fail("tensor", "num_attention_heads (" + num(m.num_attention_heads) +
                         ") is not divisible by tensor (" + num(p.tensor) + ")");
  }
  if (m.num_kv_heads % p.tensor != 0) {
    e.fail("tensor", "num_kv_heads (" + num(m.num_kv_heads) + ") is not divisible by tensor (" +
                         num(p.tensor) + ")");
  }
  if (m.ffn_hidden_size % p.tensor != 0) {
    e.fail("tensor", "ffn_hidden_size (" + num(m.ffn_hidden_size) +
                         ") is not divisible by tensor (" + num(p.tensor) + ")");
  }
}

void check_sequence_options(const ModelSpec& m, const Parallelism& p, const LayoutErrors& e) {
  if (p.sequence_parallel && p.tensor == 1) {
    e.fail("sequence_parallel", "sequence_parallel needs tensor > 1");
  }
  if (p.tp_comm_overlap && !p.sequence_parallel) {
    e.fail("tp_comm_overlap",
           "tp_comm_overlap overlaps the sequence-parallel collectives with the GEMMs; it needs "
           "sequence_parallel true (Megatron-LM: \"Tensor parallel communication/GEMM overlap "
           "can happen only when sequence parallelism is enabled\")");
  }
  if (p.context > 1 && m.seq_length % (2 * p.context) != 0) {
    e.fail("context", "seq_length (" + num(m.seq_length) + ") is not divisible by 2 x context (" +
                          num(2 * p.context) + "), which load-balanced causal CP needs");
  }
}

// Megatron's rank order (tensor fastest) must tile the nodes, or groups straddle them.
void check_groups_tile_nodes(const ClusterSpec& c, const Parallelism& p, const LayoutErrors& e) {
  const auto tiles_nodes = [&](std::int64_t n) {
    return c.gpus_per_node % n == 0 || n % c.gpus_per_node == 0;
  };
  if (!tiles_nodes(p.tensor)) {
    e.fail("tensor", "tensor (" + num(p.tensor) + ") must divide gpus_per_node (" +
                         num(c.gpus_per_node) + ") or be a multiple of it");
  }
  const std::int64_t stage_gpus = std::int64_t{p.tensor} * p.context * p.data;
  if (!tiles_nodes(stage_gpus)) {
    e.fail("data", "tensor x context x data (" + num(stage_gpus) + ") must divide gpus_per_node (" +
                       num(c.gpus_per_node) + ") or be a multiple of it");
  }
}

// Sequence parallelism splits each CP rank's sequence over the TP ranks
// (scatter_to_sequence_parallel_region divides its first dimension evenly).
void check_sequence_parallel_split(const ModelSpec& m, const Parallelism& p,
                                   const LayoutErrors& e) {
  if (p.sequence_parallel && m.seq_length % (p.tensor * p.context) != 0) {
    e.fail("sequence_parallel",
           "seq_length (" + num(m.seq_length) + ") is not divisible by tensor x context (" +
               num(p.tensor * p.context) + "), which sequence parallelism needs");
  }
}

void check_batch_split(const Parallelism& p, const LayoutErrors& e) {
  if (p.global_batch_size % (std::int64_t{p.micro_batch_size} * p.data) != 0) {
    e.fail("global_batch_size", "global_batch_size (" + num(p.global_batch_size) +
                                    ") is not divisible by micro_batch_size (" +
                                    num(p.micro_batch_size) + ") x data (" + num(p.data) + ")");
  }
}

// The interleaved schedule and virtual stages come together, and it plays the micro-batches
// in groups of `pipeline`.
void check_schedule(const Parallelism& p, const LayoutErrors& e) {
  const bool interleaved = p.schedule == Schedule::kInterleaved;
  if (interleaved && p.virtual_pipeline_stages < 2) {
    e.fail("virtual_pipeline_stages",
           "schedule \"interleaved-1f1b\" needs virtual_pipeline_stages > 1");
  }
  if (!interleaved && p.virtual_pipeline_stages > 1) {
    e.fail("schedule", "virtual_pipeline_stages > 1 needs schedule \"interleaved-1f1b\"");
  }
  if (interleaved && p.pipeline < 2) {
    e.fail("pipeline", "schedule \"interleaved-1f1b\" needs pipeline > 1");
  }
  if (interleaved && p.num_micro_batches() % p.pipeline != 0) {
    e.fail("global_batch_size", "interleaved-1f1b needs the micro-batch count (" +
                                    num(p.num_micro_batches()) +
                                    ") to be a multiple of pipeline (" + num(p.pipeline) + ")");
  }
}

// An explicit stage_layers list must cover the model once, with a layer for every chunk.
void check_stage_layers(const ModelSpec& m, const Parallelism& p, const LayoutErrors& e) {
  if (static_cast<int>(p.stage_layers.size()) != p.pipeline) {
    e.fail("stage_layers", "stage_layers has " + num(p.stage_layers.size()) +
                               " entries but pipeline is " + num(p.pipeline));
  }
  const int total = std::accumulate(p.stage_layers.begin(), p.stage_layers.end(), 0);
  if (total != m.num_layers) {
    e.fail("stage_layers",
           "stage_layers sum to " + num(total) + " but num_layers is " + num(m.num_layers));
  }
  for (size_t i = 0; i < p.stage_layers.size(); ++i) {
    if (p.stage_layers[i] < p.virtual_pipeline_stages) {
      e.fail("stage_layers/" + num(i), "stage " + num(i) + " has " + num(p.stage_layers[i]) +
                                           " layers, fewer than virtual_pipeline_stages (" +
                                           num(p.virtual_pipeline_stages) +
                                           "): every chunk needs a layer");
    }
  }
}

// Without stage_layers the layers split evenly over the chunks, or as Megatron splits them.
void check_even_layer_split(const ModelSpec& m, const Parallelism& p, const LayoutErrors& e) {
  const int chunks = p.pipeline * p.virtual_pipeline_stages;
  if (m.num_layers % chunks != 0 && !is_megatron_embedding_loss_split(m.num_layers, chunks)) {
    e.fail("pipeline", "num_layers (" + num(m.num_layers) + ") is not divisible by pipeline (" +
                           num(p.pipeline) + ") x virtual_pipeline_stages (" +
                           num(p.virtual_pipeline_stages) +
                           "), nor is num_layers + 2 (Megatron's split counting the embedding "
                           "and the loss as layers); give stage_layers for an uneven split");
  }
}

void check_layer_split(const ModelSpec& m, const Parallelism& p, const LayoutErrors& e) {
  if (p.pipeline > m.num_layers) {
    e.fail("pipeline",
           "pipeline (" + num(p.pipeline) + ") exceeds num_layers (" + num(m.num_layers) + ")");
  }
  if (!p.stage_layers.empty()) {
    check_stage_layers(m, p, e);
  } else {
    check_even_layer_split(m, p, e);
  }
}

void check_precision(const ClusterSpec& c, const Parallelism& p, const LayoutErrors& e) {
  if (p.precision == Precision::kFp8 && c.gpu.peak_fp8_flop_per_s <= 0.0) {
    e.fail("precision",
           "precision \"fp8\" needs a GPU with fp8 tensor cores; " + c.gpu.name + " has none");
  }
}

}  // namespace

// The checks run in this order, and the first that fails names the error, so a layout with
// several faults always reports the same one.
void check_layout(const ModelSpec& m, const ClusterSpec& c, const Parallelism& p,
                  const std::string& file, const std::string& pointer) {
  const LayoutErrors e(file, pointer);
  check_gpu_count(c, p, e);
  check_tensor_split(m, p, e);
  check_sequence_options(m, p, e);
  check_groups_tile_nodes(c, p, e);
  check_sequence_parallel_split(m, p, e);
  check_batch_split(p, e);
  check_schedule(p, e);
  check_layer_split(m, p, e);
  check_precision(c, p, e);
}

}  // namespace capsim::io
