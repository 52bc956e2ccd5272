#include "estimate/zero3_streams.hpp"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "models/overlap.hpp"

namespace capsim {
namespace {

constexpr int kLayers = 8;

estimate::Zero3Collectives collectives(double latency_s, double gather_wire_s,
                                       double scatter_wire_s) {
  return {latency_s, gather_wire_s, latency_s, scatter_wire_s};
}

// A forward (gathers) and a backward (gathers and scatters), each of kLayers layers.
std::vector<estimate::Zero3Pass> forward_backward(double forward_s, double backward_s) {
  return {{forward_s, 0.0, true, false}, {backward_s, 0.0, true, true}};
}

TEST(Zero3StreamsTest, FreeCollectivesExposeNothing) {
  const estimate::Zero3Play play =
      estimate::play_zero3_streams(forward_backward(1.0, 2.0), kLayers, collectives(0, 0, 0), 0.8);
  ASSERT_EQ(play.exposed_s.size(), 2U);
  EXPECT_DOUBLE_EQ(play.exposed_s[0], 0.0);
  EXPECT_DOUBLE_EQ(play.exposed_s[1], 0.0);
  EXPECT_DOUBLE_EQ(play.once_s, 0.0);
}

// Compute-bound at full speed beside collectives: every gather but a micro-batch's first is
// prefetched behind the previous layer and every scatter but its last hides behind the next.
// Each micro-batch pays its first gather (nothing prefetches across the end of a backward) and
// its last scatter (the backward waits for the stream to drain), as FSDP and DeepSpeed
// synchronise their streams per micro-batch; nothing is left for the iteration's end.
TEST(Zero3StreamsTest, ComputeBoundPaysEachMicroBatchsFirstGatherAndLastScatter) {
  const estimate::Zero3Play play = estimate::play_zero3_streams(
      forward_backward(0.08, 0.16), kLayers, collectives(0.0001, 0.0009, 0.0019), 1.0);
  EXPECT_NEAR(play.exposed_s[0], 0.001, 1e-12);
  EXPECT_NEAR(play.exposed_s[1], 0.002, 1e-12);
  EXPECT_NEAR(play.once_s, 0.0, 1e-12);
}

// FSDP's root unit (embedding, final norm, output layer) is gathered once per micro-batch,
// before the forward's first layer, and reduce-scattered after the backward's last: compute-
// bound, the forward pays the root's gather and then the first layer's, the backward its last
// layer's scatter and then the root's; nothing of the root is gathered again in the backward.
TEST(Zero3StreamsTest, RootUnitIsGatheredOncePerMicroBatch) {
  estimate::Zero3Collectives c = collectives(0.0001, 0.0009, 0.0019);
  c.root_gather_latency_s = 0.0001;
  c.root_gather_wire_s = 0.0049;
  c.root_scatter_latency_s = 0.0001;
  c.root_scatter_wire_s = 0.0099;
  std::vector<estimate::Zero3Pass> passes = forward_backward(0.08, 0.16);
  passes[0].root_gather = true;
  passes[1].root_scatter = true;
  const estimate::Zero3Play play = estimate::play_zero3_streams(passes, kLayers, c, 1.0);
  EXPECT_NEAR(play.exposed_s[0], 0.005 + 0.001, 1e-12);
  EXPECT_NEAR(play.exposed_s[1], 0.002 + 0.01, 1e-12);
  EXPECT_NEAR(play.once_s, 0.0, 1e-12);
}

// One stream, compute-bound, compute slowed beside it: each layer is stretched exactly as
// overlap.hpp's closed form says (the gather of layer k + 1 runs beside layer k).
TEST(Zero3StreamsTest, OneStreamBesideComputeMatchesTheOverlapClosedForm) {
  const double layer_s = 0.01;
  const double gather_s = 0.004;
  const double rate = 0.75;
  const estimate::Zero3Play play = estimate::play_zero3_streams(
      {{kLayers * layer_s, 0.0, true, false}}, kLayers, collectives(0.0, gather_s, 0.0), rate);
  EXPECT_NEAR(play.exposed_s[0], kLayers * overlapped_exposed_s(gather_s, layer_s, rate), 1e-12);
}

// One stream, comm-bound: the gathers run back to back and pace the layers.
TEST(Zero3StreamsTest, CommBoundGathersPaceTheLayers) {
  const double gather_s = 0.01;
  const estimate::Zero3Play play =
      estimate::play_zero3_streams({{kLayers * 0.002, 0.001 * kLayers, true, false}}, kLayers,
                                   collectives(0.002, 0.008, 0.0), 0.5);
  EXPECT_NEAR(play.exposed_s[0], kLayers * gather_s - kLayers * 0.003, 1e-12);
}

// Two streams' bytes on one link: when both are on the wire each gets half of it, so a
// comm-bound backward moves the sum of their bytes per layer.
TEST(Zero3StreamsTest, TwoStreamsShareTheLink) {
  const double wire_s = 0.01;
  const estimate::Zero3Play play = estimate::play_zero3_streams(
      {{kLayers * 1e-4, 0.0, true, true}}, kLayers, collectives(0.0, wire_s, wire_s), 1.0);
  EXPECT_NEAR(play.exposed_s[0] + kLayers * 1e-4, kLayers * 2.0 * wire_s, 0.01 * wire_s);
}

// Whether the latencies hide depends on how the two streams' phases fall. A layer's gather
// starts as the previous layer starts computing, its scatter as that layer ends. With almost no
// compute between them both latencies pass together and each layer costs the bytes plus one
// latency; with compute as long as a latency, each stream's latency passes while the other's
// bytes move and a layer costs the bytes alone.
TEST(Zero3StreamsTest, LatenciesHideOnlyWhenThePhasesInterleave) {
  const double latency_s = 0.002;
  const double wire_s = 0.01;
  // Per layer in the middle of a pass: the difference between passes of 16 and 8 layers (the
  // pass's first gather and its drain cost the same in both).
  const auto per_layer_s = [&](double compute_s) {
    const auto exposed = [&](int layers) {
      return estimate::play_zero3_streams({{layers * compute_s, 0.0, true, true}}, layers,
                                          collectives(latency_s, wire_s, wire_s), 1.0)
          .exposed_s[0];
    };
    return (exposed(2 * kLayers) - exposed(kLayers)) / kLayers + compute_s;
  };
  EXPECT_NEAR(per_layer_s(1e-6), 2.0 * wire_s + latency_s, 1e-5);
  EXPECT_NEAR(per_layer_s(latency_s), 2.0 * wire_s, 1e-9);
}

// Reduce-scatters with more bytes than the gathers leave them cannot fall behind from one
// micro-batch to the next: each backward waits for them to drain, so the link paces the
// micro-batch, every byte of it on the link, and nothing is left for the iteration's end.
TEST(Zero3StreamsTest, ScattersDrainEveryMicroBatch) {
  const double gather_s = 0.01;
  const double scatter_s = 0.05;
  const estimate::Zero3Play play =
      estimate::play_zero3_streams(forward_backward(kLayers * 1e-4, kLayers * 1e-4), kLayers,
                                   collectives(0.0, gather_s, scatter_s), 1.0);
  const double cycle_s = play.exposed_s[0] + play.exposed_s[1] + 2.0 * kLayers * 1e-4;
  EXPECT_NEAR(cycle_s, kLayers * (2.0 * gather_s + scatter_s), 1e-9);
  EXPECT_NEAR(play.once_s, 0.0, 1e-12);
}

// Bounds on one steady cycle of a play: its compute and comm alone, the bytes both streams put
// on the one link, and everything run one after another at the slowed rate.
struct CycleBounds {
  double work_s = 0.0;
  double link_s = 0.0;
  double serial_s = 0.0;
};

CycleBounds cycle_bounds(const std::vector<estimate::Zero3Pass>& passes, int layers,
                         const estimate::Zero3Collectives& c, double rate) {
  CycleBounds b;
  for (const estimate::Zero3Pass& pass : passes) {
    const double gathers = pass.gathers ? layers : 0.0;
    const double scatters = pass.scatters ? layers : 0.0;
    b.work_s += pass.compute_s + pass.comm_s;
    b.link_s += gathers * c.gather_wire_s + scatters * c.scatter_wire_s;
    b.serial_s += pass.compute_s / rate + pass.comm_s +
                  gathers * (c.gather_latency_s + c.gather_wire_s) +
                  scatters * (c.scatter_latency_s + c.scatter_wire_s);
  }
  return b;
}

// Laws on random inputs: exposure is never negative, and a cycle lies within those bounds.
TEST(Zero3StreamsTest, CycleIsBoundedByTheLinkAndBySerialExecution) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 500; ++trial) {
    const int layers = 1 + static_cast<int>(u(rng) * 12);
    const bool split = u(rng) < 0.3;
    std::vector<estimate::Zero3Pass> passes{{u(rng), 0.2 * u(rng), true, false},
                                            {u(rng), 0.2 * u(rng), true, !split}};
    if (split)
      passes.push_back({u(rng), 0.0, false, true});
    const estimate::Zero3Collectives c{0.01 * u(rng), 0.3 * u(rng), 0.01 * u(rng), 0.3 * u(rng)};
    const double rate = 0.2 + 0.8 * u(rng);
    const estimate::Zero3Play play = estimate::play_zero3_streams(passes, layers, c, rate);
    const CycleBounds bounds = cycle_bounds(passes, layers, c, rate);
    double exposed_s = 0.0;
    for (double e : play.exposed_s) {
      EXPECT_GE(e, -1e-12) << trial;
      exposed_s += e;
    }
    const double cycle_s = bounds.work_s + exposed_s;
    EXPECT_GE(cycle_s, std::max(bounds.work_s, bounds.link_s) - 1e-9) << trial;
    EXPECT_LE(cycle_s, bounds.serial_s + 1e-9) << trial;
  }
}

}  // namespace
}  // namespace capsim
