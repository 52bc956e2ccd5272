#include "io/fabric_result_io.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

#include "io/result_io.hpp"
#include "io/rounding.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

double g(double v) {
  return round_significant(v);
}

// Links by utilisation, the busiest first (ties: the report's link order).
std::vector<std::size_t> hottest(const FabricContention& c) {
  std::vector<std::size_t> order(c.links.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return c.links[a].utilization > c.links[b].utilization;
  });
  order.resize(std::min(order.size(), kHottestLinks));
  return order;
}

// The jobs whose flows crossed the link, in cluster order.
std::vector<std::string> jobs_on(const FabricContention& c, const LinkLoad& link) {
  std::vector<std::string> names;
  for (std::size_t j = 0; j < link.job_bytes.size() && j < c.jobs.size(); ++j) {
    if (link.job_bytes[j] > 0.0)
      names.push_back(c.jobs[j].name);
  }
  return names;
}

nlohmann::json job_json(const JobContention& job) {
  return {{"name", job.name},
          {"nodes", job.nodes},
          {"num_gpus", job.shared.num_gpus},
          {"iteration_time_alone_s", g(job.alone.iteration_time_s)},
          {"iteration_time_shared_s", g(job.shared.iteration_time_s)},
          {"slowdown", g(job.slowdown())},
          {"alone", result_to_json(job.alone)},
          {"shared", result_to_json(job.shared)}};
}

nlohmann::json link_json(const FabricContention& c, const LinkLoad& link) {
  nlohmann::json per_job = nlohmann::json::object();
  for (std::size_t j = 0; j < link.job_bytes.size() && j < c.jobs.size(); ++j) {
    if (link.job_bytes[j] > 0.0)
      per_job[c.jobs[j].name] = g(link.job_bytes[j]);
  }
  return {{"name", link.name},
          {"capacity_bytes_per_s", g(link.capacity_bytes_per_s)},
          {"bytes", g(link.bytes)},
          {"utilization", g(link.utilization)},
          {"job_bytes", per_job}};
}

// The exposed time a job waits on the network: PP and DP communication not hidden by compute.
double exposed_network_s(const SimulationResult& r) {
  return r.breakdown.pp_comm_exposed_s + r.breakdown.dp_comm_exposed_s;
}

// A job's nodes for the table: sorted ranges, or their count and runs when that is long.
std::string nodes_cell(std::vector<int> nodes) {
  constexpr std::size_t kWidth = 18;
  std::sort(nodes.begin(), nodes.end());
  const std::string ranges = node_ranges(nodes);
  if (ranges.size() <= kWidth)
    return ranges;
  const auto runs = static_cast<std::size_t>(std::count(ranges.begin(), ranges.end(), ',')) + 1;
  return printf_string("%zu in %zu runs", nodes.size(), runs);
}

}  // namespace

std::string node_ranges(const std::vector<int>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size();) {
    std::size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1)
      ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(nodes[i]);
    if (j > i)
      out += "-" + std::to_string(nodes[j]);
    i = j + 1;
  }
  return out;
}

nlohmann::json fabric_contention_to_json(const FabricContention& c) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobContention& job : c.jobs)
    jobs.push_back(job_json(job));
  nlohmann::json links = nlohmann::json::array();
  for (const LinkLoad& link : c.links)
    links.push_back(link_json(c, link));
  nlohmann::json hot = nlohmann::json::array();
  for (const std::size_t i : hottest(c)) {
    hot.push_back({{"name", c.links[i].name},
                   {"utilization", g(c.links[i].utilization)},
                   {"jobs", jobs_on(c, c.links[i])}});
  }
  const nlohmann::json schedule = {{"warmup_iterations", c.schedule.warmup_iterations},
                                   {"measured_iterations", c.schedule.measured_iterations},
                                   {"staggered", c.schedule.staggered}};
  return {{"name", c.name},       {"engine", "event"}, {"makespan_s", g(c.makespan_s)},
          {"schedule", schedule}, {"jobs", jobs},      {"links", links},
          {"hottest_links", hot}};
}

std::string fabric_contention_table(const FabricContention& c) {
  const FabricSchedule& s = c.schedule;
  std::string out = printf_string(
      "cluster %s: %zu job(s), shared run %.4g s (per job %d warm-up + %d measured "
      "iteration(s), %s starts)\n",
      c.name.c_str(), c.jobs.size(), c.makespan_s, s.warmup_iterations, s.measured_iterations,
      s.staggered ? "staggered" : "aligned");
  out += printf_string("  %-16s %-18s %6s %11s %11s %9s %14s %14s\n", "job", "nodes", "GPUs",
                       "alone (s)", "shared (s)", "slowdown", "net alone (s)", "net shared (s)");
  for (const JobContention& job : c.jobs) {
    out += printf_string("  %-16s %-18s %6d %11.4f %11.4f %8.3fx %14.4f %14.4f\n", job.name.c_str(),
                         nodes_cell(job.nodes).c_str(), job.shared.num_gpus,
                         job.alone.iteration_time_s, job.shared.iteration_time_s, job.slowdown(),
                         exposed_network_s(job.alone), exposed_network_s(job.shared));
  }
  if (c.links.empty())
    return out + "  no traffic left a node\n";
  out += printf_string("hottest links (of %zu that carried traffic)\n", c.links.size());
  out += printf_string("  %-28s %12s %12s  %s\n", "link", "GB/s", "utilisation",
                       "jobs (share of bytes)");
  for (const std::size_t i : hottest(c)) {
    const LinkLoad& link = c.links[i];
    std::string shares;
    for (std::size_t j = 0; j < link.job_bytes.size() && j < c.jobs.size(); ++j) {
      if (link.job_bytes[j] <= 0.0)
        continue;
      shares +=
          (shares.empty() ? "" : ", ") + printf_string("%s %.0f%%", c.jobs[j].name.c_str(),
                                                       100.0 * link.job_bytes[j] / link.bytes);
    }
    out += printf_string("  %-28s %12.1f %11.1f%%  %s\n", link.name.c_str(),
                         link.capacity_bytes_per_s / 1e9, 100.0 * link.utilization, shares.c_str());
  }
  return out;
}

}  // namespace capsim::io
