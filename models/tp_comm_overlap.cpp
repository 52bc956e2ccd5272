#include "models/tp_comm_overlap.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include "models/as_double.hpp"
#include "models/collective_cost.hpp"
#include "models/op_cost.hpp"

namespace capsim {
namespace {

// What the overlap of one collective with one GEMM is costed with.
struct Pairing {
  const std::vector<Op>* ops = nullptr;
  const HardwareProfile* profile = nullptr;
  GpuSpec gpu;
  GpuSpec gpu_beside_comm;  // the GEMM's SMs under set_sm_margin
  Precision precision = Precision::kBf16;
  double seq_length = 0.0;
  GroupShape tp;
};

const Op& layer_gemm(const Pairing& c, std::string_view name, Pass pass) {
  for (const Op& op : *c.ops) {
    if (is_gemm(op, name, pass))
      return op;
  }
  throw std::logic_error("tp_comm_overlap: the layer has no GEMM " + std::string(name));
}

double gemm_s(const Pairing& c, const Op& op, const GpuSpec& gpu) {
  return op_time_s(op, *c.profile, gpu, c.precision, c.seq_length);
}

// The GEMM is split along its rows (the token dimension) and each split costed at the whole
// GEMM's efficiency: TE launches the splits round-robin on up to 3 compute streams
// (comm_gemm_overlap.cpp, _stream_compute[i % size]; NVTE_COMM_OVERLAP_MAX_STREAMS), so one
// split's partial last wave fills with the next split's tiles.

// Ring exchange: t splits of the GEMM; while split i runs, the next rank's rows arrive (one
// ring step of the all-gather), so t - 1 steps hide behind t - 1 splits.
double ring_exchange_added_s(const Pairing& c, const Op& op, double gather_bytes) {
  const int t = c.tp.ranks;
  const double gemm_full_s = gemm_s(c, op, c.gpu);
  const double split_s = gemm_full_s / d(t);
  const double step_s =
      collective_time_s(*c.profile, CollectiveKind::kAllGather, gather_bytes, c.tp) / d(t - 1);
  const double total_s = split_s + d(t - 1) * std::max(split_s, step_s);
  return std::max(0.0, total_s - gemm_full_s);
}

// Pipelined reduce-scatter: the GEMM in 4 splits on the SMs the scatter leaves; split i's
// scatter runs beside split i + 1, and the last split's scatter is exposed.
double pipelined_scatter_added_s(const Pairing& c, const Op& op, double scatter_bytes) {
  const int splits = kUserbufferPipelineSplits;
  const double split_s = gemm_s(c, op, c.gpu_beside_comm) / d(splits);
  const double scatter_s = collective_time_s(*c.profile, CollectiveKind::kReduceScatter,
                                             scatter_bytes / d(splits), c.tp);
  const double total_s = split_s + d(splits - 1) * std::max(split_s, scatter_s) + scatter_s;
  return std::max(0.0, total_s - gemm_s(c, op, c.gpu));
}

// Bulk: the whole collective beside the whole GEMM, which runs on the SMs it leaves.
double bulk_added_s(const Pairing& c, const Op& op, CollectiveKind kind, double bytes) {
  const double comm_s = collective_time_s(*c.profile, kind, bytes, c.tp);
  const double total_s = std::max(gemm_s(c, op, c.gpu_beside_comm), comm_s);
  return std::max(0.0, total_s - gemm_s(c, op, c.gpu));
}

}  // namespace

LayerComm tp_overlapped_layer_comm(const std::vector<Op>& layer_ops, const HardwareProfile& profile,
                                   const GpuSpec& gpu, Precision precision, double seq_length,
                                   const GroupShape& tp, double gather_bytes,
                                   double scatter_bytes) {
  if (tp.ranks <= 1)
    return {};
  const Pairing c{&layer_ops, &profile,   gpu, without_sms(gpu, kUserbufferSms),
                  precision,  seq_length, tp};
  const auto gemm = [&c](const char* name, Pass pass) -> const Op& {
    return layer_gemm(c, name, pass);
  };
  LayerComm out;
  for (const char* column_parallel : {"qkv", "mlp_up"}) {
    out.forward_s += ring_exchange_added_s(c, gemm(column_parallel, Pass::kForward), gather_bytes);
    out.backward_s += bulk_added_s(c, gemm(column_parallel, Pass::kBackwardInput),
                                   CollectiveKind::kAllGather, gather_bytes);
    out.backward_s += bulk_added_s(c, gemm(column_parallel, Pass::kBackwardWeight),
                                   CollectiveKind::kReduceScatter, scatter_bytes);
  }
  for (const char* row_parallel : {"attn_proj", "mlp_down"}) {
    out.forward_s +=
        pipelined_scatter_added_s(c, gemm(row_parallel, Pass::kForward), scatter_bytes);
    out.backward_s +=
        ring_exchange_added_s(c, gemm(row_parallel, Pass::kBackwardInput), gather_bytes);
  }
  return out;
}

}  // namespace capsim
