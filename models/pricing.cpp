#include "models/pricing.hpp"

#include <cmath>

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

double billed_hours(Pricing pricing, double wall_time_s) {
  const double hours = wall_time_s / 3600.0;
  if (pricing != Pricing::kCapacityBlock || hours <= 0.0)
    return hours;
  const double days = hours / 24.0;
  if (days <= 14.0)
    return 24.0 * std::ceil(days - 1e-9);
  return 24.0 * (14.0 + 7.0 * std::ceil((days - 14.0) / 7.0 - 1e-9));
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
