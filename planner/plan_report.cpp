#include "planner/plan_report.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/byte_units.hpp"
#include "models/pricing.hpp"
#include "planner/instance_comparison.hpp"
#include "planner/megatron_args.hpp"

#include "io/rounding.hpp"
#include "io/scenario_io.hpp"
#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

double g(double v) {
  return io::round_significant(v);
}

double disagreement_pct(const ScreenedCandidate& c) {
  return 100.0 * (c.event.iteration_time_s - c.analytic.iteration_time_s) /
         c.analytic.iteration_time_s;
}

// Confirmed candidates whose event time differs from the screen's by more than kDisagreementPct.
std::vector<const ScreenedCandidate*> disagreements(const PlanResult& result) {
  std::vector<const ScreenedCandidate*> out;
  for (const auto& c : result.candidates) {
    if (c.confirmed && std::fabs(disagreement_pct(c)) > kDisagreementPct)
      out.push_back(&c);
  }
  return out;
}

int confirmed_count(const PlanResult& result) {
  return static_cast<int>(std::count_if(result.candidates.begin(), result.candidates.end(),
                                        [](const ScreenedCandidate& c) { return c.confirmed; }));
}

// Candidates whose event run failed, in candidate order.
std::vector<const ScreenedCandidate*> failed_confirmations(const PlanResult& result) {
  std::vector<const ScreenedCandidate*> out;
  for (const auto& c : result.candidates) {
    if (!c.confirmed && !c.confirm_error.empty())
      out.push_back(&c);
  }
  return out;
}

// The cost of the steady-state time alone, billed as the all-in time is.
double steady_cost_usd(const ScreenedCandidate& c, const RankedEntry& r) {
  return c.candidate.num_nodes * r.price.usd_per_node_hour *
         billed_hours(r.price.pricing, r.time_to_train_s);
}

// Where the all-in hours go, in wall-clock hours per part.
nlohmann::json goodput_json(const GoodputBreakdown& b) {
  return {{"steady_h", g(b.steady_s / 3600.0)},
          {"stragglers_h", g(b.stragglers_s / 3600.0)},
          {"batch_ramp_h", g(b.batch_ramp_s / 3600.0)},
          {"startup_h", g(b.startup_s / 3600.0)},
          {"evaluation_h", g(b.evaluation_s / 3600.0)},
          {"checkpoint_writes_h", g(b.checkpoint_s / 3600.0)},
          {"lost_work_h", g(b.lost_work_s / 3600.0)},
          {"restarts_h", g(b.restarts_s / 3600.0)},
          {"all_in_h", g(b.wall_s / 3600.0)},
          {"interruptions", g(b.interruptions)},
          {"cluster_mtbf_h", g(b.cluster_mtbf_s / 3600.0)},
          {"checkpoint_save_s", g(b.checkpoint_save_s)},
          {"checkpoint_interval_s", g(b.checkpoint_interval_s)}};
}

nlohmann::json entry_json(const PlanSpec& plan, const PlanResult& result, const RankedEntry& r) {
  const ScreenedCandidate& c = result.candidates[r.candidate];
  const Evaluation& e = c.final_evaluation();
  const Parallelism& p = c.candidate.parallelism;
  nlohmann::json j = {{"scenario", io::scenario_to_json(candidate_scenario(plan, c.candidate))},
                      {"instance", plan.instances[static_cast<size_t>(c.candidate.instance)].name},
                      {"pricing", to_string(r.price.pricing)},
                      {"usd_per_node_hour", g(r.price.usd_per_node_hour)},
                      {"num_nodes", c.candidate.num_nodes},
                      {"num_gpus", p.num_gpus()},
                      {"layout",
                       {{"tensor", p.tensor},
                        {"pipeline", p.pipeline},
                        {"data", p.data},
                        {"context", p.context},
                        {"virtual_pipeline_stages", p.virtual_pipeline_stages},
                        {"micro_batch_size", p.micro_batch_size},
                        {"global_batch_size", p.global_batch_size},
                        {"schedule", to_string(p.schedule)},
                        {"recompute", to_string(p.recompute)},
                        {"zero_stage", p.zero_stage},
                        {"sequence_parallel", p.sequence_parallel},
                        {"precision", to_string(p.precision)}}},
                      {"engine", e.engine},
                      {"iteration_time_s", g(e.iteration_time_s)},
                      {"analytic_iteration_time_s", g(c.analytic.iteration_time_s)},
                      {"tokens_per_s", g(e.tokens_per_s)},
                      {"mfu", g(e.mfu)},
                      {"peak_memory_gib", g(e.peak_memory_bytes / kGiB)},
                      {"capacity_gib", g(e.capacity_bytes / kGiB)},
                      {"time_to_train_days", g(r.wall_time_s / kDay)},
                      {"failure_free_days", g(r.time_to_train_s / kDay)},
                      {"cost_usd", g(r.cost_usd)},
                      {"meets_target", r.meets_target}};
  if (!p.stage_layers.empty())
    j["layout"]["stage_layers"] = p.stage_layers;
  if (p.microbatch_group_size > 0)
    j["layout"]["microbatch_group_size"] = p.microbatch_group_size;
  if (plan.model.moe) {  // the expert layout of mixture-of-experts plans only
    j["layout"]["expert"] = p.expert;
    j["layout"]["expert_tensor"] = p.expert_tensor_or_default();
  }
  j["gpu_hours"] = g(p.num_gpus() * r.wall_time_s / 3600.0);
  j["free_memory_gib"] = g((e.capacity_bytes - e.peak_memory_bytes) / kGiB);
  if (plan.failure) {
    j["checkpoint_interval_s"] = g(r.checkpoint_interval_s);
    j["failure_overhead_pct"] = g(100.0 * r.failure_overhead_fraction);
    j["steady_days"] = g(r.time_to_train_s / kDay);
    j["all_in_days"] = g(r.wall_time_s / kDay);
    j["steady_gpu_hours"] = g(p.num_gpus() * r.time_to_train_s / 3600.0);
    j["steady_cost_usd"] = g(steady_cost_usd(c, r));
    j["goodput_pct"] = g(100.0 * r.time_to_train_s / r.wall_time_s);
    j["goodput"] = goodput_json(r.goodput);
  }
  if (!c.confirm_error.empty())
    j["confirm_error"] = c.confirm_error;
  return j;
}

}  // namespace

// TP/PP/DP/CP/VP; a '*' after PP marks an uneven split of the layers over the stages. Expert
// parallelism follows when there is any (" EP64", and " ETP2" when the experts' TP differs).
std::string layout_label(const Parallelism& p) {
  std::string text =
      io::printf_string("%d/%d%s/%d/%d/%d", p.tensor, p.pipeline, p.stage_layers.empty() ? "" : "*",
                        p.data, p.context, p.virtual_pipeline_stages);
  if (p.expert > 1)
    text += io::printf_string(" EP%d", p.expert);
  if (p.expert_tensor_or_default() != p.tensor)
    text += io::printf_string(" ETP%d", p.expert_tensor_or_default());
  return text;
}

std::vector<std::string> memory_warnings(const PlanSpec& plan, const PlanResult& result) {
  if (result.ranked.empty() || !result.ranked.front().meets_target)
    return {};
  const Evaluation& e = result.candidates[result.ranked.front().candidate].final_evaluation();
  const double free_bytes = e.capacity_bytes - e.peak_memory_bytes;
  if (free_bytes >= plan.memory_warning_bytes)
    return {};
  return {io::printf_string(
      "the winner leaves %.1f GiB of its GPUs' %.1f GiB free, less than the %.4g GiB "
      "memory_warning_headroom: the memory model's estimate is not exact, and a run that "
      "fragments more than it allows would not fit (memory_headroom in the plan keeps such "
      "layouts out)",
      free_bytes / kGiB, e.capacity_bytes / kGiB, plan.memory_warning_bytes / kGiB)};
}

std::string no_best_reason(const PlanSpec& plan, const PlanResult& result) {
  const int most_nodes = *std::max_element(plan.node_counts.begin(), plan.node_counts.end());
  if (result.ranked.empty()) {
    if (result.pruned.of(PruneReason::kMemory) > 0) {
      // What the search left out that saves memory, then what always does.
      const auto& space = plan.space;
      std::string remedies = "more nodes";
      if (std::find(space.recompute.begin(), space.recompute.end(), Recompute::kFull) ==
          space.recompute.end())
        remedies += ", full recompute in \"search\"";
      if (std::find(space.zero_stage.begin(), space.zero_stage.end(), 3) == space.zero_stage.end())
        remedies += ", ZeRO-3 in \"search\"";
      return io::printf_string(
          "no layout fits in memory on any instance and node count tried (up to %d nodes); %s or "
          "GPUs with more memory would help",
          most_nodes, remedies.c_str());
    }
    if (result.pruned.of(PruneReason::kFailures) > 0)
      return "on every node count tried, failures outpace checkpoints (failure_model)";
    return "no layout passes the layout rules (the pruned counts say which)";
  }
  const auto fastest = std::min_element(result.ranked.begin(), result.ranked.end(),
                                        [](const RankedEntry& a, const RankedEntry& b) {
                                          return a.time_to_train_s < b.time_to_train_s;
                                        });
  const ScreenedCandidate& c = result.candidates[fastest->candidate];
  const std::string where =
      io::printf_string("%d x %s", c.candidate.num_nodes,
                        plan.instances[static_cast<size_t>(c.candidate.instance)].name.c_str());
  const double tokens_per_s = c.final_evaluation().tokens_per_s;
  if (tokens_per_s < result.required_tokens_per_s) {
    return io::printf_string(
        "the fastest candidate (%s) reaches %.4g tokens/s, %.0f%% of the %.4g needed (node "
        "counts tried up to %d)",
        where.c_str(), tokens_per_s, 100.0 * tokens_per_s / result.required_tokens_per_s,
        result.required_tokens_per_s, most_nodes);
  }
  if (plan.deadline_s > 0.0 && fastest->time_to_train_s > plan.deadline_s) {
    return io::printf_string(
        "the fastest candidate (%s) reaches the throughput needed, but training runs whole "
        "iterations of %.4g s: %.4g s in all, past the %.4g s deadline",
        where.c_str(), c.final_evaluation().iteration_time_s, fastest->time_to_train_s,
        plan.deadline_s);
  }
  return io::printf_string(
      "the fastest candidate (%s) is fast enough without failures, but takes %.2f days with "
      "the failure model's expected overhead, past the %.2f-day deadline",
      where.c_str(), fastest->wall_time_s / kDay, plan.deadline_s / kDay);
}

nlohmann::json best_scenario_json(const PlanSpec& plan, const PlanResult& result) {
  if (result.ranked.empty() || !result.ranked.front().meets_target)
    return nullptr;
  const ScreenedCandidate& c = result.candidates[result.ranked.front().candidate];
  return io::scenario_to_json(candidate_scenario(plan, c.candidate));
}

nlohmann::json plan_to_json(const PlanSpec& plan, const PlanResult& result, size_t top,
                            bool with_timing) {
  using nlohmann::json;
  json out = json::object();
  out["plan"] = plan.name;
  out["objective"] = to_string(plan.objective);
  out["required_tokens_per_s"] = g(result.required_tokens_per_s);
  out["memory_headroom_gib"] = g(plan.memory_headroom_bytes / kGiB);
  if (!result.ranked.empty() && result.ranked.front().meets_target) {
    out["best"] = entry_json(plan, result, result.ranked.front());
    const Scenario best =
        candidate_scenario(plan, result.candidates[result.ranked.front().candidate].candidate);
    out["best"]["megatron_arguments"] = megatron_arguments(best);
    // What the arguments cannot say (a DualPipeV schedule, say), only when there is some.
    if (const std::vector<std::string> left = megatron_unexpressed(best); !left.empty())
      out["best"]["megatron_unexpressed"] = left;
    out["warnings"] = memory_warnings(plan, result);
    if (plan.shared_fabric && result.shared_fabric)
      out["shared_fabric"] = shared_fabric_json(*plan.shared_fabric, *result.shared_fabric);
    if (result.sensitivity)
      out["sensitivity"] = sensitivity_json(plan, result, *result.sensitivity);
  } else {
    out["best"] = nullptr;
    out["no_best_reason"] = no_best_reason(plan, result);
  }
  json ranked = json::array();
  for (size_t i = 0; i < result.ranked.size() && (top == 0 || i < top); ++i) {
    ranked.push_back(entry_json(plan, result, result.ranked[i]));
  }
  out["ranked"] = ranked;
  json pareto = json::array();
  for (const auto& r : result.pareto)
    pareto.push_back(entry_json(plan, result, r));
  out["pareto"] = pareto;
  if (plan.instances.size() > 1) {
    json by_instance = json::array();
    for (const InstanceOption& o : compare_instances(plan, result)) {
      json row = {{"instance", plan.instances[o.instance].name},
                  {"pricing", to_string(o.price.pricing)},
                  {"usd_per_gpu_hour", g(o.usd_per_gpu_hour)}};
      row["cheapest"] = o.cheapest ? entry_json(plan, result, result.ranked[*o.cheapest]) : json();
      row["fastest"] = o.fastest ? entry_json(plan, result, result.ranked[*o.fastest]) : json();
      row["tokens_per_s_per_gpu"] = g(o.tokens_per_s_per_gpu);
      row["usd_per_million_tokens"] = g(o.usd_per_million_tokens);
      by_instance.push_back(row);
    }
    out["by_instance"] = by_instance;
  }
  json pruned = json::object();
  for (int i = 0; i < kNumPruneReasons; ++i) {
    const auto reason = static_cast<PruneReason>(i);
    if (applies_to(reason, plan.model))
      pruned[to_string(reason)] = result.pruned.counts[static_cast<size_t>(i)];
  }
  out["pruned"] = pruned;
  json skipped = json::array();
  for (const SkippedPrice& k : plan.skipped_prices)
    skipped.push_back(
        {{"instance", k.instance}, {"pricing", to_string(k.pricing)}, {"reason", k.reason}});
  out["skipped_prices"] = skipped;
  out["search"] = {{"enumerated", result.enumerated},
                   {"screened", result.screened},
                   {"confirmed_candidates", result.candidates.size()},
                   {"confirmations", result.confirmations},
                   {"second_batch_confirmations", result.second_batch},
                   {"balanced_splits", result.balanced_splits},
                   {"fitted_splits", result.fitted_splits},
                   {"event_engine", result.event_available}};
  if (result.failed_confirmations > 0) {
    out["search"]["failed_confirmations"] = result.failed_confirmations;
    json failures = json::array();
    for (const ScreenedCandidate* c : failed_confirmations(result)) {
      failures.push_back(
          {{"scenario", candidate_scenario(plan, c->candidate).name}, {"error", c->confirm_error}});
    }
    out["confirmation_failures"] = failures;
  }
  json dis = json::array();
  for (const ScreenedCandidate* c : disagreements(result)) {
    dis.push_back({{"scenario", candidate_scenario(plan, c->candidate).name},
                   {"analytic_iteration_time_s", g(c->analytic.iteration_time_s)},
                   {"event_iteration_time_s", g(c->event.iteration_time_s)},
                   {"difference_pct", g(disagreement_pct(*c))}});
  }
  out["disagreements"] = dis;
  if (result.event_available && !result.candidates.empty()) {
    out["screen_winner"] =
        candidate_scenario(plan, result.candidates[result.screen_winner].candidate).name;
    out["confirmation_changed_winner"] = result.screen_winner_changed;
  }
  out["notes"] = result.notes;
  if (with_timing) {
    out["timing"] = {
        {"screen_wall_s", g(result.screen_wall_s)},
        {"confirm_wall_s", g(result.confirm_wall_s)},
        {"screen_rate_per_s", g(result.screen_wall_s > 0.0
                                    ? static_cast<double>(result.enumerated) / result.screen_wall_s
                                    : 0.0)}};
  }
  return out;
}

namespace {

constexpr const char* kRowHeader =
    "  # instance       pricing         nodes  GPUs  $/node-h  TP/PP/DP/CP/VP  mb/gbs     "
    "schedule          recompute  ZeRO SP  prec iter s   MFU    mem GiB  free  steady d  "
    "all-in d    cost $       eng\n";

// One row of the ranked or Pareto table: days steady and all-in (equal without a goodput
// model), the cost of the all-in days.
void append_row(std::string& out, const PlanSpec& plan, const PlanResult& result, size_t rank,
                const RankedEntry& r) {
  const ScreenedCandidate& c = result.candidates[r.candidate];
  const Evaluation& e = c.final_evaluation();
  const Parallelism& p = c.candidate.parallelism;
  const std::string mbg =
      std::to_string(p.micro_batch_size) + "/" + std::to_string(p.global_batch_size);
  out += io::printf_string(
      "%3zu %-14s %-14s %5d %5d %9.2f  %-14s  %-9s  %-16s  %-9s  %4d %-3s %-4s %7.3f  %5.1f%%  "
      "%6.1f %5.1f  %8.2f  %8.2f%s %10.0f  %s\n",
      rank, plan.instances[static_cast<size_t>(c.candidate.instance)].name.c_str(),
      to_string(r.price.pricing), c.candidate.num_nodes, p.num_gpus(), r.price.usd_per_node_hour,
      layout_label(p).c_str(), mbg.c_str(), to_string(p.schedule), to_string(p.recompute),
      p.zero_stage, p.sequence_parallel ? "yes" : "no", to_string(p.precision), e.iteration_time_s,
      100.0 * e.mfu, e.peak_memory_bytes / kGiB, (e.capacity_bytes - e.peak_memory_bytes) / kGiB,
      r.time_to_train_s / kDay, r.wall_time_s / kDay, r.meets_target ? " " : "!", r.cost_usd,
      c.confirmed               ? "event"
      : c.confirm_error.empty() ? "analytic"
                                : "analytic (event run failed)");
}

// The ranked candidates (the first `top`; all for 0) and the Pareto front.
void append_rankings(std::string& out, const PlanSpec& plan, const PlanResult& result, size_t top) {
  out += "ranked (! = misses the target; PP* = uneven split of the layers over the stages):\n";
  if (result.fitted_splits > 0) {
    out += "  (" + std::to_string(result.fitted_splits) +
           " pipelined layouts fit in memory only with their layers split otherwise; they were "
           "screened so)\n";
  }
  if (result.balanced_splits > 0) {
    out += "  (" + std::to_string(result.balanced_splits) +
           " pipelined candidates run faster with layers moved between stages to even their "
           "work; their scenarios give the split)\n";
  }
  out += kRowHeader;
  for (size_t i = 0; i < result.ranked.size() && (top == 0 || i < top); ++i)
    append_row(out, plan, result, i + 1, result.ranked[i]);
  out += "\nPareto front (cost vs days):\n";
  out += kRowHeader;
  for (size_t i = 0; i < result.pareto.size(); ++i)
    append_row(out, plan, result, i + 1, result.pareto[i]);
}

void append_pruned(std::string& out, const PlanSpec& plan, const PlanResult& result) {
  out += "\npruned candidates:\n";
  for (int i = 0; i < kNumPruneReasons; ++i) {
    const long long n = result.pruned.counts[static_cast<size_t>(i)];
    if (n != 0)
      out += io::printf_string("  %-26s %lld\n", to_string(static_cast<PruneReason>(i)), n);
  }
  if (!plan.skipped_prices.empty()) {
    out += "\npricing options skipped:\n";
    for (const SkippedPrice& k : plan.skipped_prices)
      out += "  " + k.instance + " " + to_string(k.pricing) + ": " + k.reason + "\n";
  }
}

// The screen's figures against the event engine's: large disagreements, the second batch and
// whether the winner changed.
void append_screen_vs_event(std::string& out, const PlanSpec& plan, const PlanResult& result) {
  out += "\nanalytic screen vs event confirmation:\n";
  int shown = 0;
  for (const ScreenedCandidate* c : disagreements(result)) {
    out += io::printf_string("  %-60s analytic %.3f s, event %.3f s (%+.1f%%)\n",
                             candidate_scenario(plan, c->candidate).name.c_str(),
                             c->analytic.iteration_time_s, c->event.iteration_time_s,
                             disagreement_pct(*c));
    ++shown;
  }
  if (shown > 0) {
    out +=
        "  (the screen prices no link sharing: where the event engine is slower, the difference "
        "is contention it sees)\n";
  }
  if (result.second_batch > 0) {
    out += io::printf_string(
        "  %zu confirmed in a second batch: the screen ranked them faster than the event "
        "engine ran their group's best\n",
        result.second_batch);
  }
  if (result.event_available && !result.candidates.empty()) {
    out +=
        result.screen_winner_changed
            ? "  the confirmation changed the winner; the screen alone would have chosen " +
                  candidate_scenario(plan, result.candidates[result.screen_winner].candidate).name +
                  "\n"
            : std::string("  the screen and the confirmation agree on the winner\n");
  }
  if (!result.event_available) {
    out += "  not compared: " +
           (result.event_unavailable_reason.empty() ? std::string("confirmation disabled")
                                                    : result.event_unavailable_reason) +
           "\n";
  } else if (shown == 0) {
    out += io::printf_string("  none above %.0f%%\n", kDisagreementPct);
  }
}

// The candidates whose event run failed, each with why.
void append_failures(std::string& out, const PlanSpec& plan, const PlanResult& result) {
  if (result.failed_confirmations == 0)
    return;
  out += "\nfailed event confirmations (these candidates rank on the analytic screen's numbers):\n";
  for (const ScreenedCandidate* c : failed_confirmations(result)) {
    out += "  " + candidate_scenario(plan, c->candidate).name + ": " + c->confirm_error + "\n";
  }
}

void append_best(std::string& out, const PlanSpec& plan, const PlanResult& result) {
  if (result.ranked.empty() || !result.ranked.front().meets_target) {
    out += "\nno configuration meets the target: " + no_best_reason(plan, result) + "\n";
    return;
  }
  const RankedEntry& b = result.ranked.front();
  const ScreenedCandidate& c = result.candidates[b.candidate];
  const int gpus = c.candidate.parallelism.num_gpus();
  const std::string steady =
      plan.failure ? io::printf_string(" all-in (steady state: %.2f days, $%.0f, %.0f GPU-hours)",
                                       b.time_to_train_s / kDay, steady_cost_usd(c, b),
                                       gpus * b.time_to_train_s / 3600.0)
                   : std::string();
  out += io::printf_string(
      "\nbest: %d x %s (%s), %.2f days, $%.0f, %.0f GPU-hours%s%s\n", c.candidate.num_nodes,
      plan.instances[static_cast<size_t>(c.candidate.instance)].name.c_str(),
      to_string(b.price.pricing), b.wall_time_s / kDay, b.cost_usd, gpus * b.wall_time_s / 3600.0,
      steady.c_str(), c.confirm_error.empty() ? "" : " (not confirmed: its event run failed)");
}

// Where the best candidate's all-in hours go, part by part.
void append_goodput(std::string& out, const PlanSpec& plan, const PlanResult& result) {
  if (!plan.failure || result.ranked.empty() || !result.ranked.front().meets_target)
    return;
  const GoodputBreakdown& b = result.ranked.front().goodput;
  out += io::printf_string(
      "\ngoodput of the best: %.1f%% (steady %.1f h of %.1f h all-in; %.1f interruptions "
      "expected, cluster MTBF %.2f h, checkpoint %.0f s every %.2f h)\n",
      100.0 * b.steady_s / b.wall_s, b.steady_s / 3600.0, b.wall_s / 3600.0, b.interruptions,
      b.cluster_mtbf_s / 3600.0, b.checkpoint_save_s, b.checkpoint_interval_s / 3600.0);
  const std::pair<const char*, double> parts[] = {{"stragglers", b.stragglers_s},
                                                  {"batch ramp", b.batch_ramp_s},
                                                  {"start-up", b.startup_s},
                                                  {"evaluation", b.evaluation_s},
                                                  {"checkpoint writes", b.checkpoint_s},
                                                  {"lost work", b.lost_work_s},
                                                  {"restarts", b.restarts_s}};
  for (const auto& [name, seconds] : parts) {
    out += io::printf_string("  %-18s %10.1f h  %5.2f%%\n", name, seconds / 3600.0,
                             100.0 * seconds / b.wall_s);
  }
}

}  // namespace

std::string plan_table(const PlanSpec& plan, const PlanResult& result, size_t top) {
  std::string out;
  const std::string failed = result.failed_confirmations > 0
                                 ? io::printf_string(", %d failed", result.failed_confirmations)
                                 : std::string();
  out += io::printf_string(
      "plan %s: %s, target %.4g tokens/s; enumerated %lld, screened %lld, confirmed %d%s (event "
      "engine: %s)\n\n",
      plan.name.c_str(), to_string(plan.objective), result.required_tokens_per_s, result.enumerated,
      result.screened, confirmed_count(result), failed.c_str(),
      result.event_available ? "yes" : "no");
  if (plan.memory_headroom_bytes > 0.0) {
    out += io::printf_string("every candidate leaves %.4g GiB of HBM free (memory_headroom)\n\n",
                             plan.memory_headroom_bytes / kGiB);
  }
  append_rankings(out, plan, result, top);
  out += instance_comparison_table(plan, result);
  append_pruned(out, plan, result);
  append_screen_vs_event(out, plan, result);
  append_failures(out, plan, result);
  for (const auto& n : result.notes)
    out += "note: " + n + "\n";
  append_best(out, plan, result);
  for (const std::string& w : memory_warnings(plan, result))
    out += "warning: " + w + "\n";
  if (plan.shared_fabric && result.shared_fabric)
    out += shared_fabric_line(*plan.shared_fabric, *result.shared_fabric);
  if (result.sensitivity)
    out += sensitivity_table(plan, result, *result.sensitivity);
  if (!result.ranked.empty() && result.ranked.front().meets_target) {
    const Scenario best =
        candidate_scenario(plan, result.candidates[result.ranked.front().candidate].candidate);
    out += "run it with Megatron-LM: " + megatron_arguments(best) + "\n";
    for (const std::string& left : megatron_unexpressed(best))
      out += "  not in these arguments: " + left + "\n";
  }
  append_goodput(out, plan, result);
  return out;
}

}  // namespace capsim::planner
