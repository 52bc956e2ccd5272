#include "models/instance_catalog.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace capsim {
namespace {

constexpr double kGbit = 1e9 / 8.0;  // bytes/s in one Gb/s

const GpuSpec& gpu(const std::string& name) {
  const std::span<const GpuSpec> gpus = builtin_gpus();
  return *std::find_if(gpus.begin(), gpus.end(), [&](const GpuSpec& g) { return g.name == name; });
}

// Prices and NIC counts: docs/design/autoscaling.md §2.2-2.4 and
// docs/design/hardware-facts.md §2.
// AWS on-demand prices are us-east-1 Linux after the June 2025 price cut (vantage data in
// tsaol/aws-gpu data/*_instances.js, read 2026); capacity blocks from the AWS capacity-blocks
// pricing page (rates valid until 2025-01-01); "reserved" from the same vantage files.
// DGX prices are an amortisation assumption, not a quote: list price (DGX A100 $199k, May 2020
// launch; DGX H100 ~$373k reported 2023) over 36 months plus power at 1.5 PUE and $0.12/kWh
// (6.5 kW and 10.2 kW max draw). Users override them in plans.
const std::array<InstanceSpec, 6>& catalog() {
  static const std::array<InstanceSpec, 6> kInstances{{
      {"p4d.24xlarge", gpu("A100-SXM4-40GB"), 8, "efa", 4, 100 * kGbit, 21.957642, 14.75, 13.92,
       "AWS us-east-1 on-demand after 2025-06 cut (vantage via tsaol/aws-gpu); capacity block "
       "AWS pricing page 2024"},
      {"p4de.24xlarge", gpu("A100-SXM4-80GB"), 8, "efa", 4, 100 * kGbit, 27.44705, 0.0, 17.40,
       "AWS us-east-1 on-demand after 2025-06 cut (vantage via tsaol/aws-gpu)"},
      {"p5.48xlarge", gpu("H100-SXM5-80GB"), 8, "efa", 32, 100 * kGbit, 55.04, 39.33, 0.0,
       "AWS us-east-1 on-demand after 2025-06 cut (vantage via tsaol/aws-gpu); capacity block "
       "AWS pricing page 2024"},
      {"p5en.48xlarge", gpu("H200-SXM-141GB"), 8, "efa", 16, 200 * kGbit, 63.296, 0.0, 0.0,
       "AWS us-east/west on-demand, Aug 2026 (dstack PR #4110)"},
      {"dgx-a100", gpu("A100-SXM4-80GB"), 8, "infiniband", 8, 200 * kGbit, 8.74, 0.0, 0.0,
       "amortisation assumption: $199k over 36 months + 6.5 kW at 1.5 PUE, $0.12/kWh"},
      {"dgx-h100", gpu("H100-SXM5-80GB"), 8, "infiniband", 8, 400 * kGbit, 16.03, 0.0, 0.0,
       "amortisation assumption: $373k over 36 months + 10.2 kW at 1.5 PUE, $0.12/kWh"},
  }};
  return kInstances;
}

}  // namespace

std::span<const InstanceSpec> builtin_instances() {
  return catalog();
}

bool is_builtin_instance(const std::string& name) {
  const std::span<const InstanceSpec> all = builtin_instances();
  return std::any_of(all.begin(), all.end(), [&](const InstanceSpec& i) { return i.name == name; });
}

}  // namespace capsim
