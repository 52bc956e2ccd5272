#pragma once

#include <optional>
#include <string_view>

#include "models/instance_catalog.hpp"

namespace capsim {

// How a node is bought: on-demand, spot, an EC2 capacity block, or reserved/savings plan.
enum class Pricing { kOnDemand, kSpot, kCapacityBlock, kReserved };

// Canonical names used in plan and what-if JSON: "on-demand", "spot", "capacity-block",
// "reserved".
[[nodiscard]] const char* to_string(Pricing pricing);
// Returns the pricing with that canonical name, or nullopt.
[[nodiscard]] std::optional<Pricing> pricing_from_string(std::string_view name);
// Returns the catalog's hourly price of one node (USD; 0 when the catalog has none, e.g. spot,
// whose price moves hourly).
[[nodiscard]] double catalog_price_usd_per_hour(const InstanceSpec& instance, Pricing pricing);

// Returns the hours billed for `wall_time_s` of use: as used, except that EC2 capacity blocks
// are bought whole and upfront, in 1-day steps up to 14 days, then 7-day steps (AWS "Capacity
// Blocks for ML" durations), so a 2.7-day job pays for 3 days.
[[nodiscard]] double billed_hours(Pricing pricing, double wall_time_s);

}  // namespace capsim
