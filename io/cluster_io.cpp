#include "io/cluster_io.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "estimate/layout_rules.hpp"
#include "io/input_error.hpp"
#include "io/profile_reference.hpp"
#include "io/scenario_io.hpp"

namespace capsim::io {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMaxNodes = 1 << 20;

// Whether the fabric names, by a string, a GPU the catalog does not know (yet): a profile fitted
// on new hardware then defines it, as for scenarios.
bool fabric_names_unknown_gpu(const nlohmann::json& doc, const Catalog& catalog) {
  const auto fabric = doc.find("fabric");
  if (fabric == doc.end() || !fabric->is_object())
    return false;
  const auto gpu = fabric->find("gpu");
  return gpu != fabric->end() && gpu->is_string() &&
         catalog.find_gpu(gpu->get<std::string>()) == nullptr;
}

// One job as read, before the checks across jobs and the placement.
struct JobEntry {
  std::string pointer;  // "/jobs/3"
  bool readable = false;
  bool from_scenario = false;
  std::string scenario_file;
  FabricJob job;
  PlacementRequest request;
};

// The model and layout of a job: inline, or those of the scenario file it names.
void read_job_workload(JsonReader& j, const std::string& base_dir, Catalog& catalog,
                       JobEntry& entry) {
  if (j.has("scenario")) {
    for (const char* key : {"model", "parallelism"}) {
      if (j.has(key)) {
        throw j.error(key, std::string("\"") + key +
                               "\" comes from the job's scenario file; remove it or drop "
                               "\"scenario\"");
      }
    }
    const std::string named = j.required_string("scenario");
    const std::string path = fs::path(named).is_absolute() || base_dir.empty()
                                 ? named
                                 : (fs::path(base_dir) / named).lexically_normal().string();
    std::error_code ec;
    if (named.empty() || !fs::is_regular_file(path, ec))
      throw j.error("scenario", "no scenario file \"" + named + "\" beside the cluster file");
    const Scenario sc = load_scenario(path, catalog);
    entry.from_scenario = true;
    entry.scenario_file = path;
    entry.job.scenario.model = sc.model;
    entry.job.scenario.parallelism = sc.parallelism;
    return;
  }
  {
    auto model = j.object("model");
    entry.job.scenario.model = read_model(model);
  }
  auto par = j.object("parallelism");
  entry.job.scenario.parallelism = read_parallelism(par, entry.job.scenario.model.moe.has_value());
}

// The job's nodes, or the policy that chooses them.
void read_job_placement(JsonReader& j, JobEntry& entry) {
  PlacementRequest& req = entry.request;
  if (j.has("nodes")) {
    for (const char* key : {"placement", "seed"}) {
      if (j.has(key)) {
        throw j.error(key, std::string("a job with a \"nodes\" list has no \"") + key +
                               "\"; give one or the other");
      }
    }
    req.policy = PlacementPolicy::kExplicit;
    for (const std::int64_t node : j.int_array("nodes", 0, kMaxNodes))
      req.nodes.push_back(static_cast<int>(node));
    if (req.nodes.empty())
      throw j.error("nodes", "expected at least one node");
    return;
  }
  req.policy = *placement_policy_from_string(
      j.optional_enum("placement", "packed",
                      {"packed", "spread", "leaf-aligned", "rail-aligned", "random-fragmented"}));
  if (j.has("seed") && req.policy != PlacementPolicy::kRandomFragmented) {
    throw j.error("seed", std::string("\"seed\" drives the \"random-fragmented\" placement; this "
                                      "job's placement is \"") +
                              to_string(req.policy) + "\"");
  }
  req.seed = static_cast<std::uint64_t>(
      j.optional_int("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
}

JobEntry read_job(const nlohmann::json& value, const JsonReader& parent, std::string pointer,
                  const std::string& base_dir, Catalog& catalog) {
  JobEntry entry;
  entry.pointer = pointer;
  JsonReader j(value, parent, std::move(pointer));
  entry.job.name = j.required_string("name");
  if (entry.job.name.empty())
    throw j.error("name", "expected a job name, got \"\"");
  read_job_workload(j, base_dir, catalog, entry);
  read_job_placement(j, entry);
  j.finish();
  entry.readable = true;
  return entry;
}

void add(std::vector<InputProblem>& problems, const JsonReader& r, const std::string& pointer,
         std::string message) {
  problems.push_back({r.file(), pointer, std::move(message)});
}

std::string layout_text(const Parallelism& p) {
  return "tensor " + std::to_string(p.tensor) + " x pipeline " + std::to_string(p.pipeline) +
         " x data " + std::to_string(p.data) + " x context " + std::to_string(p.context) + " = " +
         std::to_string(p.num_gpus()) + " GPUs";
}

// The job's GPUs fill whole nodes of the fabric; returns its node count (0 when they do not).
int check_whole_nodes(const JsonReader& r, const ClusterSpec& fabric, const JobEntry& e,
                      std::vector<InputProblem>& problems) {
  const Parallelism& p = e.job.scenario.parallelism;
  const std::string where = e.pointer + (e.from_scenario ? "/scenario" : "/parallelism");
  if (p.num_gpus() % fabric.gpus_per_node != 0) {
    add(problems, r, where,
        "the layout (" + layout_text(p) + ") does not fill whole nodes of " +
            std::to_string(fabric.gpus_per_node) +
            " GPUs; the jobs of a shared fabric take whole nodes");
    return 0;
  }
  const int nodes = p.num_gpus() / fabric.gpus_per_node;
  if (e.request.policy == PlacementPolicy::kExplicit &&
      static_cast<int>(e.request.nodes.size()) != nodes) {
    add(problems, r, e.pointer + "/nodes",
        std::to_string(e.request.nodes.size()) + " nodes hold " +
            std::to_string(e.request.nodes.size() *
                           static_cast<std::size_t>(fabric.gpus_per_node)) +
            " GPUs; the layout (" + layout_text(p) + ") needs " + std::to_string(nodes) + " nodes");
  }
  return nodes;
}

// The job's layout on the fabric, by the scenario's layout rules.
void check_layout(const JsonReader& r, const ClusterSpec& fabric, JobEntry& e, int nodes,
                  std::vector<InputProblem>& problems) {
  Scenario& sc = e.job.scenario;
  sc.cluster = fabric;
  sc.cluster.num_nodes = nodes;
  sc.cluster.has_inter_node = nodes > 1;
  if (fabric.nvlink_domain > 0) {
    if (auto problem = nvlink_domain_problem(fabric.nvlink_domain, fabric.gpus_per_node,
                                             sc.cluster.num_gpus())) {
      add(problems, r, e.pointer + (e.from_scenario ? "/scenario" : "/parallelism"),
          "on the fabric's NVLink domains: " + *problem);
      return;
    }
  }
  const std::vector<estimate::LayoutProblem> found =
      estimate::layout_problems(sc.model, sc.cluster, sc.parallelism);
  if (found.empty())
    return;
  const estimate::LayoutProblem& first = found.front();
  if (e.from_scenario) {
    add(problems, r, e.pointer + "/scenario",
        "on the fabric, " + e.scenario_file + ":" + first.pointer + ": " + first.message);
  } else if (first.pointer.rfind("/cluster", 0) == 0) {
    add(problems, r, "/fabric" + first.pointer.substr(8),
        "job \"" + e.job.name + "\": " + first.message);
  } else {
    add(problems, r, e.pointer + first.pointer, first.message);
  }
}

// Explicit node lists: inside the fabric, each node once over all jobs, whole NVLink domains.
void check_explicit_nodes(const JsonReader& r, const ClusterSpec& fabric,
                          const std::vector<JobEntry>& entries,
                          std::vector<InputProblem>& problems) {
  std::map<int, std::pair<std::string, std::string>> owner;  // node -> (job, pointer)
  const int domain_nodes = std::max(fabric.nvlink_domain_gpus() / fabric.gpus_per_node, 1);
  for (const JobEntry& e : entries) {
    if (!e.readable || e.request.policy != PlacementPolicy::kExplicit)
      continue;
    std::map<int, int> fabric_domain_of_job_domain;
    for (std::size_t k = 0; k < e.request.nodes.size(); ++k) {
      const int node = e.request.nodes[k];
      const std::string at = e.pointer + "/nodes/" + std::to_string(k);
      if (node >= fabric.num_nodes) {
        add(problems, r, at,
            "node " + std::to_string(node) + " is beyond the fabric's " +
                std::to_string(fabric.num_nodes) + " nodes (0-" +
                std::to_string(fabric.num_nodes - 1) + ")");
        continue;
      }
      const auto [it, fresh] = owner.emplace(node, std::make_pair(e.job.name, at));
      if (!fresh) {
        add(problems, r, at,
            "node " + std::to_string(node) + " is also used by job \"" + it->second.first + "\" (" +
                it->second.second + ")");
      }
      if (domain_nodes > 1) {
        const int job_domain = static_cast<int>(k) / domain_nodes;
        const auto [d, first] =
            fabric_domain_of_job_domain.emplace(job_domain, node / domain_nodes);
        if (!first && d->second != node / domain_nodes) {
          add(problems, r, at,
              "node " + std::to_string(node) + " is not in the NVLink domain of the job's node " +
                  std::to_string(job_domain * domain_nodes) + " (each " +
                  std::to_string(domain_nodes) +
                  " consecutive nodes of a job share one domain of the fabric)");
        }
      }
    }
  }
}

void check_names(const JsonReader& r, const std::vector<JobEntry>& entries,
                 std::vector<InputProblem>& problems) {
  std::map<std::string, std::string> seen;
  for (const JobEntry& e : entries) {
    if (!e.readable)
      continue;
    const auto [it, fresh] = seen.emplace(e.job.name, e.pointer);
    if (!fresh) {
      add(problems, r, e.pointer + "/name",
          "job name \"" + e.job.name + "\" is also the name of " + it->second);
    }
  }
}

// Places the jobs that passed every check; a job that does not fit is a problem.
void place(const JsonReader& r, const ClusterSpec& fabric, std::vector<JobEntry>& entries,
           std::vector<InputProblem>& problems) {
  std::vector<PlacementRequest> requests;
  for (const JobEntry& e : entries)
    requests.push_back(e.request);
  const PlacementOutcome placed = place_jobs(fabric, requests);
  for (const auto& [index, message] : placed.problems) {
    add(problems, r, entries[index].pointer + "/placement",
        "job \"" + entries[index].job.name + "\" " + message);
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].job.nodes = placed.nodes[i];
    entries[i].job.policy = entries[i].request.policy;
  }
}

// Each job's nodes and layout on the fabric, and all jobs together within it.
void check_jobs_fit(const JsonReader& r, const ClusterSpec& fabric, std::vector<JobEntry>& entries,
                    std::vector<InputProblem>& problems) {
  int needed_nodes = 0;
  for (JobEntry& e : entries) {
    if (!e.readable)
      continue;
    const int nodes = check_whole_nodes(r, fabric, e, problems);
    if (nodes > 0) {
      e.request.num_nodes = nodes;
      needed_nodes += nodes;
      check_layout(r, fabric, e, nodes, problems);
    }
  }
  if (needed_nodes > fabric.num_nodes) {
    add(problems, r, r.pointer_to("jobs"),
        "the jobs need " + std::to_string(needed_nodes) + " nodes; the fabric has " +
            std::to_string(fabric.num_nodes));
  }
}

// Rejects unknown keys and throws every problem found so far, key problems first (alone when a
// stand-in for a missing key may have caused the others).
void finish_with(JsonReader& r, const std::vector<InputProblem>& problems) {
  try {
    r.finish();
  } catch (const InputError&) {
    if (problems.empty())
      throw;
  }
  if (problems.empty())
    return;
  // A reader's error repeats the key problems recorded before it: each problem once.
  const InputError merged = r.with_key_problems(InputError(problems));
  std::vector<InputProblem> all;
  for (const InputProblem& p : merged.problems()) {
    const bool seen = std::any_of(all.begin(), all.end(), [&](const InputProblem& q) {
      return q.file == p.file && q.pointer == p.pointer && q.message == p.message;
    });
    if (!seen)
      all.push_back(p);
  }
  throw InputError(std::move(all));
}

// The shared run's iterations per job (docs/cluster.md, "Steady state"); the most iterations
// keep a run of every GPU of several jobs within a few times one iteration's cost.
FabricSchedule read_schedule(JsonReader& r) {
  FabricSchedule out;
  auto schedule = r.optional_object("schedule");
  if (!schedule)
    return out;
  constexpr int kMaxIterations = 16;
  out.warmup_iterations = static_cast<int>(
      schedule->optional_int("warmup_iterations", out.warmup_iterations, 0, kMaxIterations));
  out.measured_iterations = static_cast<int>(
      schedule->optional_int("measured_iterations", out.measured_iterations, 1, kMaxIterations));
  out.staggered = schedule->optional_bool("staggered", out.staggered);
  schedule->finish();
  return out;
}

}  // namespace

bool is_cluster_document(const nlohmann::json& doc) {
  if (!doc.is_object())
    return false;
  const auto schema = doc.find("schema");
  // Any version: the reader then names the one it knows.
  return schema != doc.end() && schema->is_string() &&
         schema->get<std::string>().starts_with("capsim.cluster/");
}

SharedCluster read_shared_cluster(JsonReader& r, const std::string& base_dir, Catalog& catalog) {
  SharedCluster out;
  r.expect_schema(kClusterSchema);
  out.name = r.optional_string("name", "cluster");
  out.profile_path = r.optional_string("profile", "");
  if (r.has("profile") && out.profile_path.empty())
    throw r.error("profile", "expected a profile file path, got \"\"");
  std::vector<InputProblem> problems;
  if (r.has("profile") && r.json().at("profile").is_string() &&
      fabric_names_unknown_gpu(r.json(), catalog))
    define_gpu_of_profile(out.profile_path, r.file(), r.pointer_to("profile"), catalog);
  bool fabric_read = false;
  try {
    auto fabric = r.object("fabric");
    out.fabric = read_cluster(fabric, catalog);
    fabric_read = true;
  } catch (const InputError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
  try {
    out.schedule = read_schedule(r);
  } catch (const InputError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  }
  const std::vector<nlohmann::json> jobs = r.array("jobs", 1);
  std::vector<JobEntry> entries;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string pointer = r.pointer_to("jobs") + "/" + std::to_string(i);
    try {
      entries.push_back(read_job(jobs[i], r, pointer, base_dir, catalog));
    } catch (const InputError& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
      JobEntry failed;
      failed.pointer = pointer;
      entries.push_back(std::move(failed));
    }
  }
  if (fabric_read) {
    check_names(r, entries, problems);
    check_explicit_nodes(r, out.fabric, entries, problems);
    check_jobs_fit(r, out.fabric, entries, problems);
  }
  finish_with(r, problems);
  place(r, out.fabric, entries, problems);
  if (!problems.empty())
    throw InputError(problems);
  for (JobEntry& e : entries) {
    e.job.scenario.name = e.job.name;
    out.jobs.push_back(std::move(e.job));
  }
  return out;
}

SharedCluster load_shared_cluster(const std::string& path, Catalog& catalog) {
  const nlohmann::json doc = JsonReader::parse_file(path);
  const std::string base_dir = fs::path(path).parent_path().string();
  SharedCluster out = JsonReader::read_document(doc, path, [&](JsonReader& reader) {
    return read_shared_cluster(reader, base_dir, catalog);
  });
  if (!out.profile_path.empty())
    out.profile_path = resolve_profile_path(out.profile_path, path, "/profile");
  for (FabricJob& job : out.jobs)
    job.scenario.profile_path = out.profile_path;
  return out;
}

}  // namespace capsim::io
