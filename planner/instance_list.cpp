#include "planner/instance_list.hpp"

#include "io/text_format.hpp"

namespace capsim::planner {
namespace {

constexpr double kGbitBytesPerS = 1e9 / 8.0;

// A price as "$12.34", or "-" when the instance is not offered that way.
std::string price_text(double usd_per_hour) {
  return usd_per_hour > 0.0 ? io::printf_string("$%.2f", usd_per_hour) : "-";
}

int nvlink_domain_of(const InstanceSpec& instance) {
  return instance.nvlink_domain > 0 ? instance.nvlink_domain : instance.gpus_per_node;
}

}  // namespace

std::string instance_list_table(const Catalog& catalog) {
  std::string out = io::printf_string("%-20s %-16s %5s %7s %-11s %-13s %10s %10s %10s  %s\n",
                                      "instance", "gpu", "gpus", "nvlink", "fabric", "nics",
                                      "on-demand", "cap.block", "reserved", "price source (USD/h)");
  for (const std::string& name : catalog.instance_names()) {
    const InstanceSpec& i = *catalog.find_instance(name);
    const std::string nics = io::printf_string("%d x %.0fGbps", i.nics_per_node,
                                               i.nic_bandwidth_bytes_per_s / kGbitBytesPerS);
    out += io::printf_string("%-20s %-16s %5d %7d %-11s %-13s %10s %10s %10s  %s\n", i.name.c_str(),
                             i.gpu.name.c_str(), i.gpus_per_node, nvlink_domain_of(i),
                             i.fabric.c_str(), nics.c_str(),
                             price_text(i.on_demand_usd_per_hour).c_str(),
                             price_text(i.capacity_block_usd_per_hour).c_str(),
                             price_text(i.reserved_usd_per_hour).c_str(), i.price_source.c_str());
  }
  return out;
}

nlohmann::json instance_list_json(const Catalog& catalog) {
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& name : catalog.instance_names()) {
    const InstanceSpec& i = *catalog.find_instance(name);
    list.push_back({{"name", i.name},
                    {"gpu", i.gpu.name},
                    {"gpus_per_node", i.gpus_per_node},
                    {"nvlink_domain", nvlink_domain_of(i)},
                    {"fabric", i.fabric},
                    {"nics_per_node", i.nics_per_node},
                    {"nic_bandwidth",
                     io::printf_string("%.0fGbps", i.nic_bandwidth_bytes_per_s / kGbitBytesPerS)},
                    {"on_demand_usd_per_hour", i.on_demand_usd_per_hour},
                    {"capacity_block_usd_per_hour", i.capacity_block_usd_per_hour},
                    {"reserved_usd_per_hour", i.reserved_usd_per_hour},
                    {"price_source", i.price_source}});
  }
  return {{"instances", list}};
}

}  // namespace capsim::planner
