// `capsim simulate CLUSTER.json`: the cluster reader (capsim.cluster/v1, with the scenario files
// its jobs name) on any bytes, the placement it resolves, then the analytic estimate of each job.
// The shared-fabric run itself is a SimGrid simulation per input, too slow here; tests/sim runs it.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "io/cluster_io.hpp"
#include "io/profile_io.hpp"
#include "tests/fuzz/targets/analytic_check.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("cluster.json", fuzz::as_text(data, size));
    Catalog catalog;
    const SharedCluster cluster = io::load_shared_cluster(path, catalog);
    fuzz::require(!cluster.jobs.empty(), "load_shared_cluster: no job");
    std::set<int> used;
    for (const FabricJob& job : cluster.jobs) {
      const int gpus = job.scenario.parallelism.num_gpus();
      fuzz::require(static_cast<long long>(job.nodes.size()) * cluster.fabric.gpus_per_node == gpus,
                    "placement: the job's nodes do not hold its GPUs");
      for (const int node : job.nodes) {
        fuzz::require(node >= 0 && node < cluster.fabric.num_nodes, "placement: node outside");
        fuzz::require(used.insert(node).second, "placement: a node placed twice");
      }
      fuzz::check_estimate(job.scenario, io::resolve_profile(job.scenario));
    }
  });
  return 0;
}
