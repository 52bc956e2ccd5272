#include "io/instance_io.hpp"

#include "models/cluster_spec.hpp"

#include "io/gpu_spec_io.hpp"

namespace capsim::io {

void check_nics_serve_gpus(const JsonReader& inter, int gpus_per_node, int nics_per_node) {
  if (gpus_per_node % nics_per_node == 0 || nics_per_node % gpus_per_node == 0)
    return;
  throw inter.error("nics_per_node", std::to_string(nics_per_node) + " NICs cannot serve " +
                                         std::to_string(gpus_per_node) +
                                         " GPUs per node evenly; expected a divisor or a "
                                         "multiple of " +
                                         std::to_string(gpus_per_node));
}

void read_instance_definition(JsonReader& item, const std::string& name, Catalog& catalog) {
  InstanceSpec inst{};
  inst.name = name;
  inst.gpu = read_gpu_name_or_definition(item, "gpu", catalog);
  inst.gpus_per_node = static_cast<int>(item.required_int("gpus_per_node", 1, kMaxGpusPerNode));
  JsonReader inter = item.object("inter_node");
  inst.fabric = inter.required_enum("fabric", {"infiniband", "roce", "efa", "ethernet", "omni-path",
                                               "slingshot", "tcpx", "tcpxo"});
  inst.nics_per_node = static_cast<int>(inter.required_int("nics_per_node", 1, kMaxGpusPerNode));
  check_nics_serve_gpus(inter, inst.gpus_per_node, inst.nics_per_node);
  inst.nic_bandwidth_bytes_per_s = inter.required_bandwidth("nic_bandwidth");
  inter.finish();
  inst.price_source = "defined in " + item.file();
  item.throw_key_problems();  // the catalog keeps a definition: never one with stand-ins
  const std::string problem = catalog.define_instance(inst);
  if (!problem.empty())
    throw item.error("name", problem);
}

}  // namespace capsim::io
