#include "planner/plan_io.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "models/byte_units.hpp"
#include "models/gpu_catalog.hpp"
#include "models/instance_catalog.hpp"
#include "models/low_precision.hpp"
#include "models/memory_model.hpp"
#include "planner/goodput.hpp"
#include "planner/plan_instances.hpp"

#include "estimate/layout_rules.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "io/text_format.hpp"
#include "io/training_stack_io.hpp"

namespace capsim::planner {
namespace {

// Kept identical to scenarios/plans/default.json (a test compares them). The model is a
// GPT-style 30B decoder (12·l·h² + embeddings = 29.96B parameters); 2,048 sequences of 2,048
// tokens per batch (4.2M tokens, in the range GPT-3 and MPT-30B trained with).
constexpr std::string_view kDefaultPlan = R"json({
  "schema": "capsim.plan/v1",
  "name": "default-30b-1T-30d",
  "model": {
    "name": "GPT-style 30B",
    "num_layers": 48,
    "hidden_size": 7168,
    "num_attention_heads": 56,
    "ffn_hidden_size": 28672,
    "ffn_activation": "gelu",
    "seq_length": 2048,
    "vocab_size": 51200
  },
  "target": { "tokens": "1T", "deadline": "30d" },
  "instances": ["p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge"],
  "pricing": ["on-demand"],
  "num_nodes": { "min": 1, "max": 512 },
  "global_batch": { "sequences": 2048 },
  "objective": "min_cost"
}
)json";

constexpr std::int64_t kMaxDim = 1 << 24;
constexpr std::int64_t kMaxNodes = 1 << 17;
constexpr std::int64_t kMaxExperts = 1 << 16;  // as a scenario's moe.num_experts

std::vector<int> powers_of_two_between(int lo, int hi) {
  std::vector<int> out{lo};
  for (long long v = 1; v <= hi; v *= 2) {
    if (v > lo && v < hi)
      out.push_back(static_cast<int>(v));
  }
  if (hi != lo)
    out.push_back(hi);
  return out;
}

// An array of distinct integers in [min, max], sorted ascending.
std::vector<int> int_values(io::JsonReader& r, const std::string& key, std::int64_t min,
                            std::int64_t max) {
  const auto raw = r.int_array(key, min, max);
  std::vector<int> out;
  std::set<std::int64_t> seen;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (!seen.insert(raw[i]).second) {
      throw io::InputError(r.file(), r.pointer_to(key) + "/" + std::to_string(i),
                           "duplicate value " + std::to_string(raw[i]));
    }
    out.push_back(static_cast<int>(raw[i]));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// An array of distinct strings from `allowed`, in file order.
std::vector<std::string> enum_values(io::JsonReader& r, const std::string& key,
                                     const std::vector<std::string>& allowed) {
  const auto items = r.array(key, 1);
  std::vector<std::string> out;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string where = r.pointer_to(key) + "/" + std::to_string(i);
    const auto& v = items[i];
    const bool known = v.is_string() && std::find(allowed.begin(), allowed.end(),
                                                  v.get<std::string>()) != allowed.end();
    if (!known) {
      throw io::InputError(
          r.file(), where,
          "expected one of " + io::join_names(allowed) + ", got " + io::describe_json(v));
    }
    if (std::find(out.begin(), out.end(), v.get<std::string>()) != out.end()) {
      throw io::InputError(r.file(), where, "duplicate value " + io::describe_json(v));
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

// Records `key` as allowed when it is absent (an optional accessor on a missing key only
// records it), so finish() lists it.
void mark_allowed(io::JsonReader& r, const char* key) {
  if (!r.has(key))
    (void)r.optional_bool(key, false);
}

std::vector<int> divisors_up_to(int n, int limit) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0)
      out.push_back(d);
  }
  return out;
}

// Defaults: every value a practitioner would try (docs/planner.md, "Search space").
SearchSpace default_space(const ModelSpec& m, int max_gpus_per_node) {
  SearchSpace s;
  for (int t = 1; t <= max_gpus_per_node; t *= 2)
    s.tensor.push_back(t);
  // Divisors of the layers, plus powers of two (split unevenly when they do not divide).
  s.pipeline = divisors_up_to(m.num_layers, 128);
  for (int p = 2; p <= std::min(m.num_layers, 128); p *= 2) {
    if (m.num_layers % p != 0)
      s.pipeline.push_back(p);
  }
  std::sort(s.pipeline.begin(), s.pipeline.end());
  s.virtual_pipeline_stages = {1, 2, 3, 4, 6, 8};
  s.micro_batch_size = {1, 2, 4, 8};
  // Context parallelism pays off only for long sequences (Megatron recommends it from 8k).
  s.context = m.seq_length >= 8192 ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1};
  s.schedule = {Schedule::kGpipe, Schedule::kOneFOneB, Schedule::kInterleaved,
                Schedule::kZeroBubble};
  s.recompute = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  s.zero_stage = {0, 1, 2, 3};
  s.sequence_parallel = {false, true};
  // fp8 changes the numerics of training; a plan opts into it explicitly.
  s.precision = {Precision::kBf16};
  return s;
}

void read_search(io::JsonReader& r, SearchSpace& s, const ModelSpec& model) {
  for (const char* key : {"expert", "expert_tensor"}) {
    if (!model.moe && r.has(key)) {
      throw r.error(key, std::string("\"") + key +
                             "\" lays out mixture-of-experts layers; it needs model.moe");
    }
  }
  if (r.has("expert"))
    s.expert = int_values(r, "expert", 1, kMaxExperts);
  if (r.has("expert_tensor"))
    s.expert_tensor = int_values(r, "expert_tensor", 1, 64);
  if (r.has("tensor"))
    s.tensor = int_values(r, "tensor", 1, 64);
  if (r.has("pipeline"))
    s.pipeline = int_values(r, "pipeline", 1, kMaxDim);
  if (r.has("virtual_pipeline_stages")) {
    s.virtual_pipeline_stages = int_values(r, "virtual_pipeline_stages", 1, 1024);
  }
  if (r.has("micro_batch_size"))
    s.micro_batch_size = int_values(r, "micro_batch_size", 1, 4096);
  if (r.has("context"))
    s.context = int_values(r, "context", 1, 1024);
  if (r.has("zero_stage"))
    s.zero_stage = int_values(r, "zero_stage", 0, 3);
  if (r.has("schedule")) {
    s.schedule.clear();
    for (const auto& v : enum_values(
             r, "schedule", {"gpipe", "1f1b", "interleaved-1f1b", "zero-bubble", "dualpipev"})) {
      s.schedule.push_back(*schedule_from_string(v));
    }
  }
  if (r.has("recompute")) {
    s.recompute.clear();
    for (const auto& v : enum_values(r, "recompute", {"none", "selective", "full"})) {
      s.recompute.push_back(*recompute_from_string(v));
    }
  }
  if (r.has("sequence_parallel")) {
    s.sequence_parallel.clear();
    const auto items = r.array("sequence_parallel", 1);
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string where = r.pointer_to("sequence_parallel") + "/" + std::to_string(i);
      if (!items[i].is_boolean()) {
        throw io::InputError(r.file(), where,
                             "expected true or false, got " + io::describe_json(items[i]));
      }
      const bool v = items[i].get<bool>();
      if (std::find(s.sequence_parallel.begin(), s.sequence_parallel.end(), v) !=
          s.sequence_parallel.end()) {
        throw io::InputError(r.file(), where, "duplicate value " + io::describe_json(items[i]));
      }
      s.sequence_parallel.push_back(v);
    }
  }
  if (r.has("precision")) {
    s.precision.clear();
    for (const auto& v :
         enum_values(r, "precision",
                     {"fp16", "bf16", "fp8", "fp8-cs", "fp8-blockwise", "mxfp8", "nvfp4"})) {
      s.precision.push_back(*precision_from_string(v));
    }
  }
  s.uneven_stages = r.optional_bool("uneven_stages", true);
  s.balance_stages = r.optional_bool("balance_stages", true);
  // Record the absent keys too, so finish() lists every allowed key.
  for (const char* key :
       {"tensor", "pipeline", "virtual_pipeline_stages", "micro_batch_size", "context", "schedule",
        "recompute", "zero_stage", "sequence_parallel", "precision", "expert", "expert_tensor"}) {
    mark_allowed(r, key);
  }
  r.finish();
}

void read_target(io::JsonReader& r, PlanSpec& plan) {
  plan.tokens = r.required_count("tokens");
  if (plan.tokens < 1.0)
    throw r.error("tokens", "expected at least 1 token");
  // At most 1e18 (units::kMaxCount, checked by the reader): beyond it the times to train overflow.
  plan.deadline_s = r.optional_duration("deadline").value_or(0.0);
  if (r.has("deadline") && plan.deadline_s <= 0.0) {
    throw r.error("deadline", "expected a positive duration");
  }
  // A training run shorter than an hour is a unit slip (and a tiny one makes the required
  // throughput infinite).
  if (r.has("deadline") && plan.deadline_s < 3600.0) {
    throw r.error("deadline", "expected at least 1h, got " + r.describe("deadline"));
  }
  plan.min_tokens_per_s = r.optional_count("min_tokens_per_s").value_or(0.0);
  if (r.has("min_tokens_per_s") && plan.min_tokens_per_s <= 0.0) {
    throw r.error("min_tokens_per_s", "expected a positive throughput");
  }
  r.finish();
  if (!r.has("deadline") && !r.has("min_tokens_per_s")) {
    throw r.error("", "the target needs \"deadline\" or \"min_tokens_per_s\"");
  }
}

void read_nodes(io::JsonReader& r, PlanSpec& plan) {
  if (r.has("values")) {
    plan.node_counts = int_values(r, "values", 1, kMaxNodes);
    for (const char* key : {"min", "max"}) {
      if (r.has(key)) {
        throw r.error(key, std::string("give either \"values\" or \"min\"/\"max\", not both"));
      }
    }
  } else {
    mark_allowed(r, "values");
    const int lo = static_cast<int>(r.required_int("min", 1, kMaxNodes));
    const int hi = static_cast<int>(r.required_int("max", 1, kMaxNodes));
    if (lo > hi) {
      throw r.error("max",
                    "max (" + std::to_string(hi) + ") is below min (" + std::to_string(lo) + ")");
    }
    plan.node_counts = powers_of_two_between(lo, hi);
  }
  r.finish();
}

int tokens_to_sequences(io::JsonReader& r, const std::string& key, double tokens, int seq_length) {
  const double seqs = tokens / seq_length;
  if (seqs < 1.0 || std::fabs(seqs - std::round(seqs)) > 1e-9 * seqs) {
    throw r.error(key, "tokens (" + std::to_string(static_cast<long long>(tokens)) +
                           ") are not a whole number of sequences of seq_length (" +
                           std::to_string(seq_length) + ")");
  }
  if (seqs > static_cast<double>(kMaxDim))
    throw r.error(key, "global batch is too large");
  return static_cast<int>(std::llround(seqs));
}

void read_global_batch(io::JsonReader& r, PlanSpec& plan) {
  const int seq = plan.model.seq_length;
  const std::vector<std::string> forms{"sequences",     "tokens",     "min_sequences",
                                       "max_sequences", "min_tokens", "max_tokens"};
  const bool fixed_seq = r.has("sequences");
  const bool fixed_tok = r.has("tokens");
  const bool range_seq = r.has("min_sequences") || r.has("max_sequences");
  const bool range_tok = r.has("min_tokens") || r.has("max_tokens");
  const int kinds =
      (fixed_seq ? 1 : 0) + (fixed_tok ? 1 : 0) + (range_seq ? 1 : 0) + (range_tok ? 1 : 0);
  if (kinds != 1) {
    throw r.error("",
                  "give exactly one of \"sequences\", \"tokens\", "
                  "\"min_sequences\"+\"max_sequences\" or \"min_tokens\"+\"max_tokens\"");
  }
  int lo = 0;
  int hi = 0;
  if (fixed_seq) {
    lo = hi = static_cast<int>(r.required_int("sequences", 1, kMaxDim));
  } else if (fixed_tok) {
    lo = hi = tokens_to_sequences(r, "tokens", r.required_count("tokens"), seq);
  } else if (range_seq) {
    lo = static_cast<int>(r.required_int("min_sequences", 1, kMaxDim));
    hi = static_cast<int>(r.required_int("max_sequences", 1, kMaxDim));
  } else {
    // A range in tokens holds the whole sequences whose tokens fall inside it ("1M" to "8M"
    // need not be multiples of the sequence length; an exact "tokens" must).
    const double min_tokens = r.required_count("min_tokens");
    const double max_tokens = r.required_count("max_tokens");
    const double min_seqs = std::max(1.0, std::ceil(min_tokens / seq * (1.0 - 1e-12)));
    const double max_seqs = std::floor(max_tokens / seq * (1.0 + 1e-12));
    if (max_seqs < 1.0) {
      throw r.error("max_tokens",
                    "max_tokens (" + std::to_string(static_cast<long long>(max_tokens)) +
                        ") is less than one sequence of seq_length (" + std::to_string(seq) + ")");
    }
    if (min_seqs > max_seqs) {
      throw r.error("max_tokens", "no whole number of sequences of seq_length (" +
                                      std::to_string(seq) + ") lies between min_tokens (" +
                                      std::to_string(static_cast<long long>(min_tokens)) +
                                      ") and max_tokens (" +
                                      std::to_string(static_cast<long long>(max_tokens)) + ")");
    }
    if (max_seqs > static_cast<double>(kMaxDim))
      throw r.error("max_tokens", "global batch is too large");
    lo = static_cast<int>(min_seqs);
    hi = static_cast<int>(max_seqs);
  }
  for (const auto& f : forms)
    mark_allowed(r, f.c_str());
  r.finish();
  if (lo > hi) {
    throw r.error(range_seq ? "max_sequences" : "max_tokens",
                  "the maximum global batch (" + std::to_string(hi) +
                      " sequences) is below the minimum (" + std::to_string(lo) + ")");
  }
  plan.global_batch_sizes = powers_of_two_between(lo, hi);
}

// A positive duration under `key`, or `dflt` when it is absent.
double positive_duration(io::JsonReader& r, const char* key, double dflt) {
  const std::optional<double> v = r.optional_duration(key);
  if (v && *v <= 0.0)
    throw r.error(key, "expected a positive duration");
  return v.value_or(dflt);
}

// A duration of at least 0 under `key`, or `dflt` when it is absent.
double duration_at_least_zero(io::JsonReader& r, const char* key, double dflt) {
  const std::optional<double> v = r.optional_duration(key);
  if (v && *v < 0.0)
    throw r.error(key, "expected a duration of at least 0");
  return v.value_or(dflt);
}

// The batch ramp: steps of increasing token counts, each at a fraction of the global batch.
std::vector<BatchRampStep> read_batch_ramp(io::JsonReader& r) {
  const auto items = r.array("batch_ramp");
  std::vector<BatchRampStep> steps;
  for (size_t i = 0; i < items.size(); ++i) {
    io::JsonReader item(items[i], r, r.pointer_to("batch_ramp") + "/" + std::to_string(i));
    BatchRampStep step;
    step.until_tokens = item.required_count("until_tokens");
    step.batch_fraction = item.required_number("batch_fraction", 1e-6, 1.0);
    item.finish();
    if (step.until_tokens <= 0.0 ||
        (!steps.empty() && step.until_tokens <= steps.back().until_tokens)) {
      throw item.error("until_tokens",
                       "expected more tokens than the step before (and more than 0), got " +
                           item.describe("until_tokens"));
    }
    steps.push_back(step);
  }
  return steps;
}

// The goodput model: "none" turns it off; an object overrides the published defaults part by
// part (docs/planner.md, "Goodput"); absent, every default applies.
void read_failure(io::JsonReader& r, PlanSpec& plan) {
  if (r.has("failure_model") && r.json().at("failure_model").is_string()) {
    const std::string v = r.required_enum("failure_model", {"none", "default"});
    if (v == "none")
      plan.failure.reset();
    return;
  }
  auto opt = r.optional_object("failure_model");
  if (!opt)
    return;
  io::JsonReader& f = *opt;
  FailureModel m = default_failure_model();
  if (f.has("gpu_mtbf") && f.has("interruptions_per_gpu_hour"))
    throw f.error("interruptions_per_gpu_hour",
                  "give gpu_mtbf or interruptions_per_gpu_hour, not both");
  m.gpu_mtbf_s = positive_duration(f, "gpu_mtbf", 0.0);
  if (auto rate = f.optional_number("interruptions_per_gpu_hour", 0.0, 0.0, 1e6); rate > 0.0)
    m.gpu_mtbf_s = 3600.0 / rate;
  else if (f.has("interruptions_per_gpu_hour"))
    throw f.error("interruptions_per_gpu_hour", "expected a positive rate");
  m.checkpoint_save_s = positive_duration(f, "checkpoint_save", 0.0);
  m.checkpoint_restore_s = positive_duration(f, "checkpoint_restore", m.checkpoint_save_s);
  m.checkpoint_interval_s = positive_duration(f, "checkpoint_interval", 0.0);
  m.detection_s = duration_at_least_zero(f, "detection", m.detection_s);
  m.restart_s = duration_at_least_zero(f, "restart", m.restart_s);
  m.planned_per_gpu_hour =
      f.optional_number("planned_interruptions_per_gpu_hour", m.planned_per_gpu_hour, 0.0, 1e6);
  m.straggler_sigma = f.optional_number("straggler_sigma", m.straggler_sigma, 0.0, 0.5);
  m.warmup_iterations =
      static_cast<int>(f.optional_int("warmup_iterations", m.warmup_iterations, 0, 1 << 24));
  if (auto bw = f.optional_bandwidth("storage_bandwidth_per_node")) {
    if (*bw <= 0.0)
      throw f.error("storage_bandwidth_per_node", "expected a positive bandwidth");
    m.storage_bytes_per_s_per_node = *bw;
  }
  m.checkpoint_bytes_per_parameter = f.optional_number(
      "checkpoint_bytes_per_parameter", m.checkpoint_bytes_per_parameter, 0.5, 1024.0);
  if (auto eval = f.optional_object("evaluation")) {
    m.evaluation_every_s = eval->required_duration("every");
    m.evaluation_s = eval->required_duration("duration");
    eval->finish();
    if (m.evaluation_every_s <= 0.0)
      throw eval->error("every", "expected a positive duration");
    if (m.evaluation_s < 0.0)
      throw eval->error("duration", "expected a duration of at least 0");
  }
  if (f.has("batch_ramp"))
    m.batch_ramp = read_batch_ramp(f);
  f.finish();
  plan.failure = m;
}

// Gives the plan's stack the settings of a named stack where its keys (`stack_has`) and model
// (`model_has`) leave them unsaid. The settings are taken for a layout that stands for every
// candidate: ZeRO-1 (screen.cpp's apply_stack then conditions the overlap flags per ZeRO stage),
// sequence parallel when some candidate is, fp16 when some candidate is (no fp32 remainders
// then), else the search's first precision (gradients reduced in the training precision).
void apply_named_stack(const StackSettings& settings,
                       const std::function<bool(std::string_view)>& stack_has,
                       const std::function<bool(std::string_view)>& model_has, PlanSpec& plan) {
  const auto& precisions = plan.space.precision;
  const auto& sp = plan.space.sequence_parallel;
  plan.stack_shards_with_pipeline = settings.shards_data_parallel_with_pipeline;
  Parallelism& stack = plan.stack;
  stack.zero_stage = 1;
  stack.sequence_parallel = std::find(sp.begin(), sp.end(), true) != sp.end();
  const bool any_fp16 =
      std::find(precisions.begin(), precisions.end(), Precision::kFp16) != precisions.end();
  stack.precision = any_fp16 || precisions.empty() ? Precision::kFp16 : precisions.front();
  apply_stack_settings(settings, stack_has, stack);
  apply_stack_kernels(settings, model_has, plan.model);
  // The fp8 parameters follow each candidate's precision (candidate_fp8_params), not the one
  // that stands for them here.
  if (!stack_has("fp8_params")) {
    stack.fp8_params = false;
    plan.fp8_params_by_recipe =
        settings.fp8_parameters_with_fp8_recipes && !states_bf16_weights(stack_has, stack);
  }
}

// The stack section: a named stack (name, version) and the scenario's stack keys
// (read_stack_keys), checked against every precision the search may pick.
void read_stack(io::JsonReader& r, PlanSpec& plan,
                const std::function<bool(std::string_view)>& model_has) {
  const TrainingStack* named = io::read_stack_name_and_version(r);
  io::read_stack_keys(r, plan.stack);
  plan.named_stack = named;
  if (named != nullptr) {
    apply_named_stack(
        named->settings, [&r](std::string_view key) { return r.has(std::string(key)); }, model_has,
        plan);
    if (plan.stack.overlap_param_gather && !plan.stack.overlap_grad_reduce) {
      throw r.error("overlap_param_gather",
                    "overlap_param_gather needs overlap_grad_reduce, which the plan's stack "
                    "turns off (Megatron-LM: \"Must use --overlap-param-gather with "
                    "--overlap-grad-reduce\")");
    }
  }
  io::read_expert_exchange(r, plan.model.moe.has_value(), plan.stack);
  if (r.has("recompute_modules")) {
    const auto& recompute = plan.space.recompute;
    if (std::find(recompute.begin(), recompute.end(), Recompute::kSelective) == recompute.end()) {
      throw r.error("recompute_modules",
                    "recompute_modules applies to the selective-recompute candidates, and "
                    "search.recompute has no \"selective\"");
    }
    plan.stack.recompute_modules = io::read_recompute_module_list(r);
    if (auto problem = estimate::recompute_module_problem(plan.model, plan.stack.recompute_modules))
      throw r.error("recompute_modules", *problem);
  }
  const auto& precisions = plan.space.precision;
  if (plan.stack.fp8_params && std::none_of(precisions.begin(), precisions.end(), is_fp8_recipe)) {
    throw r.error("fp8_params",
                  "fp8_params applies to the fp8 candidates, and search.precision has no \"fp8\"");
  }
  const auto& sp = plan.space.sequence_parallel;
  if (plan.stack.tp_comm_overlap && std::find(sp.begin(), sp.end(), true) == sp.end()) {
    throw r.error("tp_comm_overlap",
                  "tp_comm_overlap applies to the sequence-parallel candidates, and "
                  "search.sequence_parallel has no true");
  }
  if (plan.stack.master_weights) {
    for (Precision precision : precisions) {
      const bool fp8_params = candidate_fp8_params(plan, precision);
      if (auto conflict =
              io::master_weights_conflict(*plan.stack.master_weights, precision, fp8_params)) {
        throw r.error("master_weights",
                      *conflict + " (search.precision includes \"" + to_string(precision) + "\")");
      }
    }
  }
  r.finish();
}

std::string format_gib(double bytes) {
  return io::printf_string("%.1f GiB", bytes / kGiB);
}

// The HBM every candidate leaves free (default none). It must leave room on the smallest GPU
// the plan may buy, or no candidate of that instance could ever fit.
double read_memory_headroom(io::JsonReader& r, const PlanSpec& plan) {
  const double headroom = r.optional_size("memory_headroom").value_or(0.0);
  for (const InstanceChoice& choice : plan.instances) {
    const GpuSpec& gpu = plan.catalog.find_instance(choice.name)->gpu;
    if (headroom >= gpu.hbm_capacity_bytes) {
      throw r.error("memory_headroom",
                    "expected less than the memory of every GPU the plan may buy (" + gpu.name +
                        " on " + choice.name + ": " + format_gib(gpu.hbm_capacity_bytes) +
                        "), got " + r.describe("memory_headroom"));
    }
  }
  return headroom;
}

PlanSpec read_plan(io::JsonReader& r) {
  const std::string& file = r.file();
  PlanSpec plan;
  plan.file = file;
  r.expect_schema(kPlanSchema);
  plan.name = r.optional_string("name", "plan");
  {
    auto model = r.object("model");
    plan.model = io::read_model(model);
  }
  {
    auto target = r.object("target");
    read_target(target, plan);
  }
  const std::vector<std::string> pricing = r.has("pricing")
                                               ? enum_values(r, "pricing", pricing_names())
                                               : std::vector<std::string>{"on-demand"};
  mark_allowed(r, "pricing");
  read_instances(r, plan, pricing);
  {
    auto nodes = r.object("num_nodes");
    read_nodes(nodes, plan);
  }
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    // Every node count must fill whole NVLink domains (or stay inside one).
    const InstanceChoice& choice = plan.instances[i];
    const int gpus_per_node = plan.catalog.find_instance(choice.name)->gpus_per_node;
    for (const int nodes : plan.node_counts) {
      if (choice.nvlink_domain == 0)
        break;
      if (auto problem =
              io::nvlink_domain_problem(choice.nvlink_domain, gpus_per_node, nodes * gpus_per_node))
        throw io::InputError(file, "/instances/" + std::to_string(i) + "/nvlink_domain", *problem);
    }
  }
  for (size_t i = 0; i < plan.instances.size(); ++i) {
    // Without inter-node fits, a multi-node candidate's collectives could not be timed.
    const InstanceChoice& choice = plan.instances[i];
    if (choice.profile_path.empty() || plan.node_counts.back() <= 1)
      continue;
    const HardwareProfile profile =
        io::load_profile_for(choice.profile_path, plan.catalog.find_instance(choice.name)->gpu);
    if (std::none_of(profile.collectives.begin(), profile.collectives.end(),
                     [](const CollectiveFit& f) { return f.inter_node; })) {
      throw io::InputError(file, "/instances/" + std::to_string(i) + "/profile",
                           "profile \"" + profile.name +
                               "\" has no inter_node fit, but num_nodes goes " + "up to " +
                               std::to_string(plan.node_counts.back()));
    }
  }
  {
    auto batch = r.object("global_batch");
    read_global_batch(batch, plan);
  }
  // Tensor parallelism may fill an NVLink domain, a node or one spanning several.
  int max_gpus_per_node = 1;
  for (const auto& inst : plan.instances) {
    max_gpus_per_node = std::max({max_gpus_per_node, inst.nvlink_domain,
                                  plan.catalog.find_instance(inst.name)->gpus_per_node});
  }
  plan.space = default_space(plan.model, max_gpus_per_node);
  if (auto search = r.optional_object("search"))
    read_search(*search, plan.space, plan.model);
  const auto model_json = r.json().find("model");
  const auto model_has = [&](std::string_view key) {
    return model_json != r.json().end() && model_json->is_object() &&
           model_json->contains(std::string(key));
  };
  if (r.has("stack") && r.json().at("stack").is_string()) {
    const TrainingStack& named = io::read_training_stack(r, "stack");
    plan.named_stack = &named;
    apply_named_stack(
        named.settings, [](std::string_view) { return false; }, model_has, plan);
  } else if (auto stack = r.optional_object("stack")) {
    read_stack(*stack, plan, model_has);
  }
  const std::string objective =
      r.optional_enum("objective", "min_cost", {"min_cost", "min_time", "pareto"});
  plan.objective = objective == "min_time" ? Objective::kMinTime
                   : objective == "pareto" ? Objective::kPareto
                                           : Objective::kMinCost;
  plan.failure = default_failure_model();
  read_failure(r, plan);
  plan.confirm_top_k = static_cast<int>(r.optional_int("confirm_top_k", 2, 1, 1 << 20));
  plan.memory_headroom_bytes = read_memory_headroom(r, plan);
  if (auto warn = r.optional_size("memory_warning_headroom"))
    plan.memory_warning_bytes = *warn;
  if (auto fabric = r.optional_object("shared_fabric"))
    plan.shared_fabric = read_shared_fabric(*fabric);
  r.finish();
  return plan;
}

}  // namespace

bool candidate_fp8_params(const PlanSpec& plan, Precision precision) {
  if (plan.stack.fp8_params && is_fp8_recipe(precision))
    return true;
  return plan.fp8_params_by_recipe && plan.named_stack != nullptr &&
         keeps_fp8_parameters(plan.named_stack->settings, precision);
}

const char* to_string(Objective objective) {
  switch (objective) {
    case Objective::kMinCost:
      return "min_cost";
    case Objective::kMinTime:
      return "min_time";
    case Objective::kPareto:
      return "pareto";
  }
  return "?";
}

PlanSpec load_plan(const std::string& path) {
  return io::JsonReader::read_document(io::JsonReader::parse_file(path), path, read_plan);
}

PlanSpec read_plan_text(std::string_view text, const std::string& name) {
  return io::JsonReader::read_document(io::JsonReader::parse_text(text, name), name, read_plan);
}

std::string_view default_plan_text() {
  return kDefaultPlan;
}

}  // namespace capsim::planner
