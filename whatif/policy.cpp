#include "whatif/policy.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <utility>

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/units.hpp"

namespace capsim::whatif {
namespace {

enum class Kind { kDuration, kNumber, kInt, kEnum };

struct KnobDef {
  KnobInfo info;
  Kind kind;
  double min = 0.0;
  double max = 1e18;
  std::vector<std::string> choices;  // kEnum
  // Applies a parsed value: number (s, plain, int) or the enum string.
  std::function<void(ControlLoop&, double, const std::string&)> apply;
};

using Defs = std::vector<KnobDef>;

// A controller timing beyond a year is a slip (expire_after's default is 30 days), and at 1e308 s
// the simulated clock overflows.
constexpr double kMaxKnobDurationS = 365.0 * 86400.0;

KnobDef dur(const std::string& name, const std::string& dflt, const std::string& meaning,
            std::function<void(ControlLoop&, double)> f) {
  return {{name, "\"" + dflt + "\"", meaning},
          Kind::kDuration,
          0.0,
          kMaxKnobDurationS,
          {},
          [f = std::move(f)](ControlLoop& l, double v, const std::string&) { f(l, v); }};
}
KnobDef num(const std::string& name, const std::string& dflt, double min, double max,
            const std::string& meaning, std::function<void(ControlLoop&, double)> f) {
  return {{name, dflt, meaning},
          Kind::kNumber,
          min,
          max,
          {},
          [f = std::move(f)](ControlLoop& l, double v, const std::string&) { f(l, v); }};
}
KnobDef integer(const std::string& name, const std::string& dflt, double min, double max,
                const std::string& meaning, std::function<void(ControlLoop&, double)> f) {
  return {{name, dflt, meaning},
          Kind::kInt,
          min,
          max,
          {},
          [f = std::move(f)](ControlLoop& l, double v, const std::string&) { f(l, v); }};
}
KnobDef choice(const std::string& name, const std::string& dflt,
               const std::vector<std::string>& choices, const std::string& meaning,
               std::function<void(ControlLoop&, const std::string&)> f) {
  return {{name, "\"" + dflt + "\"", meaning},
          Kind::kEnum,
          0.0,
          0.0,
          choices,
          [f = std::move(f)](ControlLoop& l, double, const std::string& s) { f(l, s); }};
}

// Ray autoscaler v1 (ray-project/ray python/ray/autoscaler/_private/constants.py and
// configuring-autoscaling.rst).
Defs ray_v1() {
  return {
      dur("update_interval", "5s", "AUTOSCALER_UPDATE_INTERVAL_S: loop period",
          [](ControlLoop& l, double v) { l.tick_s = v; }),
      num("upscaling_speed", "1.0", 0.0, 1e6,
          "pending nodes <= max(UPSCALING_INITIAL_NUM_NODES, speed x running)",
          [](ControlLoop& l, double v) { l.upscaling_speed = v; }),
      integer("upscaling_initial_num_nodes", "5", 0, 1e6, "floor of the pending-launch cap",
              [](ControlLoop& l, double v) { l.upscaling_floor = static_cast<int>(v); }),
      integer("max_concurrent_launches", "10", 0, 1e6,
              "AUTOSCALER_MAX_CONCURRENT_LAUNCHES: launches in flight",
              [](ControlLoop& l, double v) { l.max_pending = static_cast<int>(v); }),
      dur("idle_timeout", "5min", "idle_timeout_minutes: idle worker removed after this",
          [](ControlLoop& l, double v) { l.dwell_s = v; }),
      dur("node_start_wait", "900s", "AUTOSCALER_NODE_START_WAIT_S: give up on a slow node",
          [](ControlLoop& l, double v) { l.provision_timeout_s = v; }),
  };
}

// KubeRay with the v2 autoscaler (configuring-autoscaling.md in ray-project/ray).
Defs kuberay_v2() {
  return {
      dur("update_interval", "5s", "autoscaler loop period",
          [](ControlLoop& l, double v) { l.tick_s = v; }),
      choice("upscaling_mode", "Default", {"Default", "Aggressive", "Conservative"},
             "autoscalerOptions.upscalingMode: Conservative keeps pending <= running",
             [](ControlLoop& l, const std::string& s) { l.conservative = s == "Conservative"; }),
      dur("idle_timeout", "60s", "autoscalerOptions.idleTimeoutSeconds",
          [](ControlLoop& l, double v) { l.dwell_s = v; }),
      dur("node_start_wait", "900s", "give up on a worker that does not come up",
          [](ControlLoop& l, double v) { l.provision_timeout_s = v; }),
  };
}

// Kubernetes cluster-autoscaler (kubernetes/autoscaler cluster-autoscaler/FAQ.md, flag table).
Defs cluster_autoscaler(const std::string& prefix) {
  return {
      dur(prefix + "scan_interval", "10s", "scan-interval: loop period",
          [](ControlLoop& l, double v) { l.tick_s = v; }),
      dur(prefix + "scale_down_unneeded_time", "10min",
          "scale-down-unneeded-time: dwell before an unneeded node goes",
          [](ControlLoop& l, double v) { l.dwell_s += v; }),
      dur(prefix + "scale_down_delay_after_add", "10min", "scale-down-delay-after-add",
          [](ControlLoop& l, double v) { l.delay_after_add_s = v; }),
      dur(prefix + "scale_down_delay_after_delete", "0s", "scale-down-delay-after-delete",
          [](ControlLoop& l, double v) { l.delay_after_delete_s = v; }),
      dur(prefix + "scale_down_delay_after_failure", "3min", "scale-down-delay-after-failure",
          [](ControlLoop& l, double v) { l.delay_after_failure_s = v; }),
      num(prefix + "scale_down_gpu_utilization_threshold", "0.5", 0.0, 1.0,
          "scale-down-gpu-utilization-threshold: busy GPUs / GPUs below this => unneeded",
          [](ControlLoop& l, double v) { l.utilization_threshold = v; }),
      dur(prefix + "max_node_provision_time", "15min",
          "max-node-provision-time: unregistered node dropped, group backed off",
          [](ControlLoop& l, double v) { l.provision_timeout_s = v; }),
      dur(prefix + "initial_node_group_backoff_duration", "5min", "first backoff after a failure",
          [](ControlLoop& l, double v) { l.backoff_initial_s = v; }),
      dur(prefix + "max_node_group_backoff_duration", "30min", "backoff cap (doubling)",
          [](ControlLoop& l, double v) { l.backoff_max_s = v; }),
      dur(prefix + "node_group_backoff_reset_timeout", "3h", "backoff forgotten after this",
          [](ControlLoop& l, double v) { l.backoff_reset_s = v; }),
      integer(prefix + "max_empty_bulk_delete", "10", 1, 1e6, "nodes deleted per loop",
              [](ControlLoop& l, double v) { l.max_delete_per_tick = static_cast<int>(v); }),
      choice(prefix + "expander", "priority", {"priority", "price"},
             "pool choice: first listed pool that helps, or cheapest per GPU",
             [](ControlLoop& l, const std::string& s) {
               l.expander = s == "price" ? Expander::kPrice : Expander::kPriority;
             }),
  };
}

// Karpenter (aws/karpenter-provider-aws docs/concepts/disruption.md; pkg/operator/options).
Defs karpenter() {
  return {
      dur("batch_idle_duration", "1s", "BATCH_IDLE_DURATION: pending pods batched this long",
          [](ControlLoop& l, double v) { l.demand_delay_s = v; }),
      dur("batch_max_duration", "10s", "BATCH_MAX_DURATION: loop period bound",
          [](ControlLoop& l, double v) { l.tick_s = v; }),
      choice("consolidation_policy", "WhenEmptyOrUnderutilized",
             {"WhenEmptyOrUnderutilized", "WhenEmpty"}, "disruption.consolidationPolicy",
             [](ControlLoop& l, const std::string& s) {
               l.scale_down = s == "WhenEmpty" ? ScaleDownPredicate::kIdle
                                               : ScaleDownPredicate::kUnderutilized;
             }),
      dur("consolidate_after", "0s", "disruption.consolidateAfter: quiet time before consolidation",
          [](ControlLoop& l, double v) { l.dwell_s = v; }),
      num("budget_nodes_percent", "10", 0.0, 100.0, "disruption.budgets nodes: 10%",
          [](ControlLoop& l, double v) { l.budget_fraction = v / 100.0; }),
      dur("expire_after", "720h", "template.spec.expireAfter: forced replacement age",
          [](ControlLoop& l, double v) { l.expire_after_s = v; }),
      dur("registration_ttl", "15min", "a node not registered by then is replaced",
          [](ControlLoop& l, double v) { l.provision_timeout_s = v; }),
      dur("unavailable_offerings_ttl", "3min", "ICE'd offering skipped for this long",
          [](ControlLoop& l, double v) { l.backoff_initial_s = l.backoff_max_s = v; }),
  };
}

// Slurm power saving (SchedMD/slurm doc/html/power_save.shtml); cloud defaults from AWS PCS
// (scaleDownIdleTimeInSeconds 600) and Azure CycleCloud (resume_timeout 1800): Slurm's own
// 60 s ResumeTimeout would time out every GPU node, whose boot + image pull takes 5-15 min.
Defs slurm() {
  return {
      dur("power_save_interval", "10s", "power-save thread period",
          [](ControlLoop& l, double v) { l.tick_s = v; }),
      dur("suspend_time", "600s", "SuspendTime: idle this long -> power down",
          [](ControlLoop& l, double v) { l.dwell_s = v; }),
      dur("suspend_timeout", "30s", "SuspendTimeout: power-down time, node unusable",
          [](ControlLoop& l, double v) { l.termination_s = v; }),
      dur("resume_timeout", "1800s", "ResumeTimeout: node must register by then, else DOWN",
          [](ControlLoop& l, double v) { l.provision_timeout_s = v; }),
      num("resume_rate", "300", 0.0, 1e9, "ResumeRate: nodes per minute (0 = unlimited)",
          [](ControlLoop& l, double v) { l.resume_rate_per_min = v; }),
  };
}

Defs stacked() {
  Defs d{
      dur("kuberay_update_interval", "5s", "KubeRay loop: pods appear this much later",
          [](ControlLoop& l, double v) { l.demand_delay_s = v; }),
      choice("kuberay_upscaling_mode", "Default", {"Default", "Aggressive", "Conservative"},
             "autoscalerOptions.upscalingMode",
             [](ControlLoop& l, const std::string& s) { l.conservative = s == "Conservative"; }),
      dur("kuberay_idle_timeout", "60s", "idle worker pod removed, then CA sees an empty node",
          [](ControlLoop& l, double v) { l.dwell_s += v; }),
      dur("asg_actuation_delay", "30s", "CA sets desired capacity -> ASG launch call",
          [](ControlLoop& l, double v) { l.actuation_delay_s = v; }),
  };
  for (auto& k : cluster_autoscaler("ca_"))
    d.push_back(std::move(k));
  return d;
}

// A lower bound, not a product (docs/design/autoscaling.md §1.9, "oracle"): capacity appears the
// moment it is asked for and never fails, and idle nodes go at once.
Defs oracle() {
  return {
      dur("update_interval", "1s", "loop period", [](ControlLoop& l, double v) { l.tick_s = v; }),
      dur("idle_timeout", "0s", "idle node removed after this",
          [](ControlLoop& l, double v) { l.dwell_s = v; }),
  };
}

const std::map<std::string, Defs>& registry() {
  static const std::map<std::string, Defs> kRegistry{
      {"static", {}},
      {"cluster-autoscaler", cluster_autoscaler("")},
      {"ray-v1", ray_v1()},
      {"kuberay-v2", kuberay_v2()},
      {"karpenter", karpenter()},
      {"slurm-power-save", slurm()},
      {"kuberay-ca-asg", stacked()},
      {"oracle", oracle()},
  };
  return kRegistry;
}

// Loop fields each preset fixes (not knobs): what the demand signal and scale-down are.
ControlLoop base_loop(const std::string& preset) {
  ControlLoop l;
  l.preset = preset;
  if (preset == "oracle") {
    l.zero_delay = true;
    l.expander = Expander::kPrice;
  }
  if (preset == "static") {
    l.autoscale = false;
    l.scale_down = ScaleDownPredicate::kNever;
  } else if (preset == "cluster-autoscaler" || preset == "kuberay-ca-asg") {
    l.scale_down = ScaleDownPredicate::kUnderutilized;
  } else if (preset == "karpenter") {
    l.expander = Expander::kPrice;
    l.replace_on_notice = true;
    // WhenEmptyOrUnderutilized has no threshold: any node whose pods fit elsewhere goes.
    l.utilization_threshold = 1.0 + 1e-9;
  }
  // slurm-power-save needs no structural change: Slurm resumes exactly the nodes its scheduler
  // allocates to queued jobs, which is what packing the queue onto new nodes computes.
  return l;
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"static",    "cluster-autoscaler", "ray-v1",         "kuberay-v2",
          "karpenter", "slurm-power-save",   "kuberay-ca-asg", "oracle"};
}

const std::vector<KnobInfo>& preset_knobs(const std::string& preset) {
  static const std::map<std::string, std::vector<KnobInfo>> kInfos = [] {
    std::map<std::string, std::vector<KnobInfo>> m;
    for (const auto& [name, defs] : registry()) {
      auto& v = m[name];
      for (const auto& d : defs)
        v.push_back(d.info);
    }
    return m;
  }();
  return kInfos.at(preset);
}

nlohmann::json complete_knobs(const std::string& preset, const nlohmann::json& knobs) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& def : registry().at(preset)) {
    const nlohmann::json value = knobs.contains(def.info.name)
                                     ? knobs.at(def.info.name)
                                     : nlohmann::json::parse(def.info.default_value);
    if (def.kind == Kind::kDuration)
      out[def.info.name] = duration_knob(knob_seconds(value));
    else if (def.kind == Kind::kInt)
      out[def.info.name] = value.get<std::int64_t>();
    else if (def.kind == Kind::kNumber)
      out[def.info.name] = value.get<double>();
    else
      out[def.info.name] = value;
  }
  return out;
}

PolicySpec make_policy(const std::string& name, const std::string& preset,
                       const nlohmann::json& knobs, const std::string& file,
                       const std::string& pointer) {
  const auto it = registry().find(preset);
  if (it == registry().end()) {
    throw io::InputError(
        file, pointer + "/preset",
        "unknown preset \"" + preset + "\" (allowed: " + io::join_names(preset_names()) + ")");
  }
  PolicySpec spec;
  spec.name = name;
  spec.preset = preset;
  spec.knobs = knobs;
  spec.loop = base_loop(preset);
  io::JsonReader reader(knobs, file, pointer + "/knobs");
  // Every knob of the preset is a key finish() accepts and lists; it reports each unknown one
  // (a near miss as "did you mean"), all at once.
  if (it->second.empty() && !knobs.empty()) {
    throw reader.error(knobs.begin().key(), "unknown key \"" + knobs.begin().key() +
                                                "\"; allowed keys: none (" + preset +
                                                " has no knobs)");
  }
  for (const auto& def : it->second)
    (void)reader.has(def.info.name);
  for (const auto& def : it->second) {
    const bool given = reader.has(def.info.name);
    // Defaults go through the same parser as user values, so documented == applied.
    nlohmann::json dflt = nlohmann::json::parse(def.info.default_value);
    nlohmann::json holder = nlohmann::json::object();
    holder[def.info.name] = dflt;
    io::JsonReader dreader(holder, "<preset " + preset + ">", "");
    io::JsonReader& r = given ? reader : dreader;
    double v = 0.0;
    std::string s;
    switch (def.kind) {
      case Kind::kDuration:
        v = r.required_duration(def.info.name);
        if (v > def.max)
          throw r.error(def.info.name, "expected a duration of at most 365d");
        break;
      case Kind::kNumber:
        v = r.required_number(def.info.name, def.min, def.max);
        break;
      case Kind::kInt:
        v = static_cast<double>(r.required_int(def.info.name, static_cast<std::int64_t>(def.min),
                                               static_cast<std::int64_t>(def.max)));
        break;
      case Kind::kEnum:
        s = r.required_enum(def.info.name, def.choices);
        break;
    }
    def.apply(spec.loop, v, s);
  }
  reader.finish();
  if (spec.loop.tick_s <= 0) {
    throw io::InputError(file, pointer + "/knobs", "the loop period must be positive");
  }
  return spec;
}

}  // namespace capsim::whatif
