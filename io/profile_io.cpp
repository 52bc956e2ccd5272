#include "io/profile_io.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

#include "models/catalog.hpp"
#include "models/datasheet_profile.hpp"
#include "models/gpu_catalog.hpp"
#include "models/intra_node_bandwidth.hpp"

#include "estimate/profile_choice.hpp"
#include "io/gpu_spec_io.hpp"
#include "io/in_situ_prior.hpp"
#include "io/rounding.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

constexpr double kMaxLatencyS = 10.0;

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> kNames{"ring", "tree", "nvls"};
  return kNames;
}

std::string with_unit(double value, const char* unit) {
  return printf_string("%.6g%s", value, unit);
}

std::string duration_text(double seconds) {
  return with_unit(seconds * 1e6, "us");
}
std::string profile_bandwidth_text(double bytes_per_s) {
  return with_unit(bytes_per_s / 1e9, "GBps");
}

CollectiveAlgorithm algorithm_from_name(const std::string& name) {
  if (name == "tree")
    return CollectiveAlgorithm::kTree;
  if (name == "nvls")
    return CollectiveAlgorithm::kNvls;
  return CollectiveAlgorithm::kRing;
}

GemmParams read_gemm(JsonReader& r) {
  GemmParams g;
  g.max_efficiency = r.required_number("max_efficiency", 1e-3, 1.0);
  g.fp8_max_efficiency = r.optional_number("fp8_max_efficiency", 0.0, 1e-3, 1.0);
  g.k_half = r.required_number("k_half", 0.0, 1e6);
  g.launch_overhead_s = r.required_duration("launch_overhead");
  if (g.launch_overhead_s > kMaxLatencyS) {
    throw r.error("launch_overhead",
                  "expected at most 10s, got " + duration_text(g.launch_overhead_s));
  }
  g.memory_efficiency = r.required_number("memory_efficiency", 1e-3, 1.0);
  g.misaligned_64 = r.required_number("misaligned_64", 1e-3, 1.0);
  g.misaligned_8 = r.required_number("misaligned_8", 1e-3, 1.0);
  r.finish();
  return g;
}

AttentionParams read_attention(JsonReader& r) {
  AttentionParams a;
  a.forward_efficiency_hd128 = r.required_number("forward_efficiency_hd128", 1e-3, 1.0);
  a.forward_efficiency_hd64 = r.required_number("forward_efficiency_hd64", 1e-3, 1.0);
  a.backward_efficiency_hd128 = r.required_number("backward_efficiency_hd128", 1e-3, 1.0);
  a.backward_efficiency_hd64 = r.required_number("backward_efficiency_hd64", 1e-3, 1.0);
  a.half_efficiency_seq_length =
      r.optional_number("half_efficiency_seq_length", a.half_efficiency_seq_length, 0.0, 1e7);
  r.finish();
  return a;
}

double read_latency(JsonReader& r, const std::string& key) {
  const double value = r.required_duration(key);
  if (value > kMaxLatencyS) {
    throw r.error(key, "expected at most 10s, got " + duration_text(value));
  }
  return value;
}

AlgorithmParams read_algorithm(JsonReader& r, bool inter_node, const GpuSpec& gpu) {
  AlgorithmParams a;
  const std::string name = r.required_enum("algorithm", algorithm_names());
  a.algorithm = algorithm_from_name(name);
  if (a.algorithm == CollectiveAlgorithm::kNvls && !gpu.has_nvls) {
    throw r.error("algorithm", "nvls needs a GPU with NVLink SHARP; " + gpu.name + " has none");
  }
  a.base_latency_s = read_latency(r, "base_latency");
  a.intra_step_latency_s = read_latency(r, "intra_step_latency");
  a.inter_step_latency_s = read_latency(r, "inter_step_latency");
  if (!inter_node && a.inter_step_latency_s > 0.0) {
    throw r.error("inter_step_latency",
                  "must be 0us in an intra_node fit, got " + duration_text(a.inter_step_latency_s));
  }
  a.bus_bandwidth_bytes_per_s = r.required_bandwidth("bus_bandwidth");
  r.finish();
  return a;
}

FitRecord read_fit_record(JsonReader& r) {
  FitRecord f;
  f.curve = r.required_string("curve");
  f.source = r.required_string("source");
  f.points = static_cast<int>(r.required_int("points", 1, 1000000));
  f.points_large = static_cast<int>(r.required_int("points_large", 0, f.points));
  f.mape_pct = r.required_number("mape_pct", 0.0, 1e6);
  f.mape_large_pct = r.required_number("mape_large_pct", 0.0, 1e6);
  f.max_abs_error_pct = r.required_number("max_abs_error_pct", 0.0, 1e6);
  r.finish();
  return f;
}

std::string scope_name(bool inter_node) {
  return inter_node ? "inter_node" : "intra_node";
}

}  // namespace

const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> kNames{"all_reduce", "all_gather", "reduce_scatter",
                                               "alltoall",   "broadcast",  "send_recv"};
  return kNames;
}

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllToAll:
      return "alltoall";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kSendRecv:
      return "send_recv";
  }
  return "all_reduce";
}

CollectiveKind collective_from_name(const std::string& name) {
  static constexpr std::array<CollectiveKind, 6> kKinds{
      CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
      CollectiveKind::kAllToAll,  CollectiveKind::kBroadcast, CollectiveKind::kSendRecv};
  for (CollectiveKind kind : kKinds) {
    if (name == collective_name(kind))
      return kind;
  }
  throw std::invalid_argument("unknown collective \"" + name + "\"");
}

const char* algorithm_name(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kNvls:
      return "nvls";
  }
  return "ring";
}

namespace {

// One (collective, scope) pair has one fit; a second would silently shadow the first.
void check_not_duplicate(JsonReader& r, const CollectiveFit& fit,
                         const std::vector<CollectiveFit>& earlier,
                         const std::string& collectives_ptr) {
  for (size_t j = 0; j < earlier.size(); ++j) {
    if (earlier[j].kind == fit.kind && earlier[j].inter_node == fit.inter_node) {
      throw r.error("collective", std::string("duplicate fit for ") + collective_name(fit.kind) +
                                      " " + scope_name(fit.inter_node) + " (also at " +
                                      collectives_ptr + "/" + std::to_string(j) + ")");
    }
  }
}

CollectiveFit read_collective_fit(JsonReader& r, const std::vector<CollectiveFit>& earlier,
                                  const std::string& collectives_ptr, const GpuSpec& gpu) {
  CollectiveFit fit;
  fit.kind = collective_from_name(r.required_enum("collective", collective_names()));
  fit.inter_node = r.required_enum("scope", {"intra_node", "inter_node"}) == "inter_node";
  fit.mape_pct = r.optional_number("mape_pct", 0.0, 0.0, 1e6);
  check_not_duplicate(r, fit, earlier, collectives_ptr);
  const auto algorithms = r.array("algorithms", 1);
  for (size_t j = 0; j < algorithms.size(); ++j) {
    JsonReader a(algorithms[j], r, r.pointer_to("algorithms") + "/" + std::to_string(j));
    fit.algorithms.push_back(read_algorithm(a, fit.inter_node, gpu));
  }
  r.finish();
  return fit;
}

// Appends the fits of /collectives to `fits` and returns whether any of them is inter_node.
bool read_collectives(JsonReader& reader, const GpuSpec& gpu, std::vector<CollectiveFit>& fits) {
  const auto collectives = reader.array("collectives", 1);
  const std::string collectives_ptr = reader.pointer_to("collectives");
  bool has_inter = false;
  for (size_t i = 0; i < collectives.size(); ++i) {
    JsonReader r(collectives[i], reader, collectives_ptr + "/" + std::to_string(i));
    CollectiveFit fit = read_collective_fit(r, fits, collectives_ptr, gpu);
    has_inter = has_inter || fit.inter_node;
    fits.push_back(std::move(fit));
  }
  return has_inter;
}

// collective_time_s falls back to a scope's all_reduce fit for collectives without their own
// fit; without one, every collective of the scope would take forever (inf in the output).
void check_all_reduce_fallbacks(JsonReader& reader, const std::vector<CollectiveFit>& fits,
                                bool has_inter) {
  for (const bool inter : {false, true}) {
    const bool scope_used = !inter || has_inter;
    const bool has_all_reduce = std::any_of(fits.begin(), fits.end(), [&](const CollectiveFit& f) {
      return f.inter_node == inter && f.kind == CollectiveKind::kAllReduce;
    });
    if (scope_used && !has_all_reduce) {
      throw reader.error("collectives", "needs an all_reduce " + scope_name(inter) +
                                            " fit (the fallback for the other collectives)");
    }
  }
}

void read_provenance(JsonReader& reader, std::vector<std::string>& provenance_out) {
  const auto provenance = reader.array("provenance");
  for (size_t i = 0; i < provenance.size(); ++i) {
    if (!provenance[i].is_string()) {
      throw reader.with_key_problems(
          InputError(reader.file(), reader.pointer_to("provenance") + "/" + std::to_string(i),
                     "expected a string, got " + describe_json(provenance[i])));
    }
    provenance_out.push_back(provenance[i].get<std::string>());
  }
}

void read_fit_quality(JsonReader& reader, std::vector<FitRecord>& records_out) {
  const auto records = reader.array("fit_quality");
  for (size_t i = 0; i < records.size(); ++i) {
    JsonReader r(records[i], reader, reader.pointer_to("fit_quality") + "/" + std::to_string(i));
    records_out.push_back(read_fit_record(r));
  }
}

}  // namespace

HardwareProfile read_profile(JsonReader& reader, Catalog& catalog) {
  reader.expect_schema(kProfileSchema);
  HardwareProfile p;
  p.name = reader.required_string("name");
  p.gpu = read_gpu_name_or_definition(reader, "gpu", catalog);
  const GpuSpec& gpu = p.gpu;
  p.fabric = reader.required_enum("fabric", fabric_names());
  if (auto nic = reader.optional_bandwidth("reference_node_nic_bandwidth")) {
    p.reference_node_nic_bandwidth_bytes_per_s = *nic;
  }
  if (auto overhead = reader.optional_duration("per_microbatch_overhead")) {
    if (*overhead > kMaxLatencyS) {
      throw reader.error("per_microbatch_overhead",
                         "expected at most 10s, got " + duration_text(*overhead));
    }
    p.per_microbatch_overhead_s = *overhead;
  }
  p.is_datasheet_default = reader.optional_bool("datasheet_default", false);
  p.collective_sms =
      static_cast<int>(reader.optional_int("collective_sms", p.collective_sms, 0, gpu.num_sms - 1));
  p.software_efficiency = reader.optional_number("software_efficiency", p.software_efficiency,
                                                 HardwareProfile::kMinSoftwareEfficiency,
                                                 HardwareProfile::kMaxSoftwareEfficiency);
  p.tensor_speed =
      reader.optional_number("tensor_speed", p.tensor_speed, HardwareProfile::kMinTensorSpeed,
                             HardwareProfile::kMaxTensorSpeed);
  {
    JsonReader gemm = reader.object("gemm");
    p.gemm = read_gemm(gemm);
  }
  {
    JsonReader attention = reader.object("attention");
    p.attention = read_attention(attention);
  }
  const bool has_inter = read_collectives(reader, gpu, p.collectives);
  check_all_reduce_fallbacks(reader, p.collectives, has_inter);
  if (has_inter && p.reference_node_nic_bandwidth_bytes_per_s <= 0.0) {
    throw reader.error("reference_node_nic_bandwidth",
                       "required when the profile has inter_node fits");
  }
  // Optional arrays: mark them as known keys even when absent, so "allowed keys" lists them.
  if (!reader.has("provenance"))
    (void)reader.optional_bool("provenance", false);
  if (!reader.has("fit_quality"))
    (void)reader.optional_bool("fit_quality", false);
  if (reader.has("provenance"))
    read_provenance(reader, p.provenance);
  if (reader.has("fit_quality"))
    read_fit_quality(reader, p.fit_quality);
  reader.finish();
  return p;
}

HardwareProfile read_profile(JsonReader& reader) {
  Catalog catalog;
  return read_profile(reader, catalog);
}

HardwareProfile load_profile(const std::string& path, Catalog& catalog) {
  const nlohmann::json doc = JsonReader::parse_file(path);
  return JsonReader::read_document(
      doc, path, [&catalog](JsonReader& reader) { return read_profile(reader, catalog); });
}

HardwareProfile load_profile(const std::string& path) {
  Catalog catalog;
  return load_profile(path, catalog);
}

namespace {

// A catalog of the built-ins and `gpu`, for a profile file that may name `gpu` without
// defining it.
Catalog catalog_knowing(const GpuSpec& gpu) {
  Catalog known;
  if (!is_builtin_gpu(gpu.name))
    (void)known.define_gpu(gpu);  // a fresh catalog takes any name but a built-in one
  return known;
}

}  // namespace

HardwareProfile load_profile_for(const std::string& path, const GpuSpec& gpu) {
  Catalog known = catalog_knowing(gpu);
  return load_profile(path, known);
}

nlohmann::json profile_to_json(const HardwareProfile& p) {
  nlohmann::json j;
  j["schema"] = kProfileSchema;
  j["name"] = p.name;
  j["gpu"] = gpu_reference_json(p.gpu);
  j["fabric"] = p.fabric;
  if (p.reference_node_nic_bandwidth_bytes_per_s > 0.0) {
    j["reference_node_nic_bandwidth"] =
        profile_bandwidth_text(p.reference_node_nic_bandwidth_bytes_per_s);
  }
  j["per_microbatch_overhead"] = duration_text(p.per_microbatch_overhead_s);
  j["datasheet_default"] = p.is_datasheet_default;
  j["collective_sms"] = p.collective_sms;
  j["software_efficiency"] = round_significant(p.software_efficiency);
  if (p.tensor_speed != 1.0)
    j["tensor_speed"] = round_significant(p.tensor_speed);
  j["gemm"] = {{"max_efficiency", round_significant(p.gemm.max_efficiency)},
               {"k_half", round_significant(p.gemm.k_half)},
               {"launch_overhead", duration_text(p.gemm.launch_overhead_s)},
               {"memory_efficiency", round_significant(p.gemm.memory_efficiency)},
               {"misaligned_64", round_significant(p.gemm.misaligned_64)},
               {"misaligned_8", round_significant(p.gemm.misaligned_8)}};
  if (p.gemm.fp8_max_efficiency > 0.0)
    j["gemm"]["fp8_max_efficiency"] = round_significant(p.gemm.fp8_max_efficiency);
  j["attention"] = {
      {"forward_efficiency_hd128", round_significant(p.attention.forward_efficiency_hd128)},
      {"forward_efficiency_hd64", round_significant(p.attention.forward_efficiency_hd64)},
      {"backward_efficiency_hd128", round_significant(p.attention.backward_efficiency_hd128)},
      {"backward_efficiency_hd64", round_significant(p.attention.backward_efficiency_hd64)},
      {"half_efficiency_seq_length", round_significant(p.attention.half_efficiency_seq_length)}};
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& fit : p.collectives) {
    nlohmann::json algorithms = nlohmann::json::array();
    for (const auto& a : fit.algorithms) {
      algorithms.push_back(
          {{"algorithm", algorithm_name(a.algorithm)},
           {"base_latency", duration_text(a.base_latency_s)},
           {"intra_step_latency", duration_text(a.intra_step_latency_s)},
           {"inter_step_latency", duration_text(a.inter_step_latency_s)},
           {"bus_bandwidth", profile_bandwidth_text(a.bus_bandwidth_bytes_per_s)}});
    }
    collectives.push_back({{"collective", collective_name(fit.kind)},
                           {"scope", scope_name(fit.inter_node)},
                           {"mape_pct", round_significant(fit.mape_pct)},
                           {"algorithms", algorithms}});
  }
  j["collectives"] = collectives;
  j["provenance"] = p.provenance;
  nlohmann::json records = nlohmann::json::array();
  for (const auto& f : p.fit_quality) {
    records.push_back({{"curve", f.curve},
                       {"source", f.source},
                       {"points", f.points},
                       {"points_large", f.points_large},
                       {"mape_pct", round_significant(f.mape_pct)},
                       {"mape_large_pct", round_significant(f.mape_large_pct)},
                       {"max_abs_error_pct", round_significant(f.max_abs_error_pct)}});
  }
  j["fit_quality"] = records;
  return j;
}

std::string profile_to_text(const HardwareProfile& profile) {
  return profile_to_json(profile).dump(2) + "\n";
}

namespace {

// The shipped profiles, each parsed once per process: they are compiled in and never change,
// and parsing one costs far more than an estimate (capsim.estimate() resolves one per scenario).
const std::map<std::string, HardwareProfile, std::less<>>& parsed_embedded_profiles() {
  static const auto kParsed = [] {
    std::map<std::string, HardwareProfile, std::less<>> parsed;
    for (const auto& e : embedded_profiles()) {
      const std::string name = "<embedded>/scenarios/profiles/" + std::string(e.file);
      const nlohmann::json doc = JsonReader::parse_text(e.text, name);
      parsed.emplace(std::string(e.file),
                     JsonReader::read_document(
                         doc, name, [](JsonReader& reader) { return read_profile(reader); }));
    }
    return parsed;
  }();
  return kParsed;
}

}  // namespace

HardwareProfile embedded_profile(const std::string& file) {
  const auto& parsed = parsed_embedded_profiles();
  if (const auto it = parsed.find(file); it != parsed.end())
    return it->second;
  throw InputError("<embedded>/scenarios/profiles/" + file, "", "no such shipped profile");
}

namespace {

// The file names of the shipped profiles, in embedded_profiles()'s order.
const std::vector<std::string>& shipped_files() {
  static const std::vector<std::string> kFiles = [] {
    std::vector<std::string> files;
    for (const EmbeddedProfile& e : embedded_profiles())
      files.emplace_back(e.file);
    return files;
  }();
  return kFiles;
}

// Reads the profile estimate::choose_profile() picks for `scenario`; the file it names is read
// from `named_doc` when the caller has parsed it already.
HardwareProfile read_chosen_profile(const Scenario& scenario, const nlohmann::json* named_doc) {
  const ClusterSpec& cluster = scenario.cluster;
  const GpuSpec* gpu = &cluster.gpu;
  // A measured profile's intra-node fits ran on its own GPU's NVLink; a cluster whose NVLink
  // differs (another intra_node.bandwidth, or a GPU of the family with other links, as H800 to
  // the H100 profile) gets them scaled to it (a datasheet profile is built from it).
  const auto measured_at_scenario_nvlink = [&](HardwareProfile p) {
    const double measured_at = p.gpu.nvlink_bandwidth_bytes_per_s;
    return with_intra_node_bandwidth(std::move(p), cluster.intra_node_bandwidth_bytes_per_s,
                                     measured_at);
  };
  const std::string stack_name = scenario.stack != nullptr ? scenario.stack->name : "";
  const std::string stack_version = scenario.stack != nullptr ? scenario.stack->version : "";
  const estimate::ProfileChoice choice =
      estimate::choose_profile(scenario, is_builtin_gpu(gpu->name), shipped_files());
  switch (choice.source) {
    case estimate::ProfileSource::kNamedFile: {
      // The file may name the scenario's GPU without defining it.
      Catalog known = catalog_knowing(*gpu);
      HardwareProfile p = named_doc != nullptr
                              ? JsonReader::read_document(*named_doc, scenario.profile_path,
                                                          [&known](JsonReader& reader) {
                                                            return read_profile(reader, known);
                                                          })
                              : load_profile(scenario.profile_path, known);
      if (auto mismatch = estimate::named_profile_mismatch(p, scenario))
        throw InputError(scenario.profile_path, mismatch->pointer, mismatch->message);
      return measured_at_scenario_nvlink(std::move(p));
    }
    case estimate::ProfileSource::kShipped:
      return measured_at_scenario_nvlink(
          with_stack_factor(embedded_profile(choice.shipped_file), stack_name, stack_version));
    case estimate::ProfileSource::kShippedDatasheetNetwork:
      return measured_at_scenario_nvlink(
          with_stack_factor(with_datasheet_network(embedded_profile(choice.shipped_file), cluster),
                            stack_name, stack_version));
    case estimate::ProfileSource::kDatasheet:
      break;
  }
  return with_in_situ_prior(datasheet_profile(*gpu, cluster), gpu->architecture, stack_name,
                            stack_version);
}

}  // namespace

std::string shipped_profile_file(const std::string& architecture, const std::string& fabric) {
  return estimate::shipped_profile_file(architecture, fabric, shipped_files());
}

HardwareProfile resolve_profile(const Scenario& scenario) {
  return read_chosen_profile(scenario, nullptr);
}

HardwareProfile resolve_profile(const Scenario& scenario, const nlohmann::json& profile_doc) {
  return read_chosen_profile(scenario, &profile_doc);
}

}  // namespace capsim::io
