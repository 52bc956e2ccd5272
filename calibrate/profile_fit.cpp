#include "calibrate/profile_fit.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/byte_units.hpp"
#include "models/catalog.hpp"
#include "models/datasheet_profile.hpp"
#include "models/fabric_figures.hpp"
#include "models/gpu_catalog.hpp"

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/text_format.hpp"

namespace capsim::calibrate {
namespace {

// The latency a fabric's NCCL net plugin adds per network step (aws-ofi-nccl's 75 us on EFA, the
// GPUDirect-TCPX plugins'; the InfiniBand and socket transports add none): models/fabric_figures.
double plugin_latency_s(const std::string& fabric) {
  const std::optional<Fabric> f = fabric_from_string(fabric);
  return f ? fabric_figures(*f).net_step_extra_latency_s : 0.0;
}

std::string provenance_line(const CollectiveCurve& c) {
  std::string line = std::filesystem::path(c.source).filename().string() + ": " + curve_label(c);
  if (c.ranks_inferred)
    line += " (rank count from busbw/algbw)";
  if (c.nodes_inferred)
    line += " (8 GPUs per node assumed: Rank lines elided)";
  line += "; NCCL " + (c.nccl_version.empty() ? std::string("version not stated") : c.nccl_version);
  if (!c.gpu.empty())
    line += "; device " + c.gpu;
  for (const auto& note : c.notes)
    line += "; " + note;
  return line;
}

}  // namespace

CalibrationInputs load_inputs(const std::vector<std::string>& paths) {
  CalibrationInputs in;
  for (const auto& path : paths) {
    if (std::filesystem::is_directory(path)) {
      throw io::InputError(path, "",
                           "is a folder, not a measurement file; name the files in it (e.g. " +
                               (std::filesystem::path(path) / "*.txt").lexically_normal().string() +
                               ")");
    }
    if (path.ends_with(".json")) {
      Measurements m = read_measurements(path);
      for (auto& c : m.collectives)
        in.curves.push_back(std::move(c));
      for (auto& g : m.gemms)
        in.gemm_rows.push_back(std::move(g));
      in.machines.push_back(m.machine);
      if (m.overlap)
        in.overlaps.push_back(std::move(*m.overlap));
    } else if (path.ends_with(".csv")) {
      auto rows = read_gemm_csv(path);
      in.gemm_rows.insert(in.gemm_rows.end(), rows.begin(), rows.end());
    } else {
      in.curves.push_back(read_nccl_log(path));
    }
  }
  if (in.curves.empty() && in.gemm_rows.empty()) {
    std::vector<io::InputProblem> problems;
    for (const auto& path : paths)
      problems.push_back({path, "", "no collective or GEMM measurement to fit"});
    throw io::InputError(std::move(problems));
  }
  return in;
}

std::string catalog_gpu_for_device(const std::string& device, const Catalog& catalog) {
  std::string name = device;
  if (name.rfind("NVIDIA ", 0) == 0)
    name = name.substr(7);
  if (catalog.find_gpu(name) != nullptr)
    return name;
  if (name.rfind("A100-SXM", 0) == 0) {
    return name.find("40GB") != std::string::npos ? "A100-SXM4-40GB" : "A100-SXM4-80GB";
  }
  if (name.rfind("H100", 0) == 0 && name.find("HBM3") != std::string::npos)
    return "H100-SXM5-80GB";
  if (name.rfind("H200", 0) == 0)
    return "H200-SXM-141GB";
  if (name.rfind("H800", 0) == 0)
    return "H800-SXM5-80GB";
  if (name.rfind("A800-SXM", 0) == 0)
    return "A800-SXM4-80GB";
  return "";
}

namespace {

// The first device name the logs or measurement headers print that the catalog knows, or "".
std::string gpu_of_logs(const CalibrationInputs& inputs, const Catalog& catalog) {
  for (const auto& c : inputs.curves) {
    const std::string gpu = catalog_gpu_for_device(c.gpu, catalog);
    if (!gpu.empty())
      return gpu;
  }
  for (const auto& m : inputs.machines) {
    const std::string gpu = catalog_gpu_for_device(m.gpu, catalog);
    if (!gpu.empty())
      return gpu;
  }
  return "";
}

// The profile's GPU: the option, else the first device name the logs or measurement headers
// print that the catalog knows ("" when neither names one: missing_fit_options says so).
std::string profile_gpu(const CalibrationInputs& inputs, const ProfileFitOptions& options,
                        const Catalog& catalog) {
  return options.gpu.empty() ? gpu_of_logs(inputs, catalog) : options.gpu;
}

// Inter-node logs cannot be fitted without knowing their network (missing_fit_options checks
// they have it); single-node ones ran on NVSwitch.
std::string profile_fabric(const ProfileFitOptions& options) {
  return options.fabric.empty() ? "nvswitch" : options.fabric;
}

// The aggregate NIC bandwidth per node: the option, else the first measurement header that
// states one (0 when none does). Inter-node bus bandwidths are relative to it.
double node_nic_bandwidth(const CalibrationInputs& inputs, const ProfileFitOptions& options) {
  double nic = options.node_nic_bandwidth_bytes_per_s;
  for (const auto& m : inputs.machines) {
    if (nic <= 0.0)
      nic = m.node_nic_bandwidth_bytes_per_s;
  }
  return nic;
}

bool has_inter_node_curve(const CalibrationInputs& inputs) {
  return std::any_of(inputs.curves.begin(), inputs.curves.end(),
                     [](const CollectiveCurve& c) { return c.nodes > 1; });
}

// The catalog GPU a device name states, or "" when it leaves the variant open: "A100-SXM"
// may be 40 or 80 GB (catalog_gpu_for_device's 80 GB is a default for the fit, not a fact).
std::string stated_gpu(const std::string& device, const Catalog& catalog) {
  if (device.find("A100") != std::string::npos && device.find("GB") == std::string::npos)
    return "";
  return catalog_gpu_for_device(device, catalog);
}

// Warns when the inputs the fit uses state different GPUs (say an A100 40 GB log beside an
// 80 GB one), or one GPU other than the profile's: their bandwidths and speeds may differ.
std::vector<std::string> gpu_warnings(const CalibrationInputs& inputs, const GpuSpec& spec,
                                      const Catalog& catalog) {
  std::vector<std::pair<std::string, std::string>> stated;  // GPU, first input naming it
  const auto note = [&](const std::string& device, const std::string& where) {
    const std::string gpu = stated_gpu(device, catalog);
    const bool known = std::any_of(stated.begin(), stated.end(),
                                   [&gpu](const auto& entry) { return entry.first == gpu; });
    if (!gpu.empty() && !known)
      stated.emplace_back(gpu, where);
  };
  for (const auto& c : inputs.curves)
    note(c.gpu, std::filesystem::path(c.source).filename().string());
  for (const auto& row : inputs.gemm_rows) {
    if (gemm_row_in_family(row, spec))
      note(row.gpu, row.file + (row.line > 0 ? ":" + std::to_string(row.line) : ""));
  }
  if (stated.empty() || (stated.size() == 1 && stated.front().first == spec.name))
    return {};
  std::string list;
  for (const auto& [gpu, where] : stated)
    list += (list.empty() ? "" : ", ") + gpu + " (" + where + ")";
  if (stated.size() == 1) {
    return {"the inputs were measured on " + list + ", the profile is fitted for " + spec.name +
            " (--gpu)"};
  }
  return {"the inputs mix GPUs: " + list + "; the profile is fitted for " + spec.name +
          " from all of them (pass only one GPU's logs for a profile of that GPU alone)"};
}

// One joint fit per (collective, scope), in the fixed order of the map key, so that the
// profile's collectives and fit records do not depend on the order of the inputs.
void fit_collectives(const CalibrationInputs& inputs, const CollectiveFitOptions& fit_options,
                     ProfileFitResult& result) {
  HardwareProfile& p = result.profile;
  std::map<std::pair<int, bool>, std::vector<size_t>> groups;
  for (size_t i = 0; i < inputs.curves.size(); ++i) {
    const auto& c = inputs.curves[i];
    groups[{static_cast<int>(c.kind), c.nodes > 1}].push_back(i);
  }
  result.curves = inputs.curves;
  result.curve_model_s.resize(inputs.curves.size());
  for (const auto& [key, members] : groups) {
    std::vector<CollectiveCurve> curves;
    for (size_t i : members)
      curves.push_back(inputs.curves[i]);
    CollectiveFit fit = fit_collective(curves, fit_options);
    for (size_t i : members) {
      const double reference_nic = p.reference_node_nic_bandwidth_bytes_per_s;
      result.curve_model_s[i] = model_times(fit, inputs.curves[i], reference_nic);
      p.fit_quality.push_back(evaluate_fit(fit, inputs.curves[i], reference_nic));
    }
    p.collectives.push_back(std::move(fit));
  }
}

std::string machine_provenance_line(const MachineInfo& m) {
  return "measurements from " + (m.hostname.empty() ? "?" : m.hostname) + " (" + m.gpu + ", " +
         std::to_string(m.nodes) + " nodes, NCCL " + m.nccl_version +
         (m.date.empty() ? "" : ", " + m.date) + ")";
}

std::string gemm_source_line(const GemmSourceFit& s) {
  return "gemm source (" + std::to_string(s.rows) + " rows, " +
         (s.consensus ? std::string("consensus level")
                      : "own level x" + io::printf_string("%.3f", s.scale)) +
         "): " + s.source;
}

// GEMM: fitted from the rows of this GPU family; defaults when there are too few (a fit of
// five parameters needs at least three rows).
void fit_gemm_params(const GpuSpec& spec, std::vector<GemmMeasurement> rows,
                     ProfileFitResult& result) {
  HardwareProfile& p = result.profile;
  result.gemm_rows = std::move(rows);
  size_t matching = 0;
  for (const auto& r : result.gemm_rows)
    matching += gemm_row_matches(r, spec) ? 1 : 0;
  if (matching < 3) {
    p.provenance.push_back("gemm: no " + spec.architecture +
                           " fp16/bf16 measurements given; GemmParams left at their defaults");
    return;
  }
  result.gemm = fit_gemm(result.gemm_rows, spec);
  p.gemm = result.gemm->params;
  p.fit_quality.push_back(result.gemm->record);
  for (const auto& s : result.gemm->sources)
    p.provenance.push_back(gemm_source_line(s));
  if (result.gemm->fp8_max_efficiency_bound > 0.0) {
    p.provenance.push_back(
        "gemm fp8 ceiling " +
        io::printf_string("%.3f (bound %.3f)", p.gemm.fp8_max_efficiency,
                          result.gemm->fp8_max_efficiency_bound) +
        ": the best fp8 shape of a brute-force search: " + result.gemm->fp8_bound_row->source);
  }
}

// One line per overlap file: what it measured, for the profile's provenance.
std::string overlap_provenance_line(const OverlapMeasurement& o) {
  std::string kinds;
  for (const auto& s : o.samples) {
    const std::string name = io::collective_name(s.collective);
    if (kinds.find(name) == std::string::npos)
      kinds += (kinds.empty() ? "" : "/") + name;
  }
  const std::string mib = io::printf_string("%.4g", o.collective_bytes / kMiB);
  return std::filesystem::path(o.source).filename().string() + ": capsim-calibrate overlap, " +
         std::to_string(o.sms_taken) + " of " + std::to_string(o.sms) + " SMs taken (median of " +
         std::to_string(o.samples.size()) + " " + o.dtype + " GEMM x " + kinds + " pairs; " + mib +
         " MiB over " + std::to_string(o.ranks) + " ranks)";
}

// collective_sms measured in situ: the median over the overlap files, each of which must have
// run on the profile's GPU (SMs taken only mean something out of that GPU's SM count).
void measure_collective_sms(const std::vector<OverlapMeasurement>& overlaps, const std::string& gpu,
                            const GpuSpec& spec, HardwareProfile& p) {
  std::vector<OverlapSample> per_file;
  for (const auto& o : overlaps) {
    if (o.sms != spec.num_sms) {
      throw io::InputError(o.source, "/overlap/sms",
                           "measured on a GPU with " + std::to_string(o.sms) + " SMs, but " + gpu +
                               " has " + std::to_string(spec.num_sms) +
                               "; measure collective_sms on the profile's GPU");
    }
    OverlapSample s;
    s.sms_taken = o.sms_taken;
    per_file.push_back(s);
  }
  p.collective_sms = overlap_median_sms_taken(per_file);
  p.provenance.push_back(
      "collective_sms " + std::to_string(p.collective_sms) +
      ": measured in situ by capsim-calibrate overlap (GEMM time alone vs beside a running "
      "collective" +
      (overlaps.size() > 1 ? "; median of " + std::to_string(overlaps.size()) + " files)"
                           : std::string(")")));
  for (const auto& o : overlaps)
    p.provenance.push_back(overlap_provenance_line(o));
}

// collective_sms: measured in situ when an overlap measurement is given, else the default.
void set_collective_sms(const std::vector<OverlapMeasurement>& overlaps, const std::string& gpu,
                        const GpuSpec& spec, HardwareProfile& p) {
  if (!overlaps.empty()) {
    measure_collective_sms(overlaps, gpu, spec, p);
    return;
  }
  p.collective_sms = HardwareProfile{}.collective_sms;
  p.provenance.push_back(
      "collective_sms " + std::to_string(p.collective_sms) +
      ": not measured (no capsim-calibrate overlap input); the default, NCCL's channel count on "
      "HGX A100 and H100 (one CTA per channel)");
}

// The parameters no input measures: published or default values, said so in the provenance.
void set_unfitted_params(const GpuSpec& spec, HardwareProfile& p) {
  p.attention = published_attention_params(spec);
  const bool published = spec.architecture == "ampere" || spec.architecture == "hopper";
  p.provenance.emplace_back(
      (published ? std::string("attention efficiencies: published figures for the architecture "
                               "(Dao 2023: FlashAttention-1 / Triton class on Ampere, "
                               "FlashAttention-2 on Hopper), not fitted; ")
                 : "attention efficiencies: FlashAttention-2's fractions of the A100 peak (no "
                   "figure for " +
                       spec.architecture + " ships with capsim), not fitted; ") +
      "memory_efficiency and per-microbatch overhead: defaults, not fitted (no such data)");
  p.provenance.emplace_back(
      "software_efficiency 1: kernels at benchmark speed (capsim calibrate step fits it from "
      "measured iterations of a training stack)");
}

}  // namespace

void check_fit_fabric(const std::string& fabric, const std::string& source) {
  if (!fabric_from_string(fabric)) {
    throw io::InputError(source, "",
                         "expected " + io::join_names(fabric_names()) + ", got \"" + fabric + "\"");
  }
}

std::string inter_node_fabric_list() {
  std::vector<std::string> names;
  for (const std::string& name : fabric_names()) {
    if (name != to_string(Fabric::kNvSwitch))
      names.push_back(name);
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

std::vector<MissingOption> missing_fit_options(const CalibrationInputs& inputs,
                                               const ProfileFitOptions& options,
                                               const Catalog& catalog) {
  std::vector<MissingOption> missing;
  if (profile_gpu(inputs, options, catalog).empty()) {
    // Name what the logs print, so new hardware is recognised as such.
    std::string device;
    for (const auto& c : inputs.curves)
      device = device.empty() ? c.gpu : device;
    for (const auto& m : inputs.machines)
      device = device.empty() ? m.gpu : device;
    missing.push_back(
        {"--gpu", "the logs name no known GPU" +
                      (device.empty() ? std::string() : " (they print \"" + device + "\")") +
                      "; pass --gpu (one of the catalog), or describe new hardware with "
                      "--gpu-spec GPU.json (docs/calibration.md, \"New hardware\")"});
  }
  if (has_inter_node_curve(inputs)) {
    if (options.fabric.empty() || options.fabric == "nvswitch") {
      missing.push_back(
          {"--fabric", "inter-node logs need the fabric they ran on: " + inter_node_fabric_list()});
    }
    if (node_nic_bandwidth(inputs, options) <= 0.0) {
      missing.push_back({"--node-nic-bandwidth",
                         "inter-node logs need the aggregate NIC bandwidth per node they ran "
                         "with, e.g. 400Gbps"});
    }
  }
  return missing;
}

io::InputError missing_options_error(const std::vector<MissingOption>& missing) {
  std::vector<io::InputProblem> problems;
  problems.reserve(missing.size());
  for (const MissingOption& m : missing)
    problems.push_back({m.option, "", m.reason});
  return io::InputError(std::move(problems));
}

std::unique_ptr<ProfileFitResult> fit_profile(CalibrationInputs inputs,
                                              const ProfileFitOptions& options,
                                              const Catalog& catalog) {
  auto result = std::make_unique<ProfileFitResult>();
  HardwareProfile& p = result->profile;
  if (inputs.curves.empty() && inputs.gemm_rows.empty())
    throw std::invalid_argument("fit_profile: no curve and no GEMM row to fit");
  const std::vector<MissingOption> missing = missing_fit_options(inputs, options, catalog);
  if (!missing.empty())
    throw missing_options_error(missing);
  const std::string gpu = profile_gpu(inputs, options, catalog);
  const GpuSpec* spec = catalog.find_gpu(gpu);
  if (spec == nullptr)
    throw io::InputError("--gpu", "", "unknown GPU \"" + gpu + "\"");
  const bool any_inter = has_inter_node_curve(inputs);
  const std::string fabric = profile_fabric(options);
  const double nic = node_nic_bandwidth(inputs, options);
  result->warnings = gpu_warnings(inputs, *spec, catalog);

  p.gpu = *spec;
  p.fabric = fabric;
  p.name = options.name.empty() ? gpu + "-" + fabric : options.name;
  p.reference_node_nic_bandwidth_bytes_per_s = any_inter ? nic : 0.0;
  p.is_datasheet_default = false;

  CollectiveFitOptions fit_options;
  fit_options.gpu_has_nvls = spec->has_nvls;
  fit_options.node_nic_bandwidth_bytes_per_s = nic;
  fit_options.plugin_latency_s = plugin_latency_s(fabric);
  fit_options.max_regimes = options.max_regimes;
  fit_collectives(inputs, fit_options, *result);
  for (const auto& c : inputs.curves)
    p.provenance.push_back(provenance_line(c));
  for (const auto& m : inputs.machines)
    p.provenance.push_back(machine_provenance_line(m));

  fit_gemm_params(*spec, std::move(inputs.gemm_rows), *result);
  set_collective_sms(inputs.overlaps, gpu, *spec, p);
  set_unfitted_params(*spec, p);
  return result;
}

}  // namespace capsim::calibrate
