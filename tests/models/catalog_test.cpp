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
