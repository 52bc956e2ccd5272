#include "planner/screen.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "models/gpu_catalog.hpp"
#include "models/instance_catalog.hpp"
#include "models/low_precision.hpp"
#include "models/memory_model.hpp"
#include "planner/failure_model.hpp"
#include "planner/goodput.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "estimate/layout_rules.hpp"
#include "estimate/stage_balance.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"

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

// The (schedule, virtual stages) pairs of the space: interleaving has the space's virtual
// stages, DualPipeV its two chunks, the others one.
std::vector<std::pair<Schedule, int>> schedule_pairs(const SearchSpace& s) {
  std::vector<std::pair<Schedule, int>> out;
  for (Schedule sched : s.schedule) {
    if (sched == Schedule::kDualPipeV) {
      out.emplace_back(sched, 2);
    } else if (sched == Schedule::kInterleaved) {
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

// The schedule a single-stage layout runs: 1F1B when listed; for lists of only interleaved and
// DualPipeV (both need a pipeline) 1F1B too (it stands in for their pipelined layouts at one
// stage), else the first listed one. kInterleaved stands for "1F1B in their place".
Schedule single_stage_schedule(const std::vector<std::pair<Schedule, int>>& pairs) {
  Schedule out = Schedule::kInterleaved;
  for (const auto& [sched, v] : pairs) {
    if (sched == Schedule::kOneFOneB)
      out = sched;
  }
  if (out == Schedule::kInterleaved) {
    for (const auto& [sched, v] : pairs) {
      if (sched != Schedule::kInterleaved && sched != Schedule::kDualPipeV)
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
// sequence-parallel candidates overlap their TP collectives with the GEMMs. A mixture-of-experts
// candidate takes the dispatcher where it has expert ranks to exchange between (else the
// all-to-all, which then moves nothing) and the all-to-all overlap where its preconditions hold.
void apply_stack(const PlanSpec& plan, Parallelism& p) {
  const ModelSpec& model = plan.model;
  const Parallelism& stack = plan.stack;
  p.grad_reduce_precision = stack.grad_reduce_precision;
  p.optimizer_state_precision = stack.optimizer_state_precision;
  p.master_weights = stack.master_weights;
  p.dp_bucket_bytes = stack.dp_bucket_bytes;
  p.dp_buckets_every_chunk = stack.dp_buckets_every_chunk;
  p.overlap_grad_reduce = stack.overlap_grad_reduce || p.zero_stage == 3;
  const bool gathers_parameters = p.zero_stage == 1 || p.zero_stage == 2;
  p.overlap_param_gather = gathers_parameters ? stack.overlap_param_gather : p.overlap_grad_reduce;
  p.fp8_params = candidate_fp8_params(plan, p.precision);
  p.tp_comm_overlap = stack.tp_comm_overlap && p.sequence_parallel;
  p.tp_backward_overlap = stack.tp_backward_overlap;
  p.recompute_modules = stack.recompute_modules;
  const bool exchanges = p.expert * p.expert_tensor_or_default() > 1;
  p.token_dispatcher = exchanges ? stack.token_dispatcher : TokenDispatcher::kAllToAll;
  p.moe_a2a_overlap = stack.moe_a2a_overlap && estimate::moe_a2a_overlap_possible(model, p);
  p.memory_efficient_permutation = stack.memory_efficient_permutation;
  p.activation_input_fp8 = stack.activation_input_fp8;
  p.fp8_attention = stack.fp8_attention;
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
            apply_stack(plan, p);
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

// What a screening thread keeps from layout to layout, across work items.
struct ThreadScratch {
  // Layer costs of the thread's earlier layouts: those of one instance, node count and TP
  // degree repeat each other's, whatever their pipeline (items come in pipeline order within
  // them, enumerate_work).
  estimate::PartCostMemo part_costs;
  IterationCosts costs;  // the last layout's, whose vectors the next one reuses
};

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
  ThreadScratch* scratch = nullptr;
  bool bounds = true;  // PlanOptions::screen_bounds
};

// The throughput at or below which a layout changes nothing, or -inf while it could: a layout
// no faster than the item's slowest kept candidate (keep_best takes a later one only when it
// is strictly faster) that also misses the target counts only as below target.
double useless_tokens_per_s(const std::vector<ScreenedCandidate>& top, const ItemContext& ctx) {
  if (!ctx.bounds || ctx.k == 0 || top.size() < ctx.k)
    return -std::numeric_limits<double>::infinity();
  return std::min(top.back().analytic.tokens_per_s,
                  std::nextafter(ctx.need, -std::numeric_limits<double>::infinity()));
}

// Screens layout `p` (`sc.parallelism`), which fits in memory as `mem` says, keeping the k
// best.
void screen_fitting_layout(ItemResult& out, const Scenario& sc, const Parallelism& p,
                           const MemoryEstimate& mem, long long order, const ItemContext& ctx) {
  IterationCosts& costs = ctx.scratch->costs;
  estimate::compute_iteration_costs(sc, *ctx.profile, &ctx.scratch->part_costs, costs);
  const std::optional<estimate::ScreenEstimate> r = estimate::estimate_iteration_faster_than(
      sc, costs, *ctx.profile, useless_tokens_per_s(out.top, ctx));
  ++out.screened;
  if (!r) {
    ++out.bounded;
    out.pruned.add(PruneReason::kBelowTarget);
    return;
  }
  if (r->tokens_per_s < ctx.need)
    out.pruned.add(PruneReason::kBelowTarget);
  ScreenedCandidate c;
  c.candidate = {ctx.item->instance, ctx.nodes, p, order};
  c.analytic = {"analytic",     r->iteration_time_s, r->tokens_per_s,          r->mfu,
                mem.peak_bytes, mem.capacity_bytes,  r->busiest_over_mean_busy};
  keep_best(out.top, std::move(c), ctx.k);
}

// Prunes or screens one enumerated layout `sc.parallelism`, keeping the k best.
void screen_layout(ItemResult& out, Scenario& sc, const Parallelism& p, long long order,
                   const ItemContext& ctx) {
  ++out.enumerated;
  if (auto reason =
          check_structure(sc.model, sc.cluster, p, ctx.plan->stack_shards_with_pipeline)) {
    out.pruned.add(*reason);
    return;
  }
  sc.parallelism = p;
  if (ctx.failures_outpace_checkpoints) {
    out.pruned.add(PruneReason::kFailures);
    return;
  }
  const MemoryEstimate mem = estimate_memory(sc.model, p, *ctx.gpu, sc.model.attention);
  const double limit_bytes = mem.capacity_bytes - ctx.plan->memory_headroom_bytes;
  if (mem.fits && mem.peak_bytes <= limit_bytes) {
    screen_fitting_layout(out, sc, p, mem, order, ctx);
    return;
  }
  // A pipelined layout whose split does not fit may fit with its layers split otherwise
  // (estimate/stage_balance.hpp).
  const auto split = ctx.plan->space.balance_stages
                         ? estimate::split_that_fits(sc.model, p, *ctx.gpu, limit_bytes, &mem)
                         : std::nullopt;
  if (!split) {
    out.pruned.add(PruneReason::kMemory);
    return;
  }
  Parallelism fitted = p;
  fitted.stage_layers = split->stage_layers;
  sc.parallelism = fitted;
  ++out.fitted_splits;
  screen_fitting_layout(out, sc, fitted, split->memory, order, ctx);
}

ItemResult screen_item(const PlanSpec& plan, const WorkItem& item, long long item_index,
                       const HardwareProfile& profile, size_t k, double need,
                       ThreadScratch& scratch, bool bounds) {
  ItemResult out;
  const InstanceSpec& inst =
      *plan.catalog.find_instance(plan.instances[static_cast<size_t>(item.instance)].name);
  const int nodes = plan.node_counts[static_cast<size_t>(item.nodes_index)];
  const bool outpaced =
      plan.failure && !(failure_slowdown(resolve_for_plan(plan, inst.name, nodes),
                                         nodes * inst.gpus_per_node) <= kMaxFailureSlowdown);
  const ItemContext ctx{.plan = &plan,
                        .item = &item,
                        .profile = &profile,
                        .gpu = &inst.gpu,
                        .nodes = nodes,
                        .k = k,
                        .need = need,
                        .failures_outpace_checkpoints = outpaced,
                        .scratch = &scratch,
                        .bounds = bounds};
  Scenario sc;
  sc.model = plan.model;
  sc.stack = plan.named_stack;
  sc.cluster = cluster_for_instance(
      inst, ctx.nodes, plan.instances[static_cast<size_t>(item.instance)].nvlink_domain);
  const auto pairs = schedule_pairs(plan.space);
  const Schedule single_stage = single_stage_schedule(pairs);
  long long order = item_index << 32;
  Parallelism p;
  p.tensor = item.tensor;
  p.pipeline = item.pipeline;
  // Expert tensor parallelism: the listed degrees, or none (each layout's tensor degree).
  std::vector<std::optional<int>> expert_tensors(plan.space.expert_tensor.begin(),
                                                 plan.space.expert_tensor.end());
  if (expert_tensors.empty())
    expert_tensors.emplace_back(std::nullopt);
  for (int cp : plan.space.context) {
    p.context = cp;
    const int model_parallel = p.tensor * p.pipeline * cp;
    p.data =
        sc.cluster.num_gpus() % model_parallel == 0 ? sc.cluster.num_gpus() / model_parallel : 0;
    for (int ep : plan.space.expert) {
      p.expert = ep;
      for (const std::optional<int>& etp : expert_tensors) {
        p.expert_tensor = etp;
        for (size_t pair = 0; pair < pairs.size(); ++pair) {
          if (!set_schedule(p, pairs, pair, single_stage))
            continue;
          p.stage_layers.clear();
          if (plan.space.uneven_stages &&
              sc.model.num_layers % (p.pipeline * p.virtual_pipeline_stages) != 0) {
            p.stage_layers =
                uneven_stage_layers(sc.model.num_layers, p.pipeline, p.virtual_pipeline_stages);
          }
          for_each_layout_choice(plan, p, [&] {
            choose_micro_batch_group(p);
            screen_layout(out, sc, p, ++order, ctx);
          });
        }
      }
    }
  }
  return out;
}

// What the screening threads share. Each pulls the next item index and writes its result at
// that index, so the merge is deterministic whatever the number of threads.
struct ScreenState {
  const PlanSpec* plan = nullptr;
  const ScreenWork* work = nullptr;
  size_t pool = 0;
  double need = 0.0;
  bool bounds = true;  // PlanOptions::screen_bounds
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
  ThreadScratch scratch;
  for (size_t i = st.next++; i < items.size(); i = st.next++) {
    try {
      const WorkItem& w = items[i];
      const HardwareProfile& prof = st.work->profiles.at(
          {w.instance, st.plan->node_counts[static_cast<size_t>(w.nodes_index)] > 1});
      st.results[i] = screen_item(*st.plan, w, static_cast<long long>(i), prof, st.pool, st.need,
                                  scratch, st.bounds);
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

}  // namespace

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

ScreenWork enumerate_work(const PlanSpec& plan) {
  ScreenWork work;
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    const InstanceSpec& inst = *plan.catalog.find_instance(plan.instances[i].name);
    for (size_t n = 0; n < plan.node_counts.size(); ++n) {
      const auto key = std::make_pair(static_cast<int>(i), plan.node_counts[n] > 1);
      if (work.profiles.count(key) == 0) {
        Scenario probe;
        probe.model = plan.model;
        probe.cluster =
            cluster_for_instance(inst, plan.node_counts[n], plan.instances[i].nvlink_domain);
        probe.profile_path = plan.instances[i].profile_path;
        probe.stack = plan.named_stack;
        work.profiles.emplace(key, io::resolve_profile(probe));
      }
      for (int t : plan.space.tensor) {
        for (int pp : plan.space.pipeline)
          work.items.push_back({static_cast<int>(i), static_cast<int>(n), t, pp});
      }
    }
  }
  return work;
}

std::vector<ItemResult> screen_all(const PlanSpec& plan, const ScreenWork& work, size_t pool,
                                   double need, const PlanOptions& options) {
  ScreenState st;
  st.plan = &plan;
  st.work = &work;
  st.pool = pool;
  st.need = need;
  st.bounds = options.screen_bounds;
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

}  // namespace capsim::planner
