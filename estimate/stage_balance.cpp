#include "estimate/stage_balance.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "models/memory_model.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "estimate/leaf_uplinks.hpp"

namespace capsim::estimate {
namespace {

struct Timed {
  double iteration_s = 0.0;
  bool fits = false;
  double peak_bytes = 0.0;
  std::vector<double> stage_busy_s;
};

Timed timed(const SimulationResult& r) {
  return {r.iteration_time_s, r.memory.fits, r.memory.peak_bytes, r.breakdown.stage_busy_s};
}

Timed time_split(Scenario& scenario, const HardwareProfile& profile,
                 const std::vector<int>& split) {
  scenario.parallelism.stage_layers = split;
  return timed(estimate_iteration(scenario, profile));
}

// The split one layer moved `from` -> `to` gives.
std::vector<int> moved(std::vector<int> split, size_t from, size_t to) {
  --split[from];
  ++split[to];
  return split;
}

// Whether two chunks cost the same, wherever in the model their layers sit.
bool same_chunk(const ChunkCosts& a, const ChunkCosts& b) {
  return a.num_layers == b.num_layers && a.has_embedding == b.has_embedding &&
         a.has_head == b.has_head && a.forward_compute_s == b.forward_compute_s &&
         a.forward_tp_comm_s == b.forward_tp_comm_s && a.forward_cp_comm_s == b.forward_cp_comm_s &&
         a.backward_input_s == b.backward_input_s && a.backward_weight_s == b.backward_weight_s &&
         a.backward_tp_comm_s == b.backward_tp_comm_s &&
         a.backward_cp_comm_s == b.backward_cp_comm_s && a.recompute_s == b.recompute_s &&
         a.recompute_tp_comm_s == b.recompute_tp_comm_s &&
         a.activation_bytes == b.activation_bytes && a.parameter_count == b.parameter_count &&
         a.layer_parameter_count == b.layer_parameter_count &&
         a.forward_ep_comm_s == b.forward_ep_comm_s &&
         a.backward_ep_comm_s == b.backward_ep_comm_s &&
         a.paired_forward_ep_comm_s == b.paired_forward_ep_comm_s &&
         a.paired_backward_ep_comm_s == b.paired_backward_ep_comm_s &&
         a.expert_parameter_count == b.expert_parameter_count;
}

bool same_stage(const StageCosts& a, const StageCosts& b) {
  return a.parameter_count == b.parameter_count && a.optimizer_s == b.optimizer_s &&
         a.expert_dp_s == b.expert_dp_s &&
         std::equal(a.chunks.begin(), a.chunks.end(), b.chunks.begin(), b.chunks.end(), same_chunk);
}

// What the estimator sees of one move's destination apart from where it sits in its run of
// alike stages: the destination stage's costs, and what makes its place special (an end of the
// pipeline, next to the stage the layer leaves, on which side of it, pipeline hops that leave a
// leaf switch). A move that changes any other stage's costs (layers of unlike cost shift between
// stages) is a class of its own.
struct DestinationKey {
  bool alone = false;
  StageCosts stage;
  std::array<bool, 8> place{};
  [[nodiscard]] bool matches(const DestinationKey& other) const {
    return !alone && !other.alone && place == other.place && same_stage(stage, other.stage);
  }
};

// The allowed destinations of a move off `busiest`, grouped into DestinationKey classes, each in
// index order. The estimate of a class's moves follows where the destination sits monotonically
// (a stage later in the pipeline has more or less slack before the flush, e.g. for its gradient
// reduction), so a few of its members hold its fastest (pick_in_class). Costs and memory only: no
// schedule replay.
template <typename Allowed>
std::vector<std::vector<size_t>> destination_classes(Scenario& trial,
                                                     const HardwareProfile& profile,
                                                     const GpuSpec& gpu,
                                                     const std::vector<int>& split, size_t busiest,
                                                     const Allowed& allowed) {
  trial.parallelism.stage_layers = split;
  const IterationCosts current = compute_iteration_costs(trial, profile);
  const LeafLimitedGroups hops = leaf_limited_groups(trial, current);
  std::vector<DestinationKey> keys;
  std::vector<std::vector<size_t>> classes;
  std::optional<StageCosts> lightened;  // the busiest stage's costs after any homogeneous move
  for (size_t to = 0; to < split.size(); ++to) {
    if (to == busiest)
      continue;
    trial.parallelism.stage_layers = moved(split, busiest, to);
    if (!allowed(estimate_memory(trial.model, trial.parallelism, gpu, trial.model.attention)))
      continue;
    const IterationCosts costs = compute_iteration_costs(trial, profile);
    DestinationKey key;
    for (size_t s = 0; s < split.size() && !key.alone; ++s) {
      if (s != to && s != busiest)
        key.alone = !same_stage(costs.stages[s], current.stages[s]);
    }
    if (!key.alone) {
      if (!lightened)
        lightened = costs.stages[busiest];
      key.alone = !same_stage(costs.stages[busiest], *lightened);
    }
    const int st = static_cast<int>(to);
    key.stage = costs.stages[to];
    key.place = {to == 0,
                 to + 1 == split.size(),
                 to < busiest,
                 to + 1 == busiest || to == busiest + 1,
                 hops.forward_crosses(st),
                 hops.backward_crosses(st),
                 hops.forward_crosses(st - 1),
                 hops.backward_crosses(st + 1)};
    const auto match = std::find_if(keys.begin(), keys.end(),
                                    [&](const DestinationKey& k) { return k.matches(key); });
    if (match == keys.end()) {
      keys.push_back(std::move(key));
      classes.push_back({to});
    } else {
      classes[static_cast<size_t>(match - keys.begin())].push_back(to);
    }
  }
  return classes;
}

// The members of a destination class worth timing, given a function that times a member. The
// estimate runs monotonically along a class: when the first member is no slower than the last,
// the first is the fastest; otherwise the estimate falls to the last's, and a binary search finds
// the first member that reaches it (the one a scan in index order keeps).
template <typename TimeOf>
std::vector<size_t> pick_in_class(const std::vector<size_t>& members, const TimeOf& time_of) {
  const size_t first = members.front();
  const size_t last = members.back();
  if (members.size() == 1)
    return {first};
  const double floor_s = time_of(last).iteration_s;
  // Within rounding of the floor: the same estimate summed in another order.
  const auto at_floor = [&](size_t to) {
    return time_of(to).iteration_s <= floor_s * (1.0 + 1e-12);
  };
  if (at_floor(first))
    return {first, last};
  size_t lo = 0;                   // members[lo] is above the floor
  size_t hi = members.size() - 1;  // members[hi] is at it
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (at_floor(members[mid]) ? hi : lo) = mid;
  }
  return {first, members[hi], last};
}

}  // namespace

std::optional<FittedSplit> split_that_fits(const ModelSpec& model, const Parallelism& parallelism,
                                           const GpuSpec& gpu, double max_peak_bytes,
                                           const MemoryEstimate* current) {
  const int p = parallelism.pipeline;
  if (p <= 1)
    return std::nullopt;
  Parallelism trial = parallelism;
  trial.stage_layers = layers_per_stage(model, parallelism);
  const MemoryEstimate at =
      current != nullptr ? *current : estimate_memory(model, trial, gpu, model.attention);
  if (at.peak_bytes <= max_peak_bytes)
    return std::nullopt;
  // A stage's memory grows linearly with its own layers (their weights, gradients, optimizer
  // state and activations; how many micro-batches it holds depends on its place in the
  // pipeline, not on its layers), so one more layer on every stage gives each stage's slope,
  // and with it the most layers each can hold.
  Parallelism more = trial;
  for (int& layers : more.stage_layers)
    ++layers;
  const MemoryEstimate above = estimate_memory(model, more, gpu, model.attention);
  std::vector<int> most(static_cast<size_t>(p));
  long long room = 0;
  for (size_t s = 0; s < most.size(); ++s) {
    const double slope = above.stages[s].total_bytes() - at.stages[s].total_bytes();
    if (!(slope > 0.0))
      return std::nullopt;
    // Clamped so that a tiny slope cannot overflow the int: no stage holds more than the model.
    const double spare_layers =
        std::clamp(std::floor((max_peak_bytes - at.stages[s].total_bytes()) / slope),
                   -static_cast<double>(model.num_layers), static_cast<double>(model.num_layers));
    most[s] = trial.stage_layers[s] + static_cast<int>(spare_layers);
    if (most[s] < least_stage_layers(parallelism.schedule, parallelism.virtual_pipeline_stages,
                                     static_cast<int>(s)))
      return std::nullopt;
    room += most[s];
  }
  if (room < model.num_layers)
    return std::nullopt;
  // The layers over a stage's most go, one at a time, to the stage with the most room left.
  std::vector<int>& split = trial.stage_layers;
  int excess = 0;
  for (size_t s = 0; s < split.size(); ++s) {
    excess += std::max(0, split[s] - most[s]);
    split[s] = std::min(split[s], most[s]);
  }
  for (; excess > 0; --excess) {
    size_t roomiest = 0;
    for (size_t s = 1; s < split.size(); ++s) {
      if (most[s] - split[s] > most[roomiest] - split[roomiest])
        roomiest = s;
    }
    ++split[roomiest];
  }
  // The interleaved schedule's chunks make the slope a little uneven: check the split itself.
  MemoryEstimate memory = estimate_memory(model, trial, gpu, model.attention);
  if (memory.peak_bytes > max_peak_bytes)
    return std::nullopt;
  return FittedSplit{std::move(split), std::move(memory)};
}

std::optional<StageBalance> balance_stage_layers(const Scenario& scenario,
                                                 const HardwareProfile& profile,
                                                 std::optional<double> max_peak_bytes,
                                                 double max_work, const SimulationResult* current) {
  const int p = scenario.parallelism.pipeline;
  if (p <= 1)
    return std::nullopt;
  Scenario trial = scenario;
  std::vector<int> split = layers_per_stage(scenario.model, scenario.parallelism);
  // The scenario's split, given explicitly, is estimated as the scenario itself is.
  Timed best = current != nullptr ? timed(*current) : time_split(trial, profile, split);
  const double current_s = best.iteration_s;
  const bool current_fits = best.fits;
  const GpuSpec& gpu = scenario.cluster.gpu;
  if (!max_peak_bytes && !best.fits) {
    if (auto fitting =
            split_that_fits(scenario.model, scenario.parallelism, gpu, gpu.hbm_capacity_bytes)) {
      split = std::move(fitting->stage_layers);
      best = time_split(trial, profile, split);
    }
  }
  const bool must_fit = max_peak_bytes.has_value() || best.fits;
  const auto allowed = [&](const MemoryEstimate& m) {
    return !must_fit || (max_peak_bytes ? m.peak_bytes <= *max_peak_bytes : m.fits);
  };
  // Under 1F1B and GPipe (blocking sends, one chunk per stage) a class's estimate runs
  // monotonically along it; the overlapped sends of the interleaved and zero-bubble schedules
  // make it rise and fall, so there every allowed destination is timed.
  const bool shortcut = scenario.parallelism.schedule == Schedule::kOneFOneB ||
                        scenario.parallelism.schedule == Schedule::kGpipe;
  // What one timing costs (the layers lowered, the schedule's steps replayed) and what the
  // search may spend: where every destination is timed, the cost grows with the cube of the
  // depth, so a deep pipeline stops at `max_work` with the best split found so far.
  const Parallelism& par = scenario.parallelism;
  const double timing_work = scenario.model.num_layers + static_cast<double>(p) *
                                                             par.num_micro_batches() *
                                                             par.virtual_pipeline_stages;
  double work = 0.0;
  bool capped = false;
  // Each accepted move makes the estimate strictly faster, so the search ends; the bound only
  // guards against rounding.
  for (int moves = 0; moves < scenario.model.num_layers && !capped; ++moves) {
    const auto busiest =
        static_cast<size_t>(std::max_element(best.stage_busy_s.begin(), best.stage_busy_s.end()) -
                            best.stage_busy_s.begin());
    if (split[busiest] <=
        least_stage_layers(par.schedule, par.virtual_pipeline_stages, static_cast<int>(busiest)))
      break;
    // Destinations whose moves the estimator sees alike but for where the stage sits; a few
    // timings per class find the first of its fastest (pick_in_class).
    std::map<size_t, Timed> timed;
    const auto time_of = [&](size_t to) -> const Timed& {
      auto it = timed.find(to);
      if (it == timed.end()) {
        work += timing_work;
        it = timed.emplace(to, time_split(trial, profile, moved(split, busiest, to))).first;
      }
      return it->second;
    };
    std::vector<size_t> destinations;
    for (const auto& members : destination_classes(trial, profile, gpu, split, busiest, allowed)) {
      if (!shortcut) {
        destinations.insert(destinations.end(), members.begin(), members.end());
        continue;
      }
      for (const size_t to : pick_in_class(members, time_of))
        destinations.push_back(to);
    }
    std::sort(destinations.begin(), destinations.end());
    // The moves in index order, each taken when it beats the best so far (ties keep the first).
    std::optional<size_t> best_to;
    Timed best_moved = best;
    for (const size_t to : destinations) {
      if (work >= max_work && !timed.contains(to)) {
        capped = true;
        break;
      }
      const Timed& t = time_of(to);
      if (t.iteration_s < best_moved.iteration_s * (1.0 - 1e-9)) {
        best_moved = t;
        best_to = to;
      }
    }
    if (!best_to)
      break;
    split = moved(split, busiest, *best_to);
    best = best_moved;
  }
  const bool made_fit = best.fits && !current_fits;
  if (!made_fit && best.iteration_s >= current_s * (1.0 - 1e-9))
    return std::nullopt;
  return StageBalance{split,     best.iteration_s, current_s, best.peak_bytes,
                      best.fits, current_fits,     capped};
}

}  // namespace capsim::estimate
