#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/validation_io.hpp"

namespace capsim::io {

// Measured runs of one model on one cluster that differ only in layout, and how well capsim
// orders them: what a planner needs, since it picks the best of many layouts.
struct LayoutRanking {
  std::string label;          // "<model> on <GPUs> x <GPU>"
  std::vector<size_t> cases;  // indices into the ranked cases, in input order
  size_t layouts = 0;         // distinct parallelism sections among them
  // Spearman's rank correlation of predicted and measured throughput (tokens per second).
  double spearman = 0.0;
  size_t pick = 0;  // the case capsim predicts fastest
  size_t best = 0;  // the case measured fastest
  // How much more time per token the pick measured than the best did (0 when capsim picks it).
  double pick_cost_pct = 0.0;
};

// Groups `cases` (with `predicted_s[i]` the prediction of cases[i]) by model and cluster and
// ranks each group of at least `min_layouts` distinct layouts (two: whether capsim orders a
// pair right), in order of first appearance.
// Throughput is global batch x sequence length / iteration time, so runs of one group at
// different global batches compare fairly (the GPU count is the group's).
[[nodiscard]] std::vector<LayoutRanking> rank_layouts(
    const std::vector<const ValidationCase*>& cases, const std::vector<double>& predicted_s,
    size_t min_layouts = 2);

}  // namespace capsim::io
