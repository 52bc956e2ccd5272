#include "planner/planner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include "models/analytic_estimator.hpp"
#include "models/gpu_catalog.hpp"
#include "models/instance_catalog.hpp"
#include "models/io/profile_io.hpp"
#include "models/io/scenario_io.hpp"
#include "models/iteration_model.hpp"
#include "models/memory_model.hpp"
#include "planner/failure_model.hpp"

namespace capsim::planner {
namespace {

// Starts `body` on a new thread; false when the system cannot start one (std::system_error),
// so the caller goes on with the threads it has instead of terminating.
template <typename Body>
bool start_thread(std::vector<std::thread>& threads, Body&& body) {
  try {
    threads.emplace_back(std::forward<Body>(body));
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

using Clock = std::chrono::steady_clock;

// Groups whose best analytic throughput is within this factor of the target are confirmed:
// the event engine can disagree with the screen, so near-misses get their chance.
constexpr double kConfirmSlack = 0.9;
// When no group comes near the target, the fastest few are still confirmed and reported.
constexpr size_t kFallbackGroups = 3;

// One unit of screening work: a (tensor, pipeline) pair on one (instance, node count).
struct WorkItem {
  int instance = 0;
  int nodes_index = 0;
  int tensor = 1;
  int pipeline = 1;
};

struct ItemResult {
  PruneCounts pruned;
  long long enumerated = 0;
  long long screened = 0;
  std::vector<ScreenedCandidate> top;  // best K by analytic throughput
};

// True when a beats b: higher throughput, then earlier in enumeration order.
bool faster(const ScreenedCandidate& a, const ScreenedCandidate& b) {
  if (a.analytic.tokens_per_s != b.analytic.tokens_per_s) {
    return a.analytic.tokens_per_s > b.analytic.tokens_per_s;
  }
  return a.candidate.order < b.candidate.order;
}

void keep_best(std::vector<ScreenedCandidate>& top, ScreenedCandidate c, size_t k) {
  if (top.size() == k && !faster(c, top.back()))
    return;
  top.insert(std::upper_bound(top.begin(), top.end(), c, faster), std::move(c));
  if (top.size() > k)
    top.pop_back();
}

// Candidates kept per group before choosing the K to confirm: enough to find K distinct meshes.
constexpr size_t kPoolFactor = 8;

// The part of a layout that decides its communication pattern; confirming K candidates that
// differ here guards against the screen misjudging contention better than K that differ only in
// recompute, ZeRO stage or sequence parallelism.
std::tuple<int, int, int, int, int, int, Schedule> mesh_key(const Parallelism& p) {
  return {p.tensor,           p.pipeline,          p.context, p.virtual_pipeline_stages,
          p.micro_batch_size, p.global_batch_size, p.schedule};
}

// Returns the K to confirm from a group's pool (sorted fastest first): the fastest of each
// distinct mesh first, then the fastest of the rest.
std::vector<ScreenedCandidate> choose_for_confirmation(std::vector<ScreenedCandidate> pool,
                                                       size_t k) {
  std::vector<ScreenedCandidate> chosen;
  std::vector<ScreenedCandidate> rest;
  std::set<std::tuple<int, int, int, int, int, int, Schedule>> seen;
  for (auto& c : pool) {
    if (chosen.size() < k && seen.insert(mesh_key(c.candidate.parallelism)).second) {
      chosen.push_back(std::move(c));
    } else {
      rest.push_back(std::move(c));
    }
  }
  for (size_t i = 0; i < rest.size() && chosen.size() < k; ++i)
    chosen.push_back(std::move(rest[i]));
  std::sort(chosen.begin(), chosen.end(), faster);
  return chosen;
}

// The (schedule, virtual stages) pairs of the space: only interleaving has virtual stages.
std::vector<std::pair<Schedule, int>> schedule_pairs(const SearchSpace& s) {
  std::vector<std::pair<Schedule, int>> out;
  for (Schedule sched : s.schedule) {
    if (sched == Schedule::kInterleaved) {
      for (int v : s.virtual_pipeline_stages) {
        if (v > 1)
          out.emplace_back(sched, v);
      }
    } else {
      out.emplace_back(sched, 1);
    }
  }
  return out;
}

double required_tokens_per_s(const PlanSpec& plan) {
  double need = plan.min_tokens_per_s;
  if (plan.deadline_s > 0.0)
    need = std::max(need, plan.tokens / plan.deadline_s);
  return need;
}

// The schedule a single-stage layout runs: 1F1B when listed; for interleaved-only lists 1F1B
// too (it stands in for their pipelined layouts at one stage), else the first listed one.
Schedule single_stage_schedule(const std::vector<std::pair<Schedule, int>>& pairs) {
  Schedule out = Schedule::kInterleaved;
  for (const auto& [sched, v] : pairs) {
    if (sched == Schedule::kOneFOneB)
      out = sched;
  }
  if (out == Schedule::kInterleaved) {
    for (const auto& [sched, v] : pairs) {
      if (sched != Schedule::kInterleaved)
        return sched;
    }
  }
  return out;
}

// Sets `p`'s schedule from pair `pair`, or returns false when that pair is not a distinct
// layout: without a pipeline every schedule is the same layout, so one is kept.
bool set_schedule(Parallelism& p, const std::vector<std::pair<Schedule, int>>& pairs, size_t pair,
                  Schedule single_stage) {
  auto [sched, v] = pairs[pair];
  if (p.pipeline == 1) {
    if (single_stage == Schedule::kInterleaved) {
      if (pair > 0)
        return false;
      sched = Schedule::kOneFOneB;
      v = 1;
    } else if (sched != single_stage || v > 1) {
      return false;
    }
  }
  p.schedule = sched;
  p.virtual_pipeline_stages = v;
  return true;
}

// Gives `p` (its ZeRO stage, precision and sequence parallelism set) the plan's stack settings.
// The overlap flags and fp8 parameters apply where they exist, as a scenario states them: ZeRO-3
// reduce-scatters each layer's gradients as the backward produces them, only ZeRO-1/2 gather
// parameters after the step, only fp8 candidates have fp8 parameters, and only
// sequence-parallel candidates overlap their TP collectives with the GEMMs.
void apply_stack(const Parallelism& stack, Parallelism& p) {
  p.grad_reduce_precision = stack.grad_reduce_precision;
  p.optimizer_state_precision = stack.optimizer_state_precision;
  p.master_weights = stack.master_weights;
  p.dp_bucket_bytes = stack.dp_bucket_bytes;
  p.dp_buckets_every_chunk = stack.dp_buckets_every_chunk;
  p.overlap_grad_reduce = stack.overlap_grad_reduce || p.zero_stage == 3;
  const bool gathers_parameters = p.zero_stage == 1 || p.zero_stage == 2;
  p.overlap_param_gather = gathers_parameters ? stack.overlap_param_gather : p.overlap_grad_reduce;
  p.fp8_params = stack.fp8_params && p.precision == Precision::kFp8;
  p.tp_comm_overlap = stack.tp_comm_overlap && p.sequence_parallel;
  p.tp_backward_overlap = stack.tp_backward_overlap;
}

// Calls `visit` for every combination of the per-layout choices (micro-batch, recompute, ZeRO,
// sequence parallelism, precision, global batch) in the search's fixed order, with `p` set.
template <class Visit>
void for_each_layout_choice(const PlanSpec& plan, Parallelism& p, Visit&& visit) {
  const SearchSpace& s = plan.space;
  const bool sp_off_listed = std::find(s.sequence_parallel.begin(), s.sequence_parallel.end(),
                                       false) != s.sequence_parallel.end();
  for (int mb : s.micro_batch_size) {
    p.micro_batch_size = mb;
    for (Recompute rc : s.recompute) {
      p.recompute = rc;
      for (int zero : s.zero_stage) {
        p.zero_stage = zero;
        for (bool sp_listed : s.sequence_parallel) {
          // Without TP, sequence parallelism is not a distinct layout (Megatron turns it off):
          // run it once, as off.
          const bool sp = sp_listed && p.tensor > 1;
          if (sp != sp_listed && sp_off_listed)
            continue;
          p.sequence_parallel = sp;
          for (Precision prec : s.precision) {
            p.precision = prec;
            apply_stack(plan.stack, p);
            for (int gbs : plan.global_batch_sizes) {
              p.global_batch_size = gbs;
              visit();
            }
          }
        }
      }
    }
  }
}

// What every layout of one work item shares.
struct ItemContext {
  const PlanSpec* plan = nullptr;
  const WorkItem* item = nullptr;
  const HardwareProfile* profile = nullptr;
  const GpuSpec* gpu = nullptr;
  int nodes = 0;
  size_t k = 0;
  double need = 0.0;
  // Every layout of the item fills the same cluster, so failures outpace its checkpoints for
  // all of them or for none (failure_slowdown depends on the GPU count only).
  bool failures_outpace_checkpoints = false;
};

// Prunes or screens one enumerated layout `sc.parallelism`, keeping the k best.
void screen_layout(ItemResult& out, Scenario& sc, const Parallelism& p, long long order,
                   const ItemContext& ctx) {
  ++out.enumerated;
  if (p.data == 0) {
    out.pruned.add(p.tensor > sc.cluster.gpus_per_node ? PruneReason::kTensorExceedsNode
                                                       : PruneReason::kGpuCount);
    return;
  }
  if (auto reason = check_structure(sc.model, sc.cluster, p)) {
    out.pruned.add(*reason);
    return;
  }
  sc.parallelism = p;
  try {
    check_layout(sc.model, sc.cluster, p, ctx.plan->file, "");
  } catch (const InputError&) {
    out.pruned.add(PruneReason::kInvalidLayout);
    return;
  }
  if (ctx.failures_outpace_checkpoints) {
    out.pruned.add(PruneReason::kFailures);
    return;
  }
  const MemoryEstimate mem = estimate_memory(sc.model, p, *ctx.gpu, sc.model.attention);
  if (!mem.fits || mem.peak_bytes > mem.capacity_bytes - ctx.plan->memory_headroom_bytes) {
    out.pruned.add(PruneReason::kMemory);
    return;
  }
  const IterationCosts costs = compute_iteration_costs(sc, *ctx.profile);
  const SimulationResult r = estimate_iteration(sc, costs, *ctx.profile, &mem);
  ++out.screened;
  if (r.tokens_per_s < ctx.need)
    out.pruned.add(PruneReason::kBelowTarget);
  ScreenedCandidate c;
  c.candidate = {ctx.item->instance, ctx.nodes, p, order};
  c.analytic = {"analytic", r.iteration_time_s, r.tokens_per_s,
                r.mfu,      mem.peak_bytes,     mem.capacity_bytes};
  keep_best(out.top, std::move(c), ctx.k);
}

ItemResult screen_item(const PlanSpec& plan, const WorkItem& item, long long item_index,
                       const HardwareProfile& profile, size_t k, double need) {
  ItemResult out;
  const InstanceSpec& inst =
      *find_instance(plan.instances[static_cast<size_t>(item.instance)].name);
  const int nodes = plan.node_counts[static_cast<size_t>(item.nodes_index)];
  const bool outpaced =
      plan.failure &&
      !(failure_slowdown(*plan.failure, nodes * inst.gpus_per_node) <= kMaxFailureSlowdown);
  const ItemContext ctx{&plan, &item, &profile, find_gpu(inst.gpu), nodes, k, need, outpaced};
  Scenario sc;
  sc.model = plan.model;
  sc.cluster = cluster_for_instance(inst, ctx.nodes);
  const auto pairs = schedule_pairs(plan.space);
  const Schedule single_stage = single_stage_schedule(pairs);
  long long order = item_index << 32;
  Parallelism p;
  p.tensor = item.tensor;
  p.pipeline = item.pipeline;
  for (int cp : plan.space.context) {
    p.context = cp;
    const int model_parallel = p.tensor * p.pipeline * cp;
    p.data =
        sc.cluster.num_gpus() % model_parallel == 0 ? sc.cluster.num_gpus() / model_parallel : 0;
    for (size_t pair = 0; pair < pairs.size(); ++pair) {
      if (!set_schedule(p, pairs, pair, single_stage))
        continue;
      p.stage_layers.clear();
      if (plan.space.uneven_stages &&
          sc.model.num_layers % (p.pipeline * p.virtual_pipeline_stages) != 0) {
        p.stage_layers =
            uneven_stage_layers(sc.model.num_layers, p.pipeline, p.virtual_pipeline_stages);
      }
      for_each_layout_choice(plan, p, [&] { screen_layout(out, sc, p, ++order, ctx); });
    }
  }
  return out;
}

bool entry_before(const RankedEntry& a, const RankedEntry& b, const PlanResult& result,
                  Objective objective, size_t price_a, size_t price_b) {
  if (a.meets_target != b.meets_target)
    return a.meets_target;
  const bool by_time = objective == Objective::kMinTime;
  const double ka = by_time ? a.wall_time_s : a.cost_usd;
  const double kb = by_time ? b.wall_time_s : b.cost_usd;
  if (ka != kb)
    return ka < kb;
  const double sa = by_time ? a.cost_usd : a.wall_time_s;
  const double sb = by_time ? b.cost_usd : b.wall_time_s;
  if (sa != sb)
    return sa < sb;
  const long long oa = result.candidates[a.candidate].candidate.order;
  const long long ob = result.candidates[b.candidate].candidate.order;
  if (oa != ob)
    return oa < ob;
  return price_a < price_b;
}

// Returns every candidate under every pricing option of its instance, sorted by the objective;
// `confirmed` false ranks on the screen's numbers even where the event engine ran.
std::vector<RankedEntry> rank_entries(const PlanSpec& plan, const PlanResult& result,
                                      bool confirmed) {
  std::vector<RankedEntry> entries;
  std::vector<size_t> price_order;
  for (size_t i = 0; i < result.candidates.size(); ++i) {
    const ScreenedCandidate& c = result.candidates[i];
    const Evaluation& e = confirmed ? c.final_evaluation() : c.analytic;
    const auto& prices = plan.instances[static_cast<size_t>(c.candidate.instance)].prices;
    for (size_t pi = 0; pi < prices.size(); ++pi) {
      RankedEntry r;
      r.candidate = i;
      r.price = prices[pi];
      r.time_to_train_s = plan.tokens / e.tokens_per_s;
      r.wall_time_s = r.time_to_train_s;
      if (plan.failure) {
        const FailureOverhead f =
            failure_overhead(*plan.failure, c.candidate.parallelism.num_gpus(), r.time_to_train_s);
        r.wall_time_s = f.expected_wall_s;
        r.checkpoint_interval_s = f.checkpoint_interval_s;
        r.failure_overhead_fraction = f.overhead_fraction;
      }
      r.cost_usd = c.candidate.num_nodes * r.price.usd_per_node_hour *
                   billed_hours(r.price.pricing, r.wall_time_s);
      r.meets_target = (plan.deadline_s <= 0.0 || r.wall_time_s <= plan.deadline_s) &&
                       (plan.min_tokens_per_s <= 0.0 || e.tokens_per_s >= plan.min_tokens_per_s);
      entries.push_back(r);
      price_order.push_back(pi);
    }
  }
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entry_before(entries[a], entries[b], result, plan.objective, price_order[a],
                        price_order[b]);
  });
  std::vector<RankedEntry> sorted;
  sorted.reserve(order.size());
  for (size_t i : order)
    sorted.push_back(entries[i]);
  return sorted;
}

// Profiles per (instance, multi-node): resolving one parses JSON, so each is resolved once.
using ProfileMap = std::map<std::pair<int, bool>, HardwareProfile>;

// True when a shipped profile measured the instance's network (resolve_profile otherwise
// gives a catalog GPU its family's kernels with the datasheet network).
bool has_shipped_network(const InstanceSpec& instance) {
  return !shipped_profile_file(find_gpu(instance.gpu)->architecture, instance.fabric).empty();
}

// The screen's input: the work items in enumeration order and the profiles they use.
struct ScreenWork {
  ProfileMap profiles;
  std::vector<WorkItem> items;
};

// Returns one work item per (instance, node count, tensor, pipeline) in the search's fixed
// order (the order numbers candidates), resolving each profile the first time it is needed.
ScreenWork enumerate_work(const PlanSpec& plan) {
  ScreenWork work;
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    const InstanceSpec& inst = *find_instance(plan.instances[i].name);
    for (size_t n = 0; n < plan.node_counts.size(); ++n) {
      const auto key = std::make_pair(static_cast<int>(i), plan.node_counts[n] > 1);
      if (work.profiles.count(key) == 0) {
        Scenario probe;
        probe.model = plan.model;
        probe.cluster = cluster_for_instance(inst, plan.node_counts[n]);
        probe.profile_path = plan.instances[i].profile_path;
        work.profiles.emplace(key, resolve_profile(probe));
      }
      for (int t : plan.space.tensor) {
        for (int pp : plan.space.pipeline)
          work.items.push_back({static_cast<int>(i), static_cast<int>(n), t, pp});
      }
    }
  }
  return work;
}

// What the screening threads share. Each pulls the next item index and writes its result at
// that index, so the merge is deterministic whatever the number of threads.
struct ScreenState {
  const PlanSpec* plan = nullptr;
  const ScreenWork* work = nullptr;
  size_t pool = 0;
  double need = 0.0;
  std::vector<ItemResult> results;
  std::atomic<size_t> next{0};
  std::atomic<long long> done{0};
  // An exception must not escape a std::thread (that aborts): the first one is kept and
  // rethrown after the join; the other workers stop taking items.
  std::mutex error_mutex;
  std::exception_ptr error;
};

// Keeps the exception being handled when it is the first, and tells the workers to stop.
void keep_first_error(ScreenState& st) {
  const std::lock_guard<std::mutex> lock(st.error_mutex);
  if (!st.error)
    st.error = std::current_exception();
  st.next = st.work->items.size();
}

// Screens items until none is left; runs on every screening thread.
void screen_items(ScreenState& st) {
  const std::vector<WorkItem>& items = st.work->items;
  for (size_t i = st.next++; i < items.size(); i = st.next++) {
    try {
      const WorkItem& w = items[i];
      const HardwareProfile& prof = st.work->profiles.at(
          {w.instance, st.plan->node_counts[static_cast<size_t>(w.nodes_index)] > 1});
      st.results[i] = screen_item(*st.plan, w, static_cast<long long>(i), prof, st.pool, st.need);
    } catch (...) {
      keep_first_error(st);
    }
    ++st.done;
  }
}

// Screens on `jobs` threads while the calling thread redraws the progress every 100 ms.
void screen_with_progress(ScreenState& st, int jobs, const ProgressFn& progress) {
  const auto total = static_cast<long long>(st.work->items.size());
  std::vector<std::thread> threads;
  std::atomic<int> running{jobs};
  for (int j = 0; j < jobs; ++j) {
    if (!start_thread(threads, [&] {
          screen_items(st);
          --running;
        })) {
      running -= jobs - j;  // the system has no more threads: the started ones do the work
      break;
    }
  }
  if (threads.empty())
    screen_items(st);  // not even one: this thread screens, without progress in between
  progress("screen", 0, total);
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (st.done.load() < total)
      progress("screen", st.done.load(), total);
  }
  for (auto& t : threads)
    t.join();
  progress("screen", total, total);
}

// Screens on the calling thread and up to `jobs` - 1 more.
void screen_quietly(ScreenState& st, int jobs) {
  const auto worker = [&st] { screen_items(st); };
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs && start_thread(threads, worker);)
    ++j;
  worker();
  for (auto& t : threads)
    t.join();
}

// Returns each item's k best candidates (k = `pool`), in item order; rethrows the first
// exception a worker met.
std::vector<ItemResult> screen_all(const PlanSpec& plan, const ScreenWork& work, size_t pool,
                                   double need, const PlanOptions& options) {
  ScreenState st;
  st.plan = &plan;
  st.work = &work;
  st.pool = pool;
  st.need = need;
  st.results.resize(work.items.size());
  const int jobs = std::max(1, options.jobs);
  if (options.progress) {
    screen_with_progress(st, jobs, options.progress);
  } else {
    screen_quietly(st, jobs);
  }
  if (st.error)
    std::rethrow_exception(st.error);
  return std::move(st.results);
}

// An (instance, node count) group's key: indices into the plan's instances and node counts.
using GroupKey = std::pair<int, int>;
using Groups = std::map<GroupKey, std::vector<ScreenedCandidate>>;

// Adds the items' counts to `result` and merges their candidates into each group's `pool` best,
// in item order.
Groups merge_into_groups(PlanResult& result, const std::vector<WorkItem>& items,
                         std::vector<ItemResult>& item_results, size_t pool) {
  Groups groups;
  for (size_t i = 0; i < items.size(); ++i) {
    ItemResult& r = item_results[i];
    result.pruned.merge(r.pruned);
    result.enumerated += r.enumerated;
    result.screened += r.screened;
    auto& g = groups[{items[i].instance, items[i].nodes_index}];
    for (auto& c : r.top)
      keep_best(g, std::move(c), pool);
  }
  return groups;
}

// Returns the groups to confirm, in key order: those near the target, else the fastest few
// (and then says so in `notes`).
std::vector<GroupKey> groups_to_confirm(const Groups& groups, double need,
                                        std::vector<std::string>& notes) {
  std::vector<GroupKey> chosen;
  std::vector<std::pair<double, GroupKey>> by_speed;
  for (const auto& [key, g] : groups) {
    if (g.empty())
      continue;
    if (g.front().analytic.tokens_per_s >= kConfirmSlack * need)
      chosen.push_back(key);
    by_speed.emplace_back(-g.front().analytic.tokens_per_s, key);
  }
  if (chosen.empty() && !by_speed.empty()) {
    std::sort(by_speed.begin(), by_speed.end());
    for (size_t i = 0; i < std::min(kFallbackGroups, by_speed.size()); ++i)
      chosen.push_back(by_speed[i].second);
    std::sort(chosen.begin(), chosen.end());
    notes.emplace_back("no configuration comes within 10% of the target; showing the fastest");
  }
  return chosen;
}

// Records the event engine's outcomes on the candidates they belong to (same order).
void apply_confirmations(ConfirmBatch& batch, PlanResult& result) {
  result.confirmations = static_cast<int>(batch.outcomes.size());
  for (size_t i = 0; i < batch.outcomes.size() && i < result.candidates.size(); ++i) {
    ConfirmOutcome& o = batch.outcomes[i];
    ScreenedCandidate& c = result.candidates[i];
    if (!o.ok) {
      c.confirm_error = o.error;
      continue;
    }
    c.confirmed = true;
    c.event = o.evaluation;
    // An event run that reports no capacity keeps the screen's.
    if (c.event.capacity_bytes <= 0.0)
      c.event.capacity_bytes = c.analytic.capacity_bytes;
  }
}

// Runs the event engine on every candidate when a confirm function is set; without one, or
// when the engine is unavailable, a note says the ranking uses the screen's numbers.
void confirm_candidates(const PlanSpec& plan, const PlanOptions& options, PlanResult& result) {
  if (!options.confirm) {
    result.notes.emplace_back("confirmation disabled; ranking uses the analytic screen's numbers");
    return;
  }
  if (result.candidates.empty())
    return;
  std::vector<Scenario> scenarios;
  for (const auto& c : result.candidates)
    scenarios.push_back(candidate_scenario(plan, c.candidate));
  ConfirmBatch batch = options.confirm(scenarios, options.progress);
  result.event_available = batch.available;
  if (batch.available) {
    apply_confirmations(batch, result);
    return;
  }
  result.event_unavailable_reason = batch.reason;
  result.notes.push_back("event engine unavailable (" + batch.reason +
                         "); ranking uses the analytic screen's numbers");
}

// Ranks every candidate under every pricing option of its instance, on the confirmed numbers;
// the same on the screen's numbers alone tells whether confirmation changed the winner.
void rank_candidates(const PlanSpec& plan, PlanResult& result) {
  result.ranked = rank_entries(plan, result, /*confirmed=*/true);
  if (!result.event_available || result.ranked.empty())
    return;
  const std::vector<RankedEntry> screen_only = rank_entries(plan, result, /*confirmed=*/false);
  const RankedEntry& s = screen_only.front();
  const RankedEntry& f = result.ranked.front();
  result.screen_winner_changed = s.candidate != f.candidate || s.price.pricing != f.price.pricing;
  result.screen_winner = s.candidate;
}

// Returns the Pareto front (wall time, cost) of the ranked entries that meet the target, or of
// all of them when none does.
std::vector<RankedEntry> eligible_pareto(const std::vector<RankedEntry>& ranked) {
  std::vector<RankedEntry> eligible;
  for (const auto& r : ranked) {
    if (r.meets_target)
      eligible.push_back(r);
  }
  if (eligible.empty())
    eligible = ranked;
  std::vector<RankedEntry> front;
  for (size_t i : pareto_front(eligible))
    front.push_back(eligible[i]);
  return front;
}

}  // namespace

Scenario candidate_scenario(const PlanSpec& plan, const Candidate& c) {
  const InstanceSpec& inst = *find_instance(plan.instances[static_cast<size_t>(c.instance)].name);
  Scenario sc;
  sc.model = plan.model;
  sc.cluster = cluster_for_instance(inst, c.num_nodes);
  sc.parallelism = c.parallelism;
  sc.profile_path = plan.instances[static_cast<size_t>(c.instance)].profile_path;
  const Parallelism& p = c.parallelism;
  sc.name =
      plan.name + "-" + inst.name + "-" + std::to_string(c.num_nodes) + "n-tp" +
      std::to_string(p.tensor) + "-pp" + std::to_string(p.pipeline) + "-dp" +
      std::to_string(p.data) + (p.context > 1 ? "-cp" + std::to_string(p.context) : "") +
      (p.virtual_pipeline_stages > 1 ? "-vp" + std::to_string(p.virtual_pipeline_stages) : "") +
      (p.stage_layers.empty() ? "" : "-uneven") + "-mb" + std::to_string(p.micro_batch_size) +
      "-gbs" + std::to_string(p.global_batch_size) + "-" + to_string(p.schedule) + "-rc-" +
      to_string(p.recompute) + "-z" + std::to_string(p.zero_stage) +
      (p.sequence_parallel ? "-sp" : "") +
      (p.precision != Precision::kBf16 ? std::string("-") + to_string(p.precision) : "");
  return sc;
}

std::vector<size_t> pareto_front(const std::vector<RankedEntry>& entries) {
  std::vector<size_t> idx(entries.size());
  for (size_t i = 0; i < idx.size(); ++i)
    idx[i] = i;
  // Sweep by wall time (then cost, then input order): keep strictly cheaper ones.
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (entries[a].wall_time_s != entries[b].wall_time_s) {
      return entries[a].wall_time_s < entries[b].wall_time_s;
    }
    return entries[a].cost_usd < entries[b].cost_usd;
  });
  std::vector<size_t> front;
  double best_cost = INFINITY;
  for (size_t i : idx) {
    if (entries[i].cost_usd < best_cost) {
      front.push_back(i);
      best_cost = entries[i].cost_usd;
    }
  }
  return front;
}

PlanResult run_plan(const PlanSpec& plan, const PlanOptions& options) {
  PlanResult result;
  const double need = required_tokens_per_s(plan);
  result.required_tokens_per_s = need;
  const size_t k = static_cast<size_t>(std::max(1, plan.confirm_top_k));
  const size_t pool = k * kPoolFactor;
  const ScreenWork work = enumerate_work(plan);

  const auto t0 = Clock::now();
  std::vector<ItemResult> item_results = screen_all(plan, work, pool, need, options);
  result.screen_wall_s = std::chrono::duration<double>(Clock::now() - t0).count();

  Groups groups = merge_into_groups(result, work.items, item_results, pool);
  for (const auto& key : groups_to_confirm(groups, need, result.notes)) {
    for (auto& c : choose_for_confirmation(std::move(groups[key]), k))
      result.candidates.push_back(std::move(c));
  }

  const auto t1 = Clock::now();
  confirm_candidates(plan, options, result);
  result.confirm_wall_s = std::chrono::duration<double>(Clock::now() - t1).count();

  rank_candidates(plan, result);
  result.pareto = eligible_pareto(result.ranked);
  // What the numbers stand for (docs/validation.md): the shipped in-situ factor is fitted to
  // published runs of 2022-2025 Megatron-LM/NeMo stacks; 2021-2023 stacks ran slower, DeepSpeed
  // ZeRO-3 at scale far slower.
  result.notes.emplace_back(
      "iteration times assume kernels as fast as in published 2022-2025 Megatron-LM/NeMo runs "
      "(the shipped profiles' in-situ factor; older stacks and ZeRO-3 implementations ran slower, "
      "see docs/validation.md); `capsim calibrate step` fits a profile to measured steps of your "
      "stack, and an instance's \"profile\" in the plan uses it");
  const bool multi_node = std::any_of(plan.node_counts.begin(), plan.node_counts.end(),
                                      [](int nodes) { return nodes > 1; });
  for (const InstanceChoice& choice : plan.instances) {
    if (!choice.profile_path.empty())
      continue;
    const InstanceSpec& instance = *find_instance(choice.name);
    if (!is_builtin_instance(choice.name) && !is_builtin_gpu(instance.gpu)) {
      result.notes.push_back(
          "instance " + choice.name +
          ": its GPU is defined in the plan and costed from its datasheet figures (kernels at "
          "benchmark speed, no in-situ factor, not validated); give it a profile fitted to the "
          "hardware (`capsim calibrate fit --gpu-spec`) before comparing it with shipped ones");
    } else if (multi_node && !has_shipped_network(instance)) {
      result.notes.push_back("instance " + choice.name + ": no " + instance.fabric +
                             " measurement of its GPU family ships with capsim, so its "
                             "inter-node collectives come from the datasheet model (kernels "
                             "as its family's shipped profile); `capsim calibrate fit` on "
                             "nccl-tests logs of that network gives them a fit");
    }
  }
  return result;
}

}  // namespace capsim::planner
