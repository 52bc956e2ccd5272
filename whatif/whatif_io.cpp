#include "whatif/whatif_io.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "models/catalog.hpp"

#include "io/input_error.hpp"
#include "io/instance_io.hpp"
#include "io/json_reader.hpp"
#include "whatif/detail/embedded_default.hpp"
#include "whatif/policy.hpp"
#include "whatif/policy_source.hpp"
#include "whatif/recommendation.hpp"
#include "whatif/throughput.hpp"

namespace capsim::whatif {
namespace {

// A delay: "5min" (fixed) or {"median": "5min", "p95": "12min"} (log-normal).
Delay read_delay(io::JsonReader& parent, const std::string& key, Delay dflt) {
  if (!parent.has(key))
    return dflt;
  const auto& value = parent.json().at(key);
  if (value.is_object()) {
    io::JsonReader r = parent.object(key);
    Delay d;
    d.median_s = r.required_duration("median");
    d.p95_s = r.required_duration("p95");
    if (d.p95_s < d.median_s) {
      throw r.error("p95", "p95 must be >= median (" + r.describe("p95") + " < " +
                               r.describe("median") + ")");
    }
    r.finish();
    return d;
  }
  Delay d;
  d.median_s = d.p95_s = parent.required_duration(key);
  return d;
}

Pricing read_pricing(io::JsonReader& r) {
  return *pricing_from_string(
      r.required_enum("pricing", {"on-demand", "spot", "capacity-block", "reserved"}));
}

NodePool read_pool(io::JsonReader& r, Catalog& catalog) {
  NodePool pool;
  pool.name = r.required_string("name");
  if (pool.name.empty())
    throw r.error("name", "pool name must not be empty");
  std::string instance;
  if (r.has("instance") && r.json().at("instance").is_object()) {
    // An instance type the catalog lacks, described here; it has no catalog price.
    io::JsonReader definition = r.object("instance");
    instance = definition.required_string("name");
    io::read_instance_definition(definition, instance, catalog);
    definition.finish();
    if (!r.has("price"))
      throw r.error("price", "a pool of an instance defined here needs \"price\"");
  } else {
    instance = r.required_string("instance");
  }
  const InstanceSpec* spec = catalog.find_instance(instance);
  if (spec == nullptr) {
    throw r.error("instance",
                  "unknown instance \"" + instance +
                      "\" (known: " + io::join_names(catalog.instance_names()) +
                      "; or define it: an object with \"name\", \"gpu\", \"gpus_per_node\" and "
                      "\"inter_node\", docs/whatif.md)");
  }
  pool.instance = *spec;
  pool.pricing = read_pricing(r);
  const auto price = r.optional_price("price");
  if (price) {
    pool.price_usd_per_hour = *price;
  } else if (pool.pricing == Pricing::kSpot) {
    throw r.error("price", "a spot pool needs \"price\" (spot prices move; see docs/whatif.md)");
  } else {
    pool.price_usd_per_hour = catalog_price_usd_per_hour(*spec, pool.pricing);
    if (pool.price_usd_per_hour <= 0) {
      throw r.error("price", "the catalog has no " + std::string(to_string(pool.pricing)) +
                                 " price for " + instance + "; give \"price\"");
    }
  }
  pool.min_nodes = static_cast<int>(r.optional_int("min_nodes", 0, 0, 100000));
  pool.max_nodes = static_cast<int>(r.required_int("max_nodes", 1, 100000));
  if (pool.min_nodes > pool.max_nodes) {
    throw r.error("min_nodes", "min_nodes (" + std::to_string(pool.min_nodes) +
                                   ") must be <= max_nodes (" + std::to_string(pool.max_nodes) +
                                   ")");
  }
  // p4d/p5 launch -> Ready 5-10 min with a 15+ min tail, image pull 2-8 min, NCCL/EFA init
  // 0.5-5 min: docs/design/autoscaling.md §2.1 (assumed; calibrate).
  pool.boot = {360.0, 720.0};
  pool.image_pull = {240.0, 480.0};
  pool.init = {60.0, 180.0};
  if (auto p = r.optional_object("provisioning")) {
    pool.boot = read_delay(*p, "boot", pool.boot);
    pool.image_pull = read_delay(*p, "image_pull", pool.image_pull);
    pool.init = read_delay(*p, "init", pool.init);
    p->finish();
  }
  if (auto c = r.optional_object("capacity")) {
    pool.available_nodes = static_cast<int>(c->optional_int("available_nodes", -1, 0, 100000));
    pool.ice_probability = c->optional_number("ice_probability", 0.0, 0.0, 1.0);
    c->finish();
  }
  if (r.has("spot") && pool.pricing != Pricing::kSpot) {
    throw r.error("spot", "a \"spot\" section needs \"pricing\": \"spot\"");
  }
  if (auto s = r.optional_object("spot")) {
    pool.interruptions_per_node_month =
        s->optional_number("interruptions_per_node_month", 0.0, 0.0, 1000.0);
    pool.interruption_correlation = s->optional_number("correlation", 0.0, 0.0, 1.0);
    pool.notice_s = s->optional_duration("notice").value_or(120.0);
    s->finish();
  }
  r.finish();
  return pool;
}

FailureModel read_failures(io::JsonReader& r) {
  FailureModel f;
  f.gpu_mtbf_s = r.optional_duration("gpu_mtbf").value_or(0.0);
  f.repair = read_delay(r, "repair", {4 * 3600.0, 4 * 3600.0});
  f.detect_s = r.optional_duration("detect").value_or(0.0);
  if (r.has("checkpoint_interval") && r.json().at("checkpoint_interval").is_string() &&
      r.json().at("checkpoint_interval").get<std::string>() == "young-daly") {
    (void)r.required_string("checkpoint_interval");
    f.young_daly = true;
  } else {
    f.checkpoint_interval_s = r.optional_duration("checkpoint_interval").value_or(3600.0);
    if (f.checkpoint_interval_s < kMinCheckpointIntervalS) {
      throw r.error("checkpoint_interval", "expected a duration of at least 1s or \"young-daly\"");
    }
  }
  f.checkpoint_cost_s = r.optional_duration("checkpoint_cost").value_or(0.0);
  f.restart_cost_s = r.optional_duration("restart_cost").value_or(0.0);
  if (f.young_daly && (f.gpu_mtbf_s <= 0 || f.checkpoint_cost_s <= 0)) {
    throw r.error("checkpoint_interval",
                  "\"young-daly\" needs a positive \"gpu_mtbf\" and \"checkpoint_cost\"");
  }
  r.finish();
  return f;
}

std::vector<traces::JobRecord> read_jobs(io::JsonReader& r, const std::string& base_dir,
                                         const std::string* embedded_text, int gpus_per_node) {
  traces::JobTraceOptions options;
  const std::string format = r.required_enum("format", traces::job_trace_format_names());
  (void)traces::parse_job_trace_format(format, options.format);
  const std::string path = r.required_string("path");
  options.path = (std::filesystem::path(base_dir) / path).lexically_normal().string();
  options.limit = static_cast<std::size_t>(r.optional_int("limit", 0, 0, 100000000));
  options.time_scale = r.optional_number("time_scale", 1.0, 1e-6, 1e6);
  options.max_duration_s = r.optional_duration("max_duration").value_or(0.0);
  options.gpus_per_node = gpus_per_node;
  r.finish();
  if (embedded_text != nullptr) {
    std::istringstream in(*embedded_text);
    return traces::read_job_trace(options, in);
  }
  if (!std::filesystem::exists(options.path)) {
    throw r.error("path", "job trace \"" + options.path + "\" does not exist");
  }
  if (!std::filesystem::is_regular_file(options.path)) {
    throw r.error("path", "job trace \"" + options.path + "\" is not a file");
  }
  return traces::read_job_trace(options);
}

// Jobs written inline as JSON objects with the capsim CSV's columns as keys.
std::vector<traces::JobRecord> read_inline_jobs(io::JsonReader& parent,
                                                const std::string& base_dir) {
  const auto items = parent.array("jobs", 1);
  std::vector<traces::JobRecord> jobs;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < items.size(); ++i) {
    io::JsonReader r(items[i], parent, parent.pointer_to("jobs") + "/" + std::to_string(i));
    traces::JobRecord j;
    j.id = r.required_string("job_id");
    if (!ids.insert(j.id).second)
      throw r.error("job_id", "duplicate job id \"" + j.id + "\"");
    j.submit_s = r.required_duration("submit");
    if (j.submit_s < 0 || j.submit_s > traces::kMaxTraceSpanS)
      throw r.error("submit", "expected a submit time between 0 and " +
                                  std::to_string(traces::kMaxTraceSpanDays) + " days");
    j.gpus = static_cast<int>(r.required_int("gpus", 1, 1 << 20));
    j.min_gpus = static_cast<int>(r.optional_int("min_gpus", j.gpus, 1, 1 << 20));
    j.max_gpus = static_cast<int>(r.optional_int("max_gpus", j.gpus, 1, 1 << 20));
    if (j.min_gpus > j.gpus || j.gpus > j.max_gpus) {
      throw r.error("gpus", "min_gpus <= gpus <= max_gpus does not hold: min_gpus " +
                                std::to_string(j.min_gpus) + ", gpus " + std::to_string(j.gpus) +
                                ", max_gpus " + std::to_string(j.max_gpus));
    }
    j.priority = static_cast<int>(r.optional_int("priority", 0, -1000000, 1000000));
    const bool rigid = r.has("duration");
    if (rigid == r.has("scenario")) {
      throw r.error(rigid ? "scenario" : "duration",
                    "a job has either \"duration\" (rigid) or \"scenario\" and \"tokens\"");
    }
    if (rigid) {
      j.duration_s = r.required_duration("duration");
      if (j.duration_s <= 0)
        throw r.error("duration", "expected a positive duration");
    } else {
      j.scenario_path = (std::filesystem::path(base_dir) / r.required_string("scenario"))
                            .lexically_normal()
                            .string();
      j.tokens = r.required_count("tokens");
      if (j.tokens <= 0)
        throw r.error("tokens", "expected a positive count");
    }
    r.finish();
    jobs.push_back(std::move(j));
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const auto& a, const auto& b) { return a.submit_s < b.submit_s; });
  return jobs;
}

std::vector<PolicySpec> default_policies(const std::string& file) {
  std::vector<PolicySpec> out;
  for (const auto& p : preset_names()) {
    out.push_back(make_policy(p, p, nlohmann::json::object(), file, "/policies"));
  }
  return out;
}

// The top-level scalars: name, seed, replicas, horizon, timeline interval and queue order.
void read_run_settings(io::JsonReader& r, const std::string& file, WhatIf& w) {
  w.name = r.optional_string("name", std::filesystem::path(file).stem().string());
  w.seed = static_cast<std::uint64_t>(r.optional_int("seed", 1, 0, INT64_MAX));
  w.replicas = static_cast<int>(r.optional_int("replicas", 1, 1, 1000));
  w.horizon_s = r.optional_duration("horizon").value_or(0.0);
  // Below a second a simulated day would take longer than the engine's time resolution allows.
  if (r.has("horizon") && w.horizon_s < 1.0)
    throw r.error("horizon", "expected a duration of at least 1s");
  w.timeline_interval_s = r.optional_duration("timeline_interval").value_or(600.0);
  if (w.timeline_interval_s < 1.0)
    throw r.error("timeline_interval", "expected a duration of at least 1s");
  w.queue = r.optional_enum("queue", "first-fit", {"first-fit", "fifo"}) == "fifo"
                ? QueueOrder::kFifo
                : QueueOrder::kFirstFit;
}

// The /pools array, with unique pool names.
std::vector<NodePool> read_pools(io::JsonReader& r, Catalog& catalog) {
  const auto pools = r.array("pools", 1);
  std::vector<NodePool> out;
  std::set<std::string> pool_names;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    io::JsonReader pr(pools[i], r, r.pointer_to("pools") + "/" + std::to_string(i));
    out.push_back(read_pool(pr, catalog));
    if (!pool_names.insert(out.back().name).second) {
      throw pr.error("name", "duplicate pool name \"" + out.back().name + "\"");
    }
  }
  return out;
}

// /jobs: an inline array of job objects, or an object naming a trace file (or the embedded
// trace). A trace file is read with the first pool's GPUs per node.
std::vector<traces::JobRecord> read_any_jobs(io::JsonReader& r, const std::string& base_dir,
                                             const std::string* embedded_trace,
                                             const std::vector<NodePool>& pools) {
  if (r.has("jobs") && r.json().at("jobs").is_array())
    return read_inline_jobs(r, base_dir);
  io::JsonReader jr = r.object("jobs");
  auto jobs = read_jobs(jr, base_dir, embedded_trace, pools.front().gpus_per_node());
  if (jobs.empty())
    throw jr.error("path", "the job trace holds no jobs");
  return jobs;
}

// What a /policies entry needs besides itself: the pools its configuration maps onto, the
// catalog its instance types are checked against, and where notes and problems go.
struct PolicyContext {
  const std::string& base_dir;
  const std::vector<NodePool>& pools;
  const Catalog& catalog;
  std::vector<io::InputProblem>& notes;
  std::vector<io::InputProblem>& unmodelled;
};

// A /policies entry {"from": FORMAT, "file": PATH or [PATH, ...], "name", "knobs"}: the
// configuration's preset, knobs (the entry's knobs on top) and node groups as pools.
PolicySpec read_policy_from(io::JsonReader& pr, const std::string& ptr, PolicyContext& ctx) {
  const std::string format_name = pr.required_enum("from", config_format_names());
  const ConfigFormat format = *config_format_from_string(format_name);
  std::vector<std::string> paths;
  if (pr.has("file") && pr.json().at("file").is_array()) {
    const auto items = pr.array("file", 1);
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string())
        throw io::InputError(pr.file(), ptr + "/file/" + std::to_string(i), "expected a path");
      paths.push_back(items[i].get<std::string>());
    }
  } else {
    paths.push_back(pr.required_string("file"));
  }
  if (paths.size() > 1 && format != ConfigFormat::kKarpenter)
    throw pr.error("file",
                   "only a Karpenter policy reads several files (NodePools and EC2NodeClasses)");
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string full =
        (std::filesystem::path(ctx.base_dir) / paths[i]).lexically_normal().string();
    if (!std::filesystem::is_regular_file(full)) {
      throw io::InputError(
          pr.file(),
          ptr + "/file" +
              (paths.size() > 1 && pr.json().at("file").is_array() ? "/" + std::to_string(i) : ""),
          "configuration file \"" + full + "\" does not exist or is not a file");
    }
    paths[i] = full;
  }
  ConfigReading reading = read_config(format, paths, ctx.catalog);
  const std::string name = pr.optional_string("name", reading.policy.name);
  nlohmann::json knobs = reading.policy.knobs;
  if (pr.has("knobs")) {
    (void)pr.object("knobs");
    for (const auto& [k, v] : pr.json().at("knobs").items())
      knobs[k] = v;
  }
  pr.finish();
  PolicySpec spec = make_policy(name, reading.policy.preset, knobs, pr.file(), ptr);
  spec.pools =
      pools_for_groups(reading.policy, ctx.pools, pr.file(), ptr + "/file", reading.unmodelled);
  spec.source = std::make_shared<const ImportedSource>(
      ImportedSource{std::move(reading.files), reading.policy.knobs, ctx.catalog});
  reading.policy.knobs = spec.knobs;
  reading.policy.name = name;
  spec.imported = reading.policy;
  for (auto& n : reading.notes)
    ctx.notes.push_back(std::move(n));
  for (auto& u : reading.unmodelled)
    ctx.unmodelled.push_back(std::move(u));
  return spec;
}

// One /policies entry: a preset, an optional name (default: the preset) and its knobs, or a
// configuration to read (read_policy_from).
PolicySpec read_policy(const nlohmann::json& value, const io::JsonReader& parent,
                       const std::string& ptr, std::set<std::string>& names, PolicyContext& ctx) {
  io::JsonReader pr(value, parent, ptr);
  const std::string& file = parent.file();
  if (pr.has("from")) {
    PolicySpec spec = read_policy_from(pr, ptr, ctx);
    if (!names.insert(spec.name).second)
      throw pr.error("name", "duplicate policy name \"" + spec.name + "\"");
    return spec;
  }
  const std::string preset = pr.required_enum("preset", preset_names());
  const std::string name = pr.optional_string("name", preset);
  if (!names.insert(name).second) {
    throw pr.error("name", "duplicate policy name \"" + name + "\"");
  }
  nlohmann::json knobs = nlohmann::json::object();
  if (pr.has("knobs")) {
    (void)pr.object("knobs");
    knobs = pr.json().at("knobs");
  }
  pr.finish();
  return make_policy(name, preset, knobs, file, ptr);
}

// /policies, or every preset with its defaults when the file gives none.
std::vector<PolicySpec> read_policies(io::JsonReader& r, const std::string& file,
                                      PolicyContext& ctx) {
  if (!r.has("policies"))
    return default_policies(file);
  const auto policies = r.array("policies", 1);
  std::vector<PolicySpec> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < policies.size(); ++i) {
    out.push_back(read_policy(policies[i], r, r.pointer_to("policies") + "/" + std::to_string(i),
                              names, ctx));
  }
  return out;
}

// /recommend: how --emit ranks the policies.
Recommendation read_recommendation(io::JsonReader& r) {
  Recommendation rec;
  rec.by = r.optional_enum("by", "cost_usd", recommendation_metrics());
  rec.max_queue_wait_p95_s = r.optional_duration("max_queue_wait_p95");
  r.finish();
  return rec;
}

// /sweep: one knob of one named policy over a list of values. Each value is checked now by
// building the policy it gives, so a bad value fails at load time with its own pointer.
Sweep read_sweep(io::JsonReader& s, const std::vector<PolicySpec>& policies,
                 const std::string& file) {
  Sweep sweep;
  sweep.policy = s.required_string("policy");
  const auto it = std::find_if(policies.begin(), policies.end(),
                               [&](const PolicySpec& p) { return p.name == sweep.policy; });
  if (it == policies.end()) {
    std::vector<std::string> names;
    names.reserve(policies.size());
    for (const auto& p : policies)
      names.push_back(p.name);
    throw s.error("policy", "no policy named \"" + sweep.policy +
                                "\" (policies: " + io::join_names(names) + ")");
  }
  sweep.knob = s.required_string("knob");
  sweep.values = s.array("values", 1);
  const std::string ptr = s.pointer();
  s.finish();
  for (std::size_t i = 0; i < sweep.values.size(); ++i) {
    nlohmann::json knobs = it->knobs;
    knobs[sweep.knob] = sweep.values[i];
    (void)make_policy(it->name, it->preset, knobs, file, ptr + "/values/" + std::to_string(i));
  }
  return sweep;
}

// Cross-field: every job must fit the largest pool (of the what-if, and of each policy that
// brings its own pools).
void check_jobs_fit_largest_pool(const std::vector<NodePool>& pools,
                                 const std::vector<traces::JobRecord>& jobs,
                                 const std::string& file, const std::string& whose) {
  int largest = 0;
  for (const auto& p : pools)
    largest = std::max(largest, p.max_nodes * p.gpus_per_node());
  for (const auto& j : jobs) {
    if (j.min_gpus > largest) {
      throw io::InputError(file, "/jobs",
                           "job " + j.id + " needs " + std::to_string(j.min_gpus) +
                               " GPUs but the largest pool" + whose + " holds " +
                               std::to_string(largest));
    }
  }
}

// Unmodelled keys of the policies' configurations: one error listing them all, or, allowed,
// notes.
void settle_unmodelled(std::vector<io::InputProblem>& unmodelled,
                       std::vector<io::InputProblem>& notes, bool allow) {
  if (unmodelled.empty())
    return;
  if (!allow) {
    for (auto& p : unmodelled)
      p.message += " (changes the result; model it without: --allow-unmodelled)";
    throw io::InputError(unmodelled);
  }
  for (auto& p : unmodelled)
    notes.push_back(p);
}

WhatIf read(io::JsonReader& r, const std::string& base_dir, const std::string* embedded_trace,
            const WhatIfReadOptions& options) {
  const std::string& file = r.file();
  r.expect_schema(kWhatIfSchema);
  WhatIf w;
  w.file = file;
  read_run_settings(r, file, w);
  Catalog catalog;  // an instance one pool defines, the later ones (and configurations) may name
  w.pools = read_pools(r, catalog);
  if (auto f = r.optional_object("failures"))
    w.failures = read_failures(*f);
  w.jobs = read_any_jobs(r, base_dir, embedded_trace, w.pools);
  std::vector<io::InputProblem> unmodelled;
  PolicyContext ctx{base_dir, w.pools, catalog, w.notes, unmodelled};
  w.policies = read_policies(r, file, ctx);
  if (auto s = r.optional_object("sweep"))
    w.sweep = read_sweep(*s, w.policies, file);
  if (auto f = r.optional_object("fabric"))
    w.fabric = read_whatif_fabric(*f);
  if (auto rec = r.optional_object("recommend"))
    w.recommend = read_recommendation(*rec);
  r.finish();
  settle_unmodelled(unmodelled, w.notes, options.allow_unmodelled);
  // Two policies read from one file note its keys once.
  std::set<std::string> seen_notes;
  std::erase_if(w.notes, [&](const io::InputProblem& n) {
    return !seen_notes.insert(io::describe_problem(n)).second;
  });
  check_jobs_fit_largest_pool(w.pools, w.jobs, file, "");
  for (const auto& p : w.policies) {
    if (!p.pools.empty())
      check_jobs_fit_largest_pool(p.pools, w.jobs, file, " of policy \"" + p.name + "\"");
  }
  fill_scenario_models(w, default_throughput());
  if (w.fabric)
    fill_fabric_slowdowns(w);
  return w;
}

WhatIf read(const nlohmann::json& json, const std::string& file, const std::string& base_dir,
            const std::string* embedded_trace, const WhatIfReadOptions& options = {}) {
  return io::JsonReader::read_document(
      json, file, [&](io::JsonReader& r) { return read(r, base_dir, embedded_trace, options); });
}

}  // namespace

WhatIf load_whatif(const std::string& path, const WhatIfReadOptions& options) {
  const nlohmann::json json = io::JsonReader::parse_file(path);
  const auto base = std::filesystem::path(path).parent_path().string();
  return read(json, path, base, nullptr, options);
}

WhatIf read_whatif(const nlohmann::json& json, const std::string& file, const std::string& base_dir,
                   const WhatIfReadOptions& options) {
  return read(json, file, base_dir, nullptr, options);
}

std::string_view default_whatif_text() {
  return detail::kDefaultWhatIfJson;
}

WhatIf default_whatif() {
  const std::string file = "scenarios/whatif/default.json";
  const nlohmann::json json = io::JsonReader::parse_text(detail::kDefaultWhatIfJson, file);
  const std::string trace(detail::kDefaultWhatIfTrace);
  return read(json, file, "scenarios/whatif", &trace);
}

std::vector<PolicySpec> expand_policies(const WhatIf& whatif) {
  if (!whatif.sweep)
    return whatif.policies;
  std::vector<PolicySpec> out;
  const auto& sweep = *whatif.sweep;
  for (const auto& p : whatif.policies) {
    if (p.name != sweep.policy) {
      out.push_back(p);  // the other policies run beside the variants, for comparison
      continue;
    }
    for (const auto& v : sweep.values) {
      nlohmann::json knobs = p.knobs;
      knobs[sweep.knob] = v;
      const std::string value = v.is_string() ? v.get<std::string>() : v.dump();
      PolicySpec variant = make_policy(p.name + "[" + sweep.knob + "=" + value + "]", p.preset,
                                       knobs, whatif.file, "/sweep");
      variant.pools = p.pools;
      variant.imported = p.imported;
      variant.source = p.source;
      if (variant.imported)
        variant.imported->knobs = variant.knobs;
      out.push_back(std::move(variant));
    }
  }
  return out;
}

}  // namespace capsim::whatif
