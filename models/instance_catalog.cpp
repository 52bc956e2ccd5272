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
// Blackwell: AWS p6-b200 and p6-b300 on-demand from the vantage files updated 2026-08-26
// (https://instances.vantage.sh); AWS sells P6e-GB200 UltraServers only as capacity blocks at
// unpublished rates, so they are not listed. CoreWeave on-demand per instance from
// https://www.coreweave.com/pricing, read 2026-09-27 (HGX B200 8 GPUs $68.80/h; GB200 NVL72 4
// GPUs $42.00/h, sold as whole racks of 18; HGX H200 8 GPUs $50.44/h, the same list as quoted in
// February 2026 by kaelresearch.com/blog/gpu-economics-real-inference-costs). On-premises Blackwell
// as the DGX entries: DGX B200 $515k (reported list price, 2025) and 14.3 kW; GB200 NVL72 rack
// $3.1M (SemiAnalysis, August 2025) and 132 kW; GB300 NVL72 rack $3.5M (the middle of the $3-4M
// reported in 2025) and 135 kW; a rack's price and power are split over its 18 trays. NICs: 400
// Gb/s ConnectX-7 per GPU (DGX B200, GB200 NVL72, p6-b200 EFAv4), 800 Gb/s ConnectX-8 per GPU
// (GB300 NVL72, p6-b300).
const std::array<InstanceSpec, 14>& instance_table() {
  static const std::array<InstanceSpec, 14> kInstances{{
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
      {"p6-b200.48xlarge", gpu("B200-SXM-180GB"), 8, "efa", 8, 400 * kGbit, 113.9328, 0.0, 0.0,
       "AWS us-east-1 on-demand (instances.vantage.sh via tsaol/aws-gpu, updated 2026-08-26)"},
      {"p6-b300.48xlarge", gpu("B300-SXM-288GB"), 8, "efa", 8, 800 * kGbit, 142.416, 0.0, 0.0,
       "AWS us-east-1 on-demand (instances.vantage.sh via tsaol/aws-gpu, updated 2026-08-26)"},
      {"coreweave-h200", gpu("H200-SXM-141GB"), 8, "infiniband", 8, 400 * kGbit, 50.44, 0.0, 0.0,
       "CoreWeave on-demand, https://www.coreweave.com/pricing (HGX H200 list of February 2026)"},
      {"coreweave-b200", gpu("B200-SXM-180GB"), 8, "infiniband", 8, 400 * kGbit, 68.80, 0.0, 0.0,
       "CoreWeave on-demand, https://www.coreweave.com/pricing (read 2026-09-27)"},
      {"coreweave-gb200-4x", gpu("GB200-NVL-186GB"), 4, "infiniband", 4, 400 * kGbit, 42.00, 0.0,
       0.0,
       "CoreWeave on-demand per 4-GPU tray, whole racks of 18, "
       "https://www.coreweave.com/pricing (read 2026-09-27)",
       72},
      {"dgx-b200", gpu("B200-SXM-180GB"), 8, "infiniband", 8, 400 * kGbit, 22.17, 0.0, 0.0,
       "amortisation assumption: $515k over 36 months + 14.3 kW at 1.5 PUE, $0.12/kWh"},
      {"gb200-nvl72", gpu("GB200-NVL-186GB"), 4, "infiniband", 4, 400 * kGbit, 7.87, 0.0, 0.0,
       "amortisation assumption per tray: a $3.1M rack over 36 months + 132 kW at 1.5 PUE, "
       "$0.12/kWh, over 18 trays",
       72},
      {"gb300-nvl72", gpu("GB300-NVL-288GB"), 4, "infiniband", 4, 800 * kGbit, 8.75, 0.0, 0.0,
       "amortisation assumption per tray: a $3.5M rack over 36 months + 135 kW at 1.5 PUE, "
       "$0.12/kWh, over 18 trays",
       72},
  }};
  return kInstances;
}

}  // namespace

std::span<const InstanceSpec> builtin_instances() {
  return instance_table();
}

bool is_builtin_instance(const std::string& name) {
  const std::span<const InstanceSpec> all = builtin_instances();
  return std::any_of(all.begin(), all.end(), [&](const InstanceSpec& i) { return i.name == name; });
}

}  // namespace capsim
