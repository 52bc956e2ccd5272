#include "planner/planner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "models/gpu_catalog.hpp"
#include "models/instance_catalog.hpp"
#include "planner/failure_model.hpp"
#include "planner/goodput.hpp"
#include "planner/screen.hpp"
#include "planner/stage_split.hpp"

#include "io/in_situ_prior.hpp"
#include "io/profile_io.hpp"
#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

using Clock = std::chrono::steady_clock;

// Groups whose best analytic throughput is within this factor of the target are confirmed:
// the event engine can disagree with the screen, so near-misses get their chance.
constexpr double kConfirmSlack = 0.9;
// When no group comes near the target, the fastest few are still confirmed and reported.
constexpr size_t kFallbackGroups = 3;

// Candidates kept per group before choosing the K to confirm: enough to find K distinct meshes.
constexpr size_t kPoolFactor = 8;

// The part of a layout that decides its communication pattern; confirming K candidates that
// differ here guards against the screen misjudging contention better than K that differ only in
// recompute, ZeRO stage or sequence parallelism.
using MeshKey = std::tuple<int, int, int, int, int, int, Schedule, int, int>;
MeshKey mesh_key(const Parallelism& p) {
  return {p.tensor,
          p.pipeline,
          p.context,
          p.virtual_pipeline_stages,
          p.micro_batch_size,
          p.global_batch_size,
          p.schedule,
          p.expert,
          p.expert_tensor_or_default()};
}

// A group's pool split into the K to confirm first and the rest, each sorted fastest first.
struct ConfirmChoice {
  std::vector<ScreenedCandidate> chosen;
  std::vector<ScreenedCandidate> rest;
};

// Returns the K to confirm from a group's pool (sorted fastest first): the fastest of each
// distinct mesh first, then the fastest of the rest.
ConfirmChoice choose_for_confirmation(std::vector<ScreenedCandidate> pool, size_t k) {
  ConfirmChoice out;
  std::vector<ScreenedCandidate> others;
  std::set<MeshKey> seen;
  for (auto& c : pool) {
    if (out.chosen.size() < k && seen.insert(mesh_key(c.candidate.parallelism)).second) {
      out.chosen.push_back(std::move(c));
    } else {
      others.push_back(std::move(c));
    }
  }
  for (auto& c : others) {
    (out.chosen.size() < k ? out.chosen : out.rest).push_back(std::move(c));
  }
  std::sort(out.chosen.begin(), out.chosen.end(), faster);
  return out;
}

double required_tokens_per_s(const PlanSpec& plan) {
  double need = plan.min_tokens_per_s;
  if (plan.deadline_s > 0.0)
    need = std::max(need, plan.tokens / plan.deadline_s);
  return need;
}

// Returns the failure-free time to train the plan's tokens: whole iterations, the last one run
// in full however few of its tokens are needed (an iteration trains global batch x sequence
// tokens). Through the throughput, so that a whole number of iterations gives tokens / throughput.
double time_to_train_s(const PlanSpec& plan, const Parallelism& p, const Evaluation& e) {
  const double tokens_per_iteration =
      static_cast<double>(p.global_batch_size) * static_cast<double>(plan.model.seq_length);
  // The margin keeps a quotient a rounding error above a whole number on that number.
  const double iterations = std::ceil(plan.tokens / tokens_per_iteration * (1.0 - 1e-12));
  return iterations * tokens_per_iteration / e.tokens_per_s;
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
    result.bounded += r.bounded;
    result.fitted_splits += r.fitted_splits;
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

// Records the event engine's outcomes on the candidates they belong to (in order, from
// `first`).
void apply_confirmations(ConfirmBatch& batch, size_t first, PlanResult& result) {
  result.confirmations += static_cast<int>(batch.outcomes.size());
  for (size_t i = 0; i < batch.outcomes.size() && first + i < result.candidates.size(); ++i) {
    ConfirmOutcome& o = batch.outcomes[i];
    ScreenedCandidate& c = result.candidates[first + i];
    if (!o.ok) {
      c.confirm_error = o.error;
      ++result.failed_confirmations;
      continue;
    }
    c.confirmed = true;
    c.event = o.evaluation;
    // An event run that reports no capacity keeps the screen's.
    if (c.event.capacity_bytes <= 0.0)
      c.event.capacity_bytes = c.analytic.capacity_bytes;
  }
}

// Runs the event engine on the candidates from `first` on when a confirm function is set;
// without one, or when the engine is unavailable, a note says the ranking uses the screen's
// numbers.
void confirm_candidates(const PlanSpec& plan, const PlanOptions& options, size_t first,
                        PlanResult& result) {
  if (!options.confirm) {
    result.notes.emplace_back("confirmation disabled; ranking uses the analytic screen's numbers");
    return;
  }
  if (result.candidates.size() <= first)
    return;
  std::vector<Scenario> scenarios;
  for (size_t i = first; i < result.candidates.size(); ++i)
    scenarios.push_back(candidate_scenario(plan, result.candidates[i].candidate));
  ConfirmBatch batch = options.confirm(scenarios, options.progress);
  if (batch.available) {
    result.event_available = true;
    apply_confirmations(batch, first, result);
    return;
  }
  if (first > 0) {  // a second batch: the first one's numbers stand
    result.notes.push_back("a second confirmation batch could not run (" + batch.reason +
                           "); its candidates keep the analytic screen's numbers");
    for (size_t i = first; i < result.candidates.size(); ++i) {
      result.candidates[i].confirm_error = "second confirmation batch not run: " + batch.reason;
      ++result.failed_confirmations;
    }
    return;
  }
  result.event_available = false;
  result.event_unavailable_reason = batch.reason;
  result.notes.push_back("event engine unavailable (" + batch.reason +
                         "); ranking uses the analytic screen's numbers");
}

// The screen prices no link sharing, so the event engine runs a layout at most as fast as the
// screen says (the 64 x p5 check: never faster in 3,417 layouts; docs/planner.md), and how much
// slower is mostly a property of the mesh (which links its flows share). So a group whose
// confirmed best the event engine ran slower than the screen ranked some of its other
// candidates may hold a faster one: of its unconfirmed candidates, the fastest of each mesh not
// yet confirmed whose screen time beats that best, and any of a confirmed mesh that still beats
// it once scaled by that mesh's event / screen ratio, are confirmed in a second batch (at most
// K per group). `reserves` holds each group's pooled candidates not yet confirmed, fastest
// first. Returns how many, appended to `result.candidates` (`groups` says each one's group).
// The most the event engine ran faster than the screen on the exhaustive checks: 0.085% on 512 x
// p4d, never more than 0.1% (docs/planner.md, "Does it find the optimum?").
constexpr double kEventMaxSpeedupOverScreen = 0.001;

size_t add_candidates_the_confirmed_do_not_bound(Groups& reserves, std::vector<GroupKey>& groups,
                                                 size_t k, PlanResult& result) {
  struct GroupState {
    double best_tokens_per_s = 0.0;
    std::map<MeshKey, double> slowdown;  // confirmed mesh: event time / screen time
  };
  std::map<GroupKey, GroupState> state;
  for (size_t i = 0; i < result.candidates.size(); ++i) {
    const ScreenedCandidate& c = result.candidates[i];
    if (!c.confirmed)
      continue;
    GroupState& g = state[groups[i]];
    g.best_tokens_per_s = std::max(g.best_tokens_per_s, c.event.tokens_per_s);
    const double ratio = c.analytic.tokens_per_s / c.event.tokens_per_s;
    auto [it, inserted] = g.slowdown.emplace(mesh_key(c.candidate.parallelism), ratio);
    if (!inserted)
      it->second = std::min(it->second, ratio);
  }
  size_t added = 0;
  for (auto& [key, reserve] : reserves) {
    const auto g = state.find(key);
    if (g == state.end())
      continue;
    size_t added_here = 0;
    std::set<MeshKey> new_meshes;
    for (auto& c : reserve) {
      // Sorted fastest first: the rest cannot beat the best even by the event engine's margin.
      if (added_here == k || c.analytic.tokens_per_s * (1.0 + kEventMaxSpeedupOverScreen) <=
                                 g->second.best_tokens_per_s)
        break;
      const MeshKey mesh = mesh_key(c.candidate.parallelism);
      const auto known = g->second.slowdown.find(mesh);
      const bool promising =
          known != g->second.slowdown.end()
              ? c.analytic.tokens_per_s / known->second > g->second.best_tokens_per_s
              : new_meshes.insert(mesh).second;
      if (!promising)
        continue;
      result.candidates.push_back(std::move(c));
      groups.push_back(key);
      ++added_here;
    }
    added += added_here;
  }
  return added;
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

// The plan's named training stack as the in-situ factors look it up: its name and version, or
// two empty strings.
struct StackKey {
  std::string name;
  std::string version;
};
StackKey stack_key(const PlanSpec& plan) {
  if (plan.named_stack == nullptr)
    return {};
  return {plan.named_stack->name, plan.named_stack->version};
}

// What the iteration times stand for (docs/validation.md): the shipped profiles' in-situ factor
// is fitted to published runs of 2022-2025 Megatron-LM/NeMo stacks (2021-2023 stacks ran slower,
// DeepSpeed ZeRO-3 at scale far slower); a named stack with published runs of its own on a
// family takes their factor there (docs/scenario.md, "Training stacks").
std::string kernel_speed_note(const PlanSpec& plan) {
  const StackKey key = stack_key(plan);
  const std::string& stack = key.name;
  std::set<std::string> own, other;  // architectures with and without the stack's own factor
  for (const InstanceChoice& choice : plan.instances) {
    if (!choice.profile_path.empty())
      continue;
    const std::string& architecture = plan.catalog.find_instance(choice.name)->gpu.architecture;
    (io::has_stack_factor(architecture, stack, key.version) ? own : other).insert(architecture);
  }
  const std::string calibrate =
      "; `capsim calibrate step` fits a profile to measured steps of your stack, and an "
      "instance's \"profile\" in the plan uses it";
  const std::string shipped =
      "kernels as fast as in published 2022-2025 Megatron-LM/NeMo runs (the shipped profiles' "
      "in-situ factor; older stacks and ZeRO-3 implementations ran slower, see "
      "docs/validation.md)";
  if (own.empty())
    return "iteration times assume " + shipped + calibrate;
  std::string families;
  for (const std::string& architecture : own)
    families += (families.empty() ? "" : ", ") + architecture;
  std::string note = "iteration times on " + families +
                     " GPUs assume kernels as fast as in published " + stack +
                     " runs on them (the in-situ factor fitted to those runs, " +
                     "docs/scenario.md \"Training stacks\")";
  if (!other.empty())
    note += "; on other GPUs " + shipped;
  return note + calibrate;
}

}  // namespace

std::vector<RankedEntry> rank_entries(const PlanSpec& plan, const PlanResult& result,
                                      bool confirmed, const RankingScales& scales) {
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
      r.price.usd_per_node_hour *= scales.price;
      r.time_to_train_s = time_to_train_s(plan, c.candidate.parallelism, e);
      r.wall_time_s = r.time_to_train_s;
      if (plan.failure) {
        const Parallelism& p = c.candidate.parallelism;
        FailureModel model =
            resolve_for_plan(plan, plan.instances[static_cast<size_t>(c.candidate.instance)].name,
                             c.candidate.num_nodes);
        model.gpu_mtbf_s /= scales.failure_rate;
        const GoodputRun run{.num_gpus = p.num_gpus(),
                             .steady_s = r.time_to_train_s,
                             .iteration_time_s = e.iteration_time_s,
                             .tokens = plan.tokens,
                             .pipeline = p.pipeline,
                             .virtual_stages = p.virtual_pipeline_stages,
                             .micro_batches = static_cast<double>(p.global_batch_size) /
                                              static_cast<double>(p.data * p.micro_batch_size)};
        r.goodput = goodput_breakdown(model, run);
        r.wall_time_s = r.goodput.wall_s;
        r.checkpoint_interval_s = r.goodput.checkpoint_interval_s;
        r.failure_overhead_fraction = 1.0 - r.time_to_train_s / r.wall_time_s;
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

Scenario candidate_scenario(const PlanSpec& plan, const Candidate& c) {
  const InstanceSpec& inst =
      *plan.catalog.find_instance(plan.instances[static_cast<size_t>(c.instance)].name);
  Scenario sc;
  sc.model = plan.model;
  sc.cluster = cluster_for_instance(inst, c.num_nodes,
                                    plan.instances[static_cast<size_t>(c.instance)].nvlink_domain);
  sc.parallelism = c.parallelism;
  sc.profile_path = plan.instances[static_cast<size_t>(c.instance)].profile_path;
  sc.stack = plan.named_stack;
  const Parallelism& p = c.parallelism;
  sc.name =
      plan.name + "-" + inst.name + "-" + std::to_string(c.num_nodes) + "n-tp" +
      std::to_string(p.tensor) + "-pp" + std::to_string(p.pipeline) + "-dp" +
      std::to_string(p.data) + (p.context > 1 ? "-cp" + std::to_string(p.context) : "") +
      (p.expert > 1 ? "-ep" + std::to_string(p.expert) : "") +
      (p.expert_tensor ? "-etp" + std::to_string(*p.expert_tensor) : "") +
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
  Groups groups = merge_into_groups(result, work.items, item_results, pool);
  for (auto& [key, group] : groups)
    result.balanced_splits += balance_pool_splits(plan, work.profiles, group);
  result.screen_wall_s = std::chrono::duration<double>(Clock::now() - t0).count();

  Groups reserves;  // per group, the pooled candidates not in the first batch
  std::vector<GroupKey> candidate_groups;
  for (const auto& key : groups_to_confirm(groups, need, result.notes)) {
    ConfirmChoice choice = choose_for_confirmation(std::move(groups[key]), k);
    reserves[key] = std::move(choice.rest);
    for (auto& c : choice.chosen) {
      result.candidates.push_back(std::move(c));
      candidate_groups.push_back(key);
    }
  }

  const auto t1 = Clock::now();
  confirm_candidates(plan, options, 0, result);
  if (result.event_available) {
    const size_t first = result.candidates.size();
    const size_t added =
        add_candidates_the_confirmed_do_not_bound(reserves, candidate_groups, k, result);
    if (added > 0) {
      confirm_candidates(plan, options, first, result);
      result.second_batch = added;
    }
  }
  result.confirm_wall_s = std::chrono::duration<double>(Clock::now() - t1).count();

  rank_candidates(plan, result);
  result.pareto = eligible_pareto(result.ranked);
  result.notes.push_back(kernel_speed_note(plan));
  const StackKey stack = stack_key(plan);
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    const InstanceChoice& choice = plan.instances[i];
    if (!choice.profile_path.empty())
      continue;
    const InstanceSpec& instance = *plan.catalog.find_instance(choice.name);
    const auto multi_node = work.profiles.find({static_cast<int>(i), true});
    if (!is_builtin_instance(choice.name) && !is_builtin_gpu(instance.gpu.name)) {
      result.notes.push_back(
          "instance " + choice.name +
          ": its GPU is defined in the plan and costed from its datasheet figures (not "
          "validated; " +
          io::in_situ_prior(instance.gpu.architecture, stack.name, stack.version).source +
          "); a profile fitted to the hardware (`capsim calibrate fit --gpu-spec`) puts the "
          "comparison with shipped ones on measurements");
    } else if (const std::optional<io::InSituPrior> speed =
                   io::tensor_speed_prior(instance.gpu.name)) {
      result.notes.push_back("instance " + choice.name + ": " + speed->source);
    } else if (multi_node != work.profiles.end() && multi_node->second.has_datasheet_network) {
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
