#pragma once

#include "sim/detail/replay_state.hpp"

namespace capsim::sim::detail {

// The bodies of a simulated rank's SimGrid actors, one per stream. Each runs inside the live
// simulation, on the rank's host, and touches only `sim` and `rank`.

// Replays the stage's ops on the compute stream, waits for the rank's collectives, runs the
// optimizer and sets rank.stage_end_s.
void run_compute(Sim& sim, Rank& rank);
// Runs the DP gradient buckets as the compute stream releases them.
void run_dp(Sim& sim, Rank& rank);
// ZeRO-3: gathers each layer's parameters, at most one layer ahead of the compute stream.
void run_gathers(Sim& sim, Rank& rank);
// ZeRO-3: reduce-scatters each layer's gradients as the compute stream produces them.
void run_scatters(Sim& sim, Rank& rank);

// Makes `receiver` (or no actor, when null) the permanent receiver of the rank's incoming PP
// mailboxes.
void set_pp_receiver(Rank& rank, const ActorPtr& receiver);

}  // namespace capsim::sim::detail
