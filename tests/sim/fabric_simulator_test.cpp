// Several jobs on one fabric (sim/fabric_simulator.hpp, sim/fabric_contention.hpp): shared leaf
// uplinks split by max-min fair sharing, jobs that share nothing unaffected, placement on a
// non-blocking fabric. One simulation per process: each TEST runs in its own (ctest), and runs
// beyond the first go to forked children.
#include "sim/fabric_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/shared_cluster.hpp"
#include "sim/fabric_contention.hpp"

#include "estimate/iteration_model.hpp"
#include "io/cluster_io.hpp"
#include "io/profile_io.hpp"
#include "tests/sim/sim_test_util.hpp"

namespace capsim {
namespace {

// A 13B-parameter GPT job of tensor 8 x data `data` whose gradients are reduced after its last
// backward (overlap_grad_reduce false): its DP ring flows all run in the exposed tail.
nlohmann::json dp_job(const std::string& name, int data) {
  return {{"name", name},
          {"model",
           {{"name", "GPT 13B"},
            {"num_layers", 40},
            {"hidden_size", 5120},
            {"num_attention_heads", 40},
            {"seq_length", 2048},
            {"vocab_size", 51200}}},
          {"parallelism",
           {{"tensor", 8},
            {"pipeline", 1},
            {"data", data},
            {"micro_batch_size", 1},
            {"global_batch_size", 8 * data},
            {"overlap_grad_reduce", false}}}};
}

// A100 nodes with 8 x 200 Gb/s NICs; `oversubscription` > 1 puts `nodes_per_leaf` nodes under
// each leaf switch.
nlohmann::json fabric(int nodes, double oversubscription, int nodes_per_leaf) {
  nlohmann::json inter = {{"fabric", "infiniband"},
                          {"nics_per_node", 8},
                          {"nic_bandwidth", "200Gbps"},
                          {"topology", oversubscription > 1.0 ? "oversubscribed" : "fat-tree"}};
  if (oversubscription > 1.0) {
    inter["oversubscription"] = oversubscription;
    inter["nodes_per_leaf"] = nodes_per_leaf;
  }
  return {
      {"gpu", "A100-SXM4-80GB"}, {"gpus_per_node", 8}, {"num_nodes", nodes}, {"inter_node", inter}};
}

// One iteration per job, all starting at 0: the jobs' DP tails coincide, as the hand
// computations below assume.
const nlohmann::json kAligned = {
    {"warmup_iterations", 0}, {"measured_iterations", 1}, {"staggered", false}};

// The same nodes and NICs as a rail-optimized fabric: groups of `nodes_per_group` nodes whose NIC
// i reaches rail switch i, each rail switch's uplinks `oversubscription` times thinner than its
// downlinks.
nlohmann::json rail_fabric(int nodes, double oversubscription, int nodes_per_group) {
  nlohmann::json f = fabric(nodes, oversubscription, nodes_per_group);
  f["inter_node"]["topology"] = "rail-optimized";
  return f;
}

SharedCluster read_cluster(const nlohmann::json& doc) {
  io::JsonReader reader(doc, "cluster.json");
  Catalog catalog;
  return io::read_shared_cluster(reader, "", catalog);
}

const LinkLoad& link_named(const FabricContention& c, const std::string& name) {
  const auto it = std::find_if(c.links.begin(), c.links.end(),
                               [&](const LinkLoad& l) { return l.name == name; });
  EXPECT_NE(it, c.links.end()) << name;
  return *it;
}

// Two identical jobs, each with one node under leaf 0 and one under leaf 1 of a 2:1
// oversubscribed fabric: each node's 8 DP ring flows (one per GPU, 25 GB/s NIC each) leave the
// leaf. Leaf uplinks: 2 nodes x 200 GB/s / 2 = 200 GB/s per direction. Alone, a job's 8 flows
// fit (min(25, 200/8) = 25 GB/s each); shared, 16 flows split it max-min fairly: 12.5 GB/s.
// So each GPU's W ring bytes take W/12.5 instead of W/25 GB/s: the exposed DP time grows by
// exactly that difference.
TEST(FabricSimulatorTest, SharedSpineSplitsLikeMaxMinFairSharing) {
  nlohmann::json a = dp_job("a", 2);
  a["nodes"] = {0, 2};
  nlohmann::json b = dp_job("b", 2);
  b["nodes"] = {1, 3};
  const SharedCluster cluster = read_cluster({{"schema", "capsim.cluster/v1"},
                                              {"fabric", fabric(4, 2.0, 2)},
                                              {"schedule", kAligned},
                                              {"jobs", {a, b}}});
  const HardwareProfile profile = io::resolve_profile(cluster.jobs[0].scenario);
  const FabricContention c = sim::measure_fabric_contention(cluster, profile);

  const double nic_bytes_per_s = 200e9 / 8;
  const double uplink_bytes_per_s = 2 * 8 * nic_bytes_per_s / 2.0;
  const LinkLoad& up = link_named(c, "leaf 0 uplinks (up)");
  EXPECT_DOUBLE_EQ(up.capacity_bytes_per_s, uplink_bytes_per_s);
  ASSERT_EQ(up.job_bytes.size(), 2u);
  EXPECT_DOUBLE_EQ(up.job_bytes[0], up.job_bytes[1]);
  const double flows_alone = 8;
  const double flows_shared = 16;
  const double rate_alone = std::min(nic_bytes_per_s, uplink_bytes_per_s / flows_alone);
  const double rate_shared = std::min(nic_bytes_per_s, uplink_bytes_per_s / flows_shared);
  const double gpu_bytes = up.job_bytes[0] / flows_alone;  // one node's 8 GPUs, one flow each
  const double expected_extra_s = gpu_bytes / rate_shared - gpu_bytes / rate_alone;
  ASSERT_GT(expected_extra_s, 0.01);
  for (const JobContention& job : c.jobs) {
    const double alone_s = job.alone.breakdown.dp_comm_exposed_s;
    const double shared_s = job.shared.breakdown.dp_comm_exposed_s;
    // Tolerance: SimGrid's max-min precision (1e-9 relative here) and flow byte rounding.
    EXPECT_NEAR(shared_s - alone_s, expected_extra_s, 1e-6 * expected_extra_s) << job.name;
    EXPECT_NEAR(job.shared.iteration_time_s - job.alone.iteration_time_s, expected_extra_s,
                1e-6 * expected_extra_s)
        << job.name;
  }
}

// A third job on leaf 2 keeps its traffic inside its leaf: its neighbours' contention on the
// other leaves' uplinks leaves its iteration exactly as alone.
TEST(FabricSimulatorTest, JobAloneOnItsLeafIsUnaffected) {
  nlohmann::json a = dp_job("a", 2);
  a["nodes"] = {0, 2};
  nlohmann::json b = dp_job("b", 2);
  b["nodes"] = {1, 3};
  nlohmann::json own_leaf = dp_job("own-leaf", 2);
  own_leaf["placement"] = "leaf-aligned";
  const SharedCluster cluster = read_cluster({{"schema", "capsim.cluster/v1"},
                                              {"fabric", fabric(6, 2.0, 2)},
                                              {"schedule", kAligned},
                                              {"jobs", {a, b, own_leaf}}});
  ASSERT_EQ(cluster.jobs[2].nodes, (std::vector<int>{4, 5}));
  const HardwareProfile profile = io::resolve_profile(cluster.jobs[0].scenario);
  const FabricContention c = sim::measure_fabric_contention(cluster, profile);
  EXPECT_GT(c.jobs[0].slowdown(), 1.01) << "the crossing jobs do contend";
  EXPECT_EQ(c.jobs[2].shared.iteration_time_s, c.jobs[2].alone.iteration_time_s);
  for (const LinkLoad& link : c.links) {
    if (link.name.find("uplinks") != std::string::npos) {
      EXPECT_EQ(link.job_bytes[2], 0.0) << link.name;
    }
  }
}

// The shared-run iteration time of job `job` of `cluster`, in a forked child.
double shared_time_in_child(const SharedCluster& cluster, std::size_t job) {
  const std::string out = test::run_in_child([&] {
    const HardwareProfile profile = io::resolve_profile(cluster.jobs[0].scenario);
    std::vector<IterationCosts> costs;
    for (const FabricJob& j : cluster.jobs)
      costs.push_back(estimate::compute_iteration_costs(j.scenario, profile));
    std::vector<sim::FabricJobInput> inputs;
    for (std::size_t i = 0; i < cluster.jobs.size(); ++i)
      inputs.push_back({&cluster.jobs[i], &costs[i], nullptr});
    const sim::FabricRun run = sim::simulate_fabric(cluster.fabric, inputs, profile);
    return test::format_double(run.jobs[job].iteration_time_s);
  });
  return std::stod(out);
}

// On a non-blocking fabric (fat tree, no oversubscription) moving a pipelined job from a
// fragmented placement among two neighbours to a packed one never makes it slower.
class PackedNeverSlowerTest : public ::testing::TestWithParam<int> {};

TEST_P(PackedNeverSlowerTest, OnNonBlockingFabric) {
  const auto cluster_with = [](const nlohmann::json& placement) {
    nlohmann::json moved = dp_job("moved", 2);
    moved["parallelism"]["pipeline"] = 2;
    moved["parallelism"]["overlap_grad_reduce"] = true;
    for (const auto& [key, value] : placement.items())
      moved[key] = value;
    nlohmann::json left = dp_job("left", 2);
    left["placement"] = "random-fragmented";
    left["seed"] = 11;
    nlohmann::json right = dp_job("right", 2);
    right["placement"] = "spread";
    return read_cluster({{"schema", "capsim.cluster/v1"},
                         {"fabric", fabric(10, 1.0, 1)},
                         {"jobs", {moved, left, right}}});
  };
  const SharedCluster fragmented =
      cluster_with({{"placement", "random-fragmented"}, {"seed", GetParam()}});
  const SharedCluster packed = cluster_with({{"placement", "packed"}});
  ASSERT_NE(fragmented.jobs[0].nodes, packed.jobs[0].nodes) << "seed " << GetParam();
  const double fragmented_s = shared_time_in_child(fragmented, 0);
  const double packed_s = shared_time_in_child(packed, 0);
  ASSERT_GT(packed_s, 0.0);
  EXPECT_LE(packed_s, fragmented_s * (1.0 + 1e-9)) << "seed " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Seeds, PackedNeverSlowerTest, ::testing::Values(1, 2, 3, 4, 5));

// On a rail fabric a flow leaves its group on its GPU's rail: rail r's uplinks carry the flows
// of every node's GPU r, 1/8 of the group's uplink capacity each.
TEST(FabricSimulatorTest, RailFabricFlowsLeaveOnTheirRail) {
  nlohmann::json a = dp_job("a", 2);
  a["nodes"] = {0, 4};
  const SharedCluster cluster = read_cluster(
      {{"schema", "capsim.cluster/v1"}, {"fabric", rail_fabric(8, 4.0, 4)}, {"jobs", {a}}});
  const HardwareProfile profile = io::resolve_profile(cluster.jobs[0].scenario);
  const FabricContention c = sim::measure_fabric_contention(cluster, profile);
  const double rail_uplink_bytes_per_s = 4 * 200e9 / 8 / 4.0;
  const double bytes = link_named(c, "leaf 0 rail 0 uplinks (up)").bytes;
  ASSERT_GT(bytes, 0.0);
  for (int rail = 0; rail < 8; ++rail) {
    for (const char* dir : {"up", "down"}) {
      for (int group = 0; group < 2; ++group) {
        const LinkLoad& link = link_named(c, "leaf " + std::to_string(group) + " rail " +
                                                 std::to_string(rail) + " uplinks (" + dir + ")");
        EXPECT_DOUBLE_EQ(link.capacity_bytes_per_s, rail_uplink_bytes_per_s);
        EXPECT_DOUBLE_EQ(link.bytes, bytes);
      }
    }
  }
}

// Rail-aligned puts a 4-node job in one rail group, where its DP ring never leaves the rail
// switches; a random-fragmented one spans groups and its ring crosses rail uplinks 8:1
// thinner than the NICs, shared with a fragmented neighbour.
class RailAlignedBeatsFragmentedTest : public ::testing::TestWithParam<int> {};

TEST_P(RailAlignedBeatsFragmentedTest, OnARailFabric) {
  const auto cluster_with = [](const nlohmann::json& placement) {
    nlohmann::json moved = dp_job("moved", 4);
    for (const auto& [key, value] : placement.items())
      moved[key] = value;
    nlohmann::json neighbour = dp_job("neighbour", 4);
    neighbour["placement"] = "random-fragmented";
    neighbour["seed"] = 3;
    return read_cluster({{"schema", "capsim.cluster/v1"},
                         {"fabric", rail_fabric(16, 8.0, 4)},
                         {"jobs", {moved, neighbour}}});
  };
  const SharedCluster fragmented =
      cluster_with({{"placement", "random-fragmented"}, {"seed", GetParam()}});
  const SharedCluster aligned = cluster_with({{"placement", "rail-aligned"}});
  ASSERT_EQ(aligned.jobs[0].nodes, (std::vector<int>{0, 1, 2, 3}));
  std::set<int> groups;
  for (const int node : fragmented.jobs[0].nodes)
    groups.insert(node / 4);
  ASSERT_GT(groups.size(), 1u) << "seed " << GetParam();
  const double fragmented_s = shared_time_in_child(fragmented, 0);
  const double aligned_s = shared_time_in_child(aligned, 0);
  ASSERT_GT(aligned_s, 0.0);
  EXPECT_LT(aligned_s, fragmented_s * (1.0 - 1e-3)) << "seed " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Seeds, RailAlignedBeatsFragmentedTest, ::testing::Values(1, 2, 3));

// The default schedule staggers two identical jobs by half an iteration: their exposed DP tails
// (a fraction of the iteration) then never overlap on the shared uplinks, so in the steady
// state neither slows the other, where starting together (SharedSpineSplitsLikeMaxMinFair-
// Sharing) costs each the whole tail's contention.
TEST(FabricSimulatorTest, StaggeredJobsReachTheirSteadyState) {
  nlohmann::json a = dp_job("a", 2);
  a["nodes"] = {0, 2};
  nlohmann::json b = dp_job("b", 2);
  b["nodes"] = {1, 3};
  const SharedCluster cluster = read_cluster(
      {{"schema", "capsim.cluster/v1"}, {"fabric", fabric(4, 2.0, 2)}, {"jobs", {a, b}}});
  ASSERT_EQ(cluster.schedule, (FabricSchedule{1, 2, true}));
  const HardwareProfile profile = io::resolve_profile(cluster.jobs[0].scenario);
  const FabricContention c = sim::measure_fabric_contention(cluster, profile);
  for (const JobContention& job : c.jobs) {
    const double tail_s = job.alone.breakdown.dp_comm_exposed_s;
    ASSERT_GT(tail_s, 0.0);
    ASSERT_LT(tail_s, 0.5 * job.alone.iteration_time_s) << "the tails fit between each other";
    EXPECT_NEAR(job.shared.iteration_time_s, job.alone.iteration_time_s,
                1e-9 * job.alone.iteration_time_s)
        << job.name;
    EXPECT_NEAR(job.shared.breakdown.dp_comm_exposed_s, tail_s, 1e-9 * job.alone.iteration_time_s)
        << job.name;
  }
  // Three iterations each, the second job half an iteration late, and the first keeps
  // iterating until the second has run its three.
  EXPECT_GT(c.makespan_s, 3.5 * c.jobs[0].alone.iteration_time_s);
  EXPECT_EQ(c.schedule, cluster.schedule);
}

// Iterations run back to back on the same ranks: a job alone measured over later iterations
// gets its first iteration's time and breakdown.
TEST(FabricSimulatorTest, LaterIterationsOfAJobAloneEqualItsFirst) {
  nlohmann::json a = dp_job("a", 2);
  a["parallelism"]["pipeline"] = 2;
  a["parallelism"]["overlap_grad_reduce"] = true;
  const SharedCluster cluster =
      read_cluster({{"schema", "capsim.cluster/v1"}, {"fabric", fabric(4, 2.0, 2)}, {"jobs", {a}}});
  const HardwareProfile profile = io::resolve_profile(cluster.jobs[0].scenario);
  const IterationCosts costs = estimate::compute_iteration_costs(cluster.jobs[0].scenario, profile);
  const auto run_with = [&](const FabricSchedule& schedule) {
    return test::run_in_child([&] {
      const sim::FabricRun run = sim::simulate_fabric(
          cluster.fabric, {{&cluster.jobs[0], &costs, nullptr, 0.25}}, profile, schedule);
      const SimulationResult& r = run.jobs.front();
      return test::format_double(r.iteration_time_s) + " " +
             test::format_double(r.breakdown.bubble_s) + " " +
             test::format_double(r.breakdown.dp_comm_exposed_s) + " " +
             test::format_double(r.breakdown.pp_comm_exposed_s);
    });
  };
  const auto numbers = [](const std::string& text) {
    std::vector<double> out;
    std::istringstream in(text);
    for (double v = 0.0; in >> v;)
      out.push_back(v);
    return out;
  };
  const std::vector<double> first = numbers(run_with(FabricSchedule::aligned()));
  const std::vector<double> later = numbers(run_with(FabricSchedule{2, 3, false}));
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(later.size(), 4u);
  EXPECT_GT(first[0], 0.0);
  for (std::size_t k = 0; k < first.size(); ++k)
    EXPECT_NEAR(later[k], first[k], 1e-9 * first[0]) << "value " << k;
}

}  // namespace
}  // namespace capsim
