#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/instance_catalog.hpp"

#include "whatif/policy.hpp"
#include "whatif/whatif_config.hpp"

namespace capsim::whatif::testing {

// A pool of p4d nodes with fixed provisioning delay and no capacity limits.
inline NodePool pool(const std::string& name, int min_nodes, int max_nodes, double boot_s,
                     Pricing pricing = Pricing::kOnDemand, double price = 10.0) {
  NodePool p;
  p.name = name;
  p.instance = *builtin_catalog().find_instance("p4d.24xlarge");
  p.pricing = pricing;
  p.price_usd_per_hour = price;
  p.min_nodes = min_nodes;
  p.max_nodes = max_nodes;
  p.boot = {boot_s, boot_s};
  p.image_pull = {0.0, 0.0};
  p.init = {0.0, 0.0};
  return p;
}

inline traces::JobRecord job(const std::string& id, double submit_s, int gpus, double duration_s,
                             int min_gpus = 0, int max_gpus = 0) {
  traces::JobRecord j;
  j.id = id;
  j.submit_s = submit_s;
  j.gpus = gpus;
  j.min_gpus = min_gpus > 0 ? min_gpus : gpus;
  j.max_gpus = max_gpus > 0 ? max_gpus : gpus;
  j.duration_s = duration_s;
  return j;
}

inline PolicySpec policy(const std::string& preset,
                         const nlohmann::json& knobs = nlohmann::json::object()) {
  return make_policy(preset, preset, knobs, "test.json", "/policies/0");
}

inline WhatIf whatif(std::vector<NodePool> pools, std::vector<traces::JobRecord> jobs) {
  WhatIf w;
  w.file = "test.json";
  w.name = "test";
  w.pools = std::move(pools);
  w.jobs = std::move(jobs);
  w.failures.checkpoint_interval_s = 1e12;  // no checkpoints unless a test asks
  return w;
}

}  // namespace capsim::whatif::testing
