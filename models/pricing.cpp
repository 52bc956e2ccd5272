#include "models/pricing.hpp"

namespace capsim {

const char* to_string(Pricing pricing) {
  switch (pricing) {
    case Pricing::kOnDemand:
      return "on-demand";
    case Pricing::kSpot:
      return "spot";
    case Pricing::kCapacityBlock:
      return "capacity-block";
    case Pricing::kReserved:
      return "reserved";
  }
  return "?";
}

std::optional<Pricing> pricing_from_string(std::string_view name) {
  for (Pricing p :
       {Pricing::kOnDemand, Pricing::kSpot, Pricing::kCapacityBlock, Pricing::kReserved}) {
    if (name == to_string(p))
      return p;
  }
  return std::nullopt;
}

double catalog_price_usd_per_hour(const InstanceSpec& instance, Pricing pricing) {
  switch (pricing) {
    case Pricing::kOnDemand:
      return instance.on_demand_usd_per_hour;
    case Pricing::kCapacityBlock:
      return instance.capacity_block_usd_per_hour;
    case Pricing::kReserved:
      return instance.reserved_usd_per_hour;
    case Pricing::kSpot:
      return 0.0;
  }
  return 0.0;
}

}  // namespace capsim
