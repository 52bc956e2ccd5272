// The catalog value: built-in GPUs and instance types, plus the definitions added to one value
// and to no other.
#include "models/catalog.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace capsim {
namespace {

GpuSpec new_gpu(const std::string& name, int sms = 148) {
  GpuSpec g = *builtin_catalog().find_gpu("H100-SXM5-80GB");
  g.name = name;
  g.architecture = "blackwell";
  g.num_sms = sms;
  return g;
}

InstanceSpec new_instance(const std::string& name, const GpuSpec& gpu) {
  InstanceSpec inst = *builtin_catalog().find_instance("p5.48xlarge");
  inst.name = name;
  inst.gpu = gpu;
  return inst;
}

TEST(CatalogTest, AFreshCatalogHoldsTheBuiltInsAlone) {
  const Catalog catalog;
  for (const GpuSpec& gpu : builtin_gpus()) {
    ASSERT_NE(catalog.find_gpu(gpu.name), nullptr) << gpu.name;
    EXPECT_EQ(*catalog.find_gpu(gpu.name), gpu);
    EXPECT_TRUE(is_builtin_gpu(gpu.name));
  }
  const std::vector<std::string> names = catalog.gpu_names();
  EXPECT_EQ(names.size(), builtin_gpus().size());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(catalog.instance_names(), builtin_catalog().instance_names());
  EXPECT_EQ(catalog.instance_names().front(), "p4d.24xlarge");
  EXPECT_EQ(catalog.find_instance("p4d.24xlarge")->gpu.name, "A100-SXM4-40GB");
  EXPECT_EQ(catalog.find_gpu("B200"), nullptr);
  EXPECT_FALSE(is_builtin_gpu("B200"));
}

TEST(CatalogTest, DefinitionsFollowTheirRules) {
  Catalog catalog;
  const GpuSpec g = new_gpu("Catalog-GPU");
  EXPECT_EQ(catalog.define_gpu(g), "");
  ASSERT_NE(catalog.find_gpu("Catalog-GPU"), nullptr);
  EXPECT_EQ(*catalog.find_gpu("Catalog-GPU"), g);
  const auto names = catalog.gpu_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "Catalog-GPU"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  // The same figures again change nothing; other figures under that name are refused.
  EXPECT_EQ(catalog.define_gpu(g), "");
  EXPECT_EQ(catalog.gpu_names(), names);
  EXPECT_EQ(catalog.define_gpu(new_gpu("Catalog-GPU", 132)),
            "GPU \"Catalog-GPU\" is already defined with other figures");
  EXPECT_EQ(catalog.define_gpu(new_gpu("A100-SXM4-80GB")),
            "\"A100-SXM4-80GB\" is a built-in GPU; give the definition another name");
  EXPECT_FALSE(is_builtin_gpu("Catalog-GPU"));
}

TEST(CatalogTest, AnInstanceNeedsThisCatalogsGpu) {
  Catalog catalog;
  const GpuSpec g = new_gpu("Node-GPU");
  EXPECT_EQ(catalog.define_instance(new_instance("node", g)), "unknown GPU \"Node-GPU\"");
  ASSERT_EQ(catalog.define_gpu(g), "");
  EXPECT_EQ(catalog.define_instance(new_instance("node", new_gpu("Node-GPU", 100))),
            "unknown GPU \"Node-GPU\"");
  EXPECT_EQ(catalog.define_instance(new_instance("node", g)), "");
  EXPECT_EQ(catalog.find_instance("node")->gpu, g);
  EXPECT_EQ(catalog.instance_names().back(), "node");
  EXPECT_EQ(catalog.define_instance(new_instance("dgx-h100", g)),
            "\"dgx-h100\" is a built-in instance; give the definition another name");
  EXPECT_FALSE(is_builtin_instance("node"));
  EXPECT_TRUE(is_builtin_instance("dgx-h100"));
}

// Two inputs read into two catalogs may define one name differently; neither sees the other's,
// and the built-in catalog sees neither.
TEST(CatalogTest, DefinitionsStayInTheirValue) {
  Catalog first;
  Catalog second;
  ASSERT_EQ(first.define_gpu(new_gpu("Shared-Name", 148)), "");
  EXPECT_EQ(second.find_gpu("Shared-Name"), nullptr);
  ASSERT_EQ(second.define_gpu(new_gpu("Shared-Name", 100)), "");
  EXPECT_EQ(first.find_gpu("Shared-Name")->num_sms, 148);
  EXPECT_EQ(second.find_gpu("Shared-Name")->num_sms, 100);
  EXPECT_EQ(builtin_catalog().find_gpu("Shared-Name"), nullptr);
  EXPECT_EQ(builtin_catalog().gpu_names().size(), builtin_gpus().size());

  Catalog copy = first;
  ASSERT_EQ(copy.define_gpu(new_gpu("Copy-Only")), "");
  EXPECT_EQ(first.find_gpu("Copy-Only"), nullptr);
  EXPECT_NE(copy.find_gpu("Shared-Name"), nullptr);
}

// A catalog takes any number of definitions, and what find_gpu returned stays valid as more come.
TEST(CatalogTest, TakesManyDefinitionsAndKeepsTheirAddresses) {
  Catalog catalog;
  ASSERT_EQ(catalog.define_gpu(new_gpu("gpu-0")), "");
  const GpuSpec* first = catalog.find_gpu("gpu-0");
  for (int i = 1; i < 1000; ++i)
    ASSERT_EQ(catalog.define_gpu(new_gpu("gpu-" + std::to_string(i), 1 + i)), "") << i;
  EXPECT_EQ(catalog.find_gpu("gpu-0"), first);
  EXPECT_EQ(first->name, "gpu-0");
  EXPECT_EQ(catalog.find_gpu("gpu-999")->num_sms, 1000);
  EXPECT_EQ(catalog.gpu_names().size(), builtin_gpus().size() + 1000);
}

}  // namespace
}  // namespace capsim

namespace capsim {
namespace {

// Every built-in instance is priced with its source; the rack-scale ones are trays of a 72-GPU
// NVLink domain.
TEST(CatalogTest, BlackwellInstances) {
  for (const InstanceSpec& i : builtin_instances()) {
    EXPECT_GT(i.on_demand_usd_per_hour, 0.0) << i.name;
    EXPECT_FALSE(i.price_source.empty()) << i.name;
    EXPECT_EQ(i.nics_per_node % i.gpus_per_node == 0 || i.gpus_per_node % i.nics_per_node == 0,
              true)
        << i.name;
  }
  const Catalog& c = builtin_catalog();
  ASSERT_NE(c.find_instance("p6-b200.48xlarge"), nullptr);
  EXPECT_EQ(c.find_instance("p6-b200.48xlarge")->gpu.name, "B200-SXM-180GB");
  EXPECT_DOUBLE_EQ(c.find_instance("p6-b200.48xlarge")->on_demand_usd_per_hour, 113.9328);
  EXPECT_EQ(c.find_instance("p6-b300.48xlarge")->gpu.name, "B300-SXM-288GB");
  EXPECT_DOUBLE_EQ(c.find_instance("coreweave-gb200-4x")->on_demand_usd_per_hour, 42.00);
  for (const char* rack : {"gb200-nvl72", "gb300-nvl72", "coreweave-gb200-4x"}) {
    const InstanceSpec& i = *c.find_instance(rack);
    EXPECT_EQ(i.gpus_per_node, 4) << rack;
    EXPECT_EQ(i.nvlink_domain, 72) << rack;
    EXPECT_EQ(i.nics_per_node, 4) << rack;
  }
  EXPECT_EQ(c.find_instance("gb300-nvl72")->gpu.name, "GB300-NVL-288GB");
  EXPECT_EQ(c.find_instance("dgx-b200")->nvlink_domain, 0);  // one node's NVSwitch
  // The amortised rack: ($3.1M / 36 months + 132 kW x 1.5 x $0.12/kWh) / 18 trays.
  EXPECT_NEAR(c.find_instance("gb200-nvl72")->on_demand_usd_per_hour,
              (3.1e6 / (36.0 * 730.0) + 132.0 * 1.5 * 0.12) / 18.0, 0.005);
}

}  // namespace
}  // namespace capsim
