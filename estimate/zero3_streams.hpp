#pragma once

#include <vector>

namespace capsim::estimate {

// One op of a model chunk as ZeRO-3 / FSDP runs it, layer by layer.
struct Zero3Pass {
  double compute_s = 0.0;     // all layers' compute; slowed while a collective runs
  double comm_s = 0.0;        // all layers' TP/CP collectives, after each layer's compute
  bool gathers = false;       // each layer first waits for its parameters' all-gather
  bool scatters = false;      // each layer then hands its gradients to the reduce-scatter stream
  bool root_gather = false;   // FSDP's root unit is gathered before the first layer
  bool root_scatter = false;  // and reduce-scattered after the last (a scattering pass)
  double lead_s = 0.0;        // a wait before the first layer (framework overhead) the streams use
  int gather_repeats = 1;     // collectives per layer's gather (a recompute gathering again)
};

// One layer's DP collectives, each split as the event engine runs it: a latency (a timed wait)
// then its bytes on the wire, in seconds at the full rate of the link the two share.
struct Zero3Collectives {
  double gather_latency_s = 0.0;
  double gather_wire_s = 0.0;
  double scatter_latency_s = 0.0;
  double scatter_wire_s = 0.0;
  // FSDP's root unit (embedding, final norm, output layer), gathered once per micro-batch.
  double root_gather_latency_s = 0.0;
  double root_gather_wire_s = 0.0;
  double root_scatter_latency_s = 0.0;
  double root_scatter_wire_s = 0.0;
};

struct Zero3Play {
  std::vector<double> exposed_s;  // per pass, in steady state: its time beyond compute + comm
  // Once per iteration: what the whole play (three cycles, its scatters drained) took beyond
  // three steady cycles, so that M cycles cost M steady ones plus this: the first gather nothing
  // prefetched, the last cycle's missing next gather, the scatters still draining.
  double once_s = 0.0;
};

// Plays a chunk's passes (e.g. forward then backward) over and over as the event engine runs
// ZeRO-3 (sim/iteration_simulator.cpp, compute_zero3, run_gathers, run_scatters): a gather
// stream that prefetches one layer ahead (a layer starting its compute lets the next gather
// start), a reduce-scatter stream fed by each finished backward layer, and compute at
// `compute_rate` while either stream holds SMs (models/overlap.hpp). The two streams' bytes
// share one link equally (max-min fairness with equal weights); their latencies take no
// bandwidth. So whether one stream's latency hides behind the other's bytes depends on how
// their phases fall, which this play follows exactly instead of assuming either.
//
// REQUIRES: layers >= 1, compute_rate in (0, 1], every time >= 0.
[[nodiscard]] Zero3Play play_zero3_streams(const std::vector<Zero3Pass>& passes, int layers,
                                           const Zero3Collectives& collectives,
                                           double compute_rate);

}  // namespace capsim::estimate
