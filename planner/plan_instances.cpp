#include "planner/plan_instances.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "models/catalog.hpp"

#include "io/input_error.hpp"
#include "io/instance_io.hpp"
#include "io/profile_io.hpp"
#include "io/profile_reference.hpp"
#include "io/scenario_io.hpp"

namespace capsim::planner {
namespace {

// Per-pricing price overrides from an instance's "prices" object, indexed like pricing_names();
// an absent price stays empty so the catalog price applies.
std::vector<std::optional<double>> read_price_overrides(io::JsonReader& item) {
  std::vector<std::optional<double>> overrides(pricing_names().size());
  if (auto prices = item.optional_object("prices")) {
    for (size_t k = 0; k < pricing_names().size(); ++k) {
      overrides[k] = prices->optional_price(pricing_names()[k]);
    }
    prices->finish();
  }
  return overrides;
}

// Reads the object form {"name", "prices", "profile"} of one /instances entry, with the
// hardware keys when it defines an instance the catalog lacks.
InstanceChoice read_instance_object(const nlohmann::json& value, const io::JsonReader& plan,
                                    const std::string& where,
                                    std::vector<std::optional<double>>& overrides,
                                    Catalog& catalog) {
  io::JsonReader item(value, plan, where);
  const std::string& file = plan.file();
  InstanceChoice choice;
  choice.name = item.required_string("name");
  // A profile fitted on new hardware defines its GPU, which "gpu" may then name.
  if (item.has("profile") && item.json().at("profile").is_string())
    io::define_gpu_of_profile(item.json().at("profile").get<std::string>(), file,
                              item.pointer_to("profile"), catalog);
  if (item.has("gpu")) {
    // An instance the catalog lacks: its hardware here, its prices below (it has no others).
    if (!item.has("prices"))
      throw item.error("prices", "an instance defined in the plan needs its \"prices\"");
    io::read_instance_definition(item, choice.name, catalog);
  } else {
    for (const char* key : {"gpus_per_node", "inter_node"}) {
      if (item.has(key)) {
        throw item.error(key, std::string("\"") + key +
                                  "\" describes an instance's hardware; give its \"gpu\" too, "
                                  "or drop it to use the catalog's");
      }
    }
  }
  overrides = read_price_overrides(item);
  if (item.has("nvlink_domain"))
    choice.nvlink_domain = static_cast<int>(item.optional_int("nvlink_domain", 0, 1, 1 << 20));
  if (item.has("profile")) {
    const std::string profile = item.optional_string("profile", "");
    if (profile.empty())
      throw item.error("profile", "expected a profile file path, got \"\"");
    choice.profile_path = io::resolve_profile_path(profile, file, where + "/profile");
  }
  item.finish();
  return choice;
}

// Reads one /instances entry, a bare name or an object, and looks the instance up in the catalog.
// The unknown-name error points at /name only when the entry is an object.
InstanceChoice read_instance_choice(const nlohmann::json& value, const io::JsonReader& plan,
                                    const std::string& where,
                                    std::vector<std::optional<double>>& overrides,
                                    Catalog& catalog) {
  const std::string& file = plan.file();
  InstanceChoice choice;
  if (value.is_string()) {
    choice.name = value.get<std::string>();
  } else if (value.is_object()) {
    choice = read_instance_object(value, plan, where, overrides, catalog);
  } else {
    throw io::InputError(
        file, where,
        "expected an instance name or an object with \"name\" and \"prices\", got " +
            io::describe_json(value));
  }
  if (catalog.find_instance(choice.name) == nullptr) {
    throw io::InputError(
        file, value.is_string() ? where : where + "/name",
        "unknown instance \"" + choice.name +
            "\"; known instances: " + io::join_names(catalog.instance_names()) +
            " (or define it: an object with \"gpu\", \"gpus_per_node\", \"inter_node\" and "
            "\"prices\", docs/planner.md)");
  }
  return choice;
}

// A calibrated profile (e.g. `capsim calibrate step`) must describe the instance's GPUs.
void check_profile_matches_instance(const InstanceChoice& choice, const InstanceSpec& inst,
                                    const std::string& file, const std::string& where) {
  if (choice.profile_path.empty())
    return;
  const HardwareProfile profile = io::load_profile_for(choice.profile_path, inst.gpu);
  if (profile.gpu.architecture != inst.gpu.architecture) {
    throw io::InputError(file, where + "/profile",
                         "profile \"" + profile.name + "\" is for " + profile.gpu.name + ", " +
                             choice.name + " has " + inst.gpu.name);
  }
}

// Why an instance has no price for a pricing option: what the catalog lacks, and where to give it.
std::string skip_reason(const InstanceSpec& inst, Pricing kind) {
  const std::string key = std::string("/instances/N/prices/") + to_string(kind);
  if (kind == Pricing::kSpot)
    return "spot prices change by the hour and the catalog has none; give one in " + key;
  if (inst.price_source.empty())
    return std::string("the plan defines this instance without a ") + to_string(kind) +
           " price; give one in " + key;
  return std::string("no ") + to_string(kind) + " price in the catalog (" + inst.price_source +
         "); give one in " + key;
}

// Adds the instance's price for each requested pricing (override, else catalog); a pricing with
// no positive price is not offered for this instance. Counts the offers per pricing in `offered`.
void add_offered_prices(InstanceChoice& choice, const InstanceSpec& inst,
                        const std::vector<std::optional<double>>& overrides,
                        const std::vector<std::string>& pricing, std::vector<int>& offered,
                        std::vector<SkippedPrice>& skipped) {
  for (size_t k = 0; k < pricing.size(); ++k) {
    const auto idx =
        static_cast<size_t>(std::find(pricing_names().begin(), pricing_names().end(), pricing[k]) -
                            pricing_names().begin());
    const Pricing kind = *pricing_from_string(pricing[k]);
    const double price = overrides[idx].value_or(catalog_price_usd_per_hour(inst, kind));
    if (price > 0.0) {
      choice.prices.push_back({kind, price});
      ++offered[k];
    } else {
      skipped.push_back({choice.name, kind, skip_reason(inst, kind)});
    }
  }
}

// Every requested pricing needs at least one instance that offers it, or the plan cannot use it.
void check_every_pricing_offered(const io::JsonReader& r, const std::vector<std::string>& pricing,
                                 const std::vector<int>& offered) {
  for (size_t k = 0; k < pricing.size(); ++k) {
    if (offered[k] == 0) {
      throw io::InputError(r.file(), r.pointer_to("pricing") + "/" + std::to_string(k),
                           "no listed instance has a \"" + pricing[k] +
                               "\" price; give one in /instances/N/prices/" + pricing[k]);
    }
  }
}

}  // namespace

const std::vector<std::string>& pricing_names() {
  static const std::vector<std::string> kNames{"on-demand", "spot", "capacity-block", "reserved"};
  return kNames;
}

void read_instances(io::JsonReader& r, PlanSpec& plan, const std::vector<std::string>& pricing) {
  const auto items = r.array("instances", 1);
  std::set<std::string> seen;
  std::vector<int> offered(pricing.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string where = r.pointer_to("instances") + "/" + std::to_string(i);
    std::vector<std::optional<double>> overrides(pricing_names().size());
    InstanceChoice choice = read_instance_choice(items[i], r, where, overrides, plan.catalog);
    const InstanceSpec& inst = *plan.catalog.find_instance(choice.name);
    check_profile_matches_instance(choice, inst, r.file(), where);
    if (choice.nvlink_domain == 0)
      choice.nvlink_domain = inst.nvlink_domain;  // an NVL72 tray's rack, from the catalog
    if (choice.nvlink_domain > 0) {
      // Whole nodes and at most NVL72; the node counts are checked against it once read.
      if (auto problem = io::nvlink_domain_problem(choice.nvlink_domain, inst.gpus_per_node, 0))
        throw io::InputError(r.file(), where + "/nvlink_domain", *problem);
    }
    if (!seen.insert(choice.name).second) {
      throw io::InputError(r.file(), where, "instance \"" + choice.name + "\" is listed twice");
    }
    add_offered_prices(choice, inst, overrides, pricing, offered, plan.skipped_prices);
    plan.instances.push_back(choice);
  }
  check_every_pricing_offered(r, pricing, offered);
}

}  // namespace capsim::planner
