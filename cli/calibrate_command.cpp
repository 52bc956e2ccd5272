// capsim calibrate fit LOG_OR_JSON... -o PROFILE.json [--report REPORT.html]
//                      [--software-efficiency-from PROFILE.json]
// capsim calibrate step RUNS.json -o PROFILE.json [--profile BASE.json] [--cases PREFIX]...
//                       [--set PATH=VALUE]... [--cross-validate]
// capsim calibrate run ...   (points to the capsim-calibrate harness of CUDA builds)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "calibrate/profile_fit.hpp"
#include "calibrate/step_fit.hpp"
#include "models/catalog.hpp"
#include "models/collective_cost.hpp"
#include "models/gpu_catalog.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "io/gpu_spec_io.hpp"
#include "io/in_situ_prior.hpp"
#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/units.hpp"
#include "io/validation_io.hpp"

namespace capsim::cli {
namespace {

constexpr const char* kUsage =
    "usage: capsim calibrate fit LOG_OR_JSON... -o PROFILE.json [--report REPORT.html] "
    "[--software-efficiency-from PROFILE.json]\n"
    "       capsim calibrate step RUNS.json -o PROFILE.json [--profile BASE.json] "
    "[--cases ID_PREFIX]... [--set PATH=VALUE]... [--attention] [--cross-validate] "
    "[--tensor-speed]\n"
    "       capsim calibrate run   (the CUDA/NCCL harness: capsim-calibrate)\n";

// The in-situ factor is the GPU's software stack's, not its network's: fitted once per GPU family
// (calibrate step on the profile whose fabric the measured runs used) and copied into the
// family's other profiles with its provenance line. New hardware (a GPU defined by --gpu-spec)
// has no factor of its own until its steps are measured: it borrows the shipped families'
// (in_situ_prior) or, with this option, another GPU's, and the provenance names that GPU. Throws
// InputError naming the file when it is not a profile, or is for another catalog GPU.
void take_software_efficiency(const std::string& path, HardwareProfile& fitted) {
  const HardwareProfile source = io::load_profile_for(path, fitted.gpu);
  std::string origin =
      calibrate::software_efficiency_origin(source) + "; copied from profile " + source.name;
  if (source.gpu.name != fitted.gpu.name) {
    if (is_builtin_gpu(fitted.gpu.name)) {
      throw io::InputError(path, "/gpu",
                           "--software-efficiency-from needs a profile of the fitted GPU \"" +
                               fitted.gpu.name + "\", got \"" + source.gpu.name + "\"");
    }
    origin += " (fitted on " + source.gpu.name + ", borrowed for new hardware)";
  }
  calibrate::set_software_efficiency(fitted, source.software_efficiency, origin);
}

// The fit's options from the command line, checked (exit 2 on a bad value): the GPU (a catalog
// name, or new hardware defined by --gpu-spec), the fabric and NIC bandwidth of the logs, and
// the most regimes per curve. --gpu-spec's GPU joins `catalog`.
calibrate::ProfileFitOptions profile_fit_options(const cxxopts::ParseResult& args,
                                                 Catalog& catalog) {
  calibrate::ProfileFitOptions fit_options;
  if (args.count("name") > 0)
    fit_options.name = args["name"].as<std::string>();
  if (args.count("gpu-spec") > 0)
    fit_options.gpu = io::load_gpu_definition(args["gpu-spec"].as<std::string>(), catalog).name;
  if (args.count("gpu") > 0) {
    const std::string gpu = args["gpu"].as<std::string>();
    if (!fit_options.gpu.empty() && gpu != fit_options.gpu) {
      throw io::InputError("--gpu", "",
                           "\"" + gpu + "\" is not the GPU --gpu-spec defines (\"" +
                               fit_options.gpu + "\"); give one of the two");
    }
    fit_options.gpu = gpu;
  }
  if (args.count("fabric") > 0) {
    fit_options.fabric = args["fabric"].as<std::string>();
    calibrate::check_fit_fabric(fit_options.fabric, "--fabric");
  }
  if (args.count("node-nic-bandwidth") > 0) {
    const std::string text = args["node-nic-bandwidth"].as<std::string>();
    auto bw = io::units::parse_bandwidth_bytes_per_s(text);
    if (!bw) {
      throw io::InputError("--node-nic-bandwidth", "",
                           "expected a bandwidth like \"400Gbps\", got \"" + text + "\"");
    }
    fit_options.node_nic_bandwidth_bytes_per_s = *bw;
  }
  fit_options.max_regimes = args["max-regimes"].as<int>();
  if (fit_options.max_regimes < 1 || fit_options.max_regimes > 4) {
    throw io::InputError("--max-regimes", "", "expected 1 to 4");
  }

  return fit_options;
}

// Names every option the command line lacks at once: -o, and what the logs need (--gpu,
// --fabric, --node-nic-bandwidth), rather than one per run.
void check_fit_options(const cxxopts::ParseResult& args, const calibrate::CalibrationInputs& inputs,
                       const calibrate::ProfileFitOptions& fit_options, const Catalog& catalog) {
  std::vector<calibrate::MissingOption> missing;
  if (args.count("output") == 0)
    missing.push_back({"-o", "missing PROFILE.json, the profile to write"});
  for (auto& option : calibrate::missing_fit_options(inputs, fit_options, catalog))
    missing.push_back(std::move(option));
  if (!missing.empty())
    throw calibrate::missing_options_error(missing);
}

// The files calibrate fit writes, and those it reads, which they may not replace.
std::vector<io::NamedPath> fit_outputs(const cxxopts::ParseResult& args) {
  std::vector<io::NamedPath> outputs{{"-o", args["output"].as<std::string>()}};
  if (args.count("report") > 0)
    outputs.push_back({"--report", args["report"].as<std::string>()});
  return outputs;
}

std::vector<io::NamedPath> fit_inputs(const cxxopts::ParseResult& args) {
  std::vector<io::NamedPath> inputs;
  for (const auto& path : args["inputs"].as<std::vector<std::string>>())
    inputs.push_back({"the input", path});
  if (args.count("validate") > 0) {
    for (const auto& path : args["validate"].as<std::vector<std::string>>())
      inputs.push_back({"--validate", path});
  }
  for (const char* option : {"gpu-spec", "software-efficiency-from"}) {
    if (args.count(option) > 0)
      inputs.push_back({std::string("--") + option, args[option].as<std::string>()});
  }
  return inputs;
}

int run_fit(int argc, char** argv) {
  cxxopts::Options options("capsim calibrate fit",
                           "Fit a capsim.profile/v1 from nccl-tests logs (*.txt), capsim "
                           "measurement JSON (*.json) and the GEMM CSV (*.csv)");
  options.add_options()("o,output", "profile JSON to write", cxxopts::value<std::string>())(
      "report", "HTML fit report to write", cxxopts::value<std::string>())(
      "name", "profile name (default GPU-fabric)", cxxopts::value<std::string>())(
      "gpu", "catalog GPU (default: from the logs' device lines)", cxxopts::value<std::string>())(
      "gpu-spec", "new hardware: a capsim.gpu/v1 file describing the GPU (docs/calibration.md)",
      cxxopts::value<std::string>())(
      "fabric", "inter-node fabric of the logs: " + calibrate::inter_node_fabric_list(),
      cxxopts::value<std::string>())(
      "node-nic-bandwidth", "aggregate NIC bandwidth per node of the logs, e.g. 400Gbps",
      cxxopts::value<std::string>())("max-regimes", "most NCCL regimes per curve (1-4)",
                                     cxxopts::value<int>()->default_value("4"))(
      "validate", "held-out nccl-tests log to evaluate the fitted profile on (repeatable)",
      cxxopts::value<std::vector<std::string>>())(
      "software-efficiency-from",
      "take software_efficiency from this profile of the same GPU (one fitted by calibrate "
      "step); new hardware (--gpu-spec) may borrow another GPU's",
      cxxopts::value<std::string>())("inputs", "measurement files",
                                     cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"inputs"});
  options.positional_help("LOG_OR_JSON...");
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("inputs") == 0)
    throw io::InputError("LOG_OR_JSON...", "",
                         "missing argument: the measurement files to fit; see --help");
  Catalog catalog;
  const calibrate::ProfileFitOptions fit_options = profile_fit_options(args, catalog);
  auto inputs = calibrate::load_inputs(args["inputs"].as<std::vector<std::string>>());
  check_fit_options(args, inputs, fit_options, catalog);
  io::check_outputs(fit_outputs(args), fit_inputs(args));
  auto result = calibrate::fit_profile(std::move(inputs), fit_options, catalog);
  for (const std::string& warning : result->warnings)
    std::cerr << "capsim calibrate: warning: " << warning << "\n";
  const bool new_hardware = args.count("gpu-spec") > 0;
  if (args.count("software-efficiency-from") > 0) {
    take_software_efficiency(args["software-efficiency-from"].as<std::string>(), result->profile);
  } else if (new_hardware) {
    // No step of any stack was measured on it yet: the shipped families' factor, as its
    // datasheet profile has, so the fit does not make its kernels ~10% faster than that.
    io::InSituPrior prior = io::in_situ_prior(result->profile.gpu.architecture);
    calibrate::set_software_efficiency(result->profile, prior.factor, prior.source);
  }
  const std::string out = args["output"].as<std::string>();
  // A profile fitted from some logs only (one inter-node log, to read its fit quality or
  // validate it against another) is still written, but simulate and plan would reject it (e.g.
  // without an intra-node all_reduce, the fallback for every collective without its own fit):
  // say so now rather than when it is first used.
  const std::string text = io::profile_to_text(result->profile);
  try {
    const nlohmann::json written = io::JsonReader::parse_text(text, out);
    io::JsonReader check(written, out);
    (void)io::read_profile(check);
  } catch (const io::InputError& e) {
    std::cerr << "capsim calibrate: warning: " << out
              << " is for fit reports only; simulate and plan will reject it (" << e.pointer()
              << ": " << e.message() << "); add the missing logs to use it\n";
  }
  for (const auto& f : result->profile.fit_quality) {
    std::printf("%-52s %-58s MAPE %6.2f%%  >=1MiB %6.2f%% (%d pts)\n", f.curve.c_str(),
                f.source.c_str(), f.mape_pct, f.mape_large_pct, f.points_large);
  }
  if (args.count("validate") > 0) {
    // Leave-out validation: the held-out curves are costed with the profile just fitted.
    for (const auto& path : args["validate"].as<std::vector<std::string>>()) {
      const calibrate::CollectiveCurve curve = calibrate::read_nccl_log(path);
      const CollectiveFit* fit = find_collective_fit(result->profile, curve.kind, curve.nodes > 1);
      if (fit == nullptr || fit->kind != curve.kind) {
        throw io::InputError(path, "",
                             "the fitted profile has no fit for this collective and scope");
      }
      const FitRecord f = calibrate::evaluate_fit(
          *fit, curve, result->profile.reference_node_nic_bandwidth_bytes_per_s);
      std::printf("held-out %-43s %-58s MAPE %6.2f%%  >=1MiB %6.2f%% (%d pts)\n", f.curve.c_str(),
                  f.source.c_str(), f.mape_pct, f.mape_large_pct, f.points_large);
    }
  }
  // Written last, together: a failed validation or report leaves no profile behind.
  std::vector<std::pair<std::string, std::string>> files{{out, text}};
  if (args.count("report") > 0)
    files.emplace_back(args["report"].as<std::string>(), calibrate::render_report(*result));
  io::write_files_atomically(files);
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  // A hardware-only profile predicts kernels at benchmark speed, ~10% faster than the shipped
  // profiles, whose in-situ factor comes from measured runs: say how to carry one.
  if (args.count("software-efficiency-from") == 0 && !new_hardware) {
    std::fprintf(stderr,
                 "note: software_efficiency 1 (kernels at benchmark speed); fit it to measured "
                 "steps of your stack with `capsim calibrate step`, or keep a shipped profile's "
                 "in-situ factor with --software-efficiency-from (docs/calibration.md)\n");
  } else if (args.count("software-efficiency-from") == 0) {
    std::fprintf(stderr,
                 "note: %s; fit it to measured steps of your stack with `capsim calibrate step` "
                 "(docs/calibration.md)\n",
                 io::in_situ_prior(result->profile.gpu.architecture).source.c_str());
  }
  return 0;
}

// ", cases a, b" for the --cases prefixes given and ", set P=V, ..." for the --set changes, else
// "": the provenance says which runs, as changed.
std::string cases_text(const cxxopts::ParseResult& args) {
  std::string text;
  if (args.count("cases") > 0) {
    std::string cases;
    for (const auto& prefix : args["cases"].as<std::vector<std::string>>())
      cases += (cases.empty() ? ", cases " : ", ") + prefix + "*";
    text += cases;
  }
  if (args.count("set") > 0) {
    std::string changes;
    for (const auto& change : args["set"].as<std::vector<std::string>>())
      changes += (changes.empty() ? ", set " : ", ") + change;
    text += changes;
  }
  return text;
}

// Fits the profile's software_efficiency to measured iterations of the user's own stack
// (docs/calibration.md, "Calibrating to your software stack").
int run_step(int argc, char** argv) {
  cxxopts::Options options("capsim calibrate step",
                           "Fit a profile's software_efficiency to measured training iterations "
                           "(a capsim.validation/v1 file of your own runs)");
  options.add_options()("o,output", "profile JSON to write", cxxopts::value<std::string>())(
      "profile", "base profile (default: the one the runs resolve to)",
      cxxopts::value<std::string>())(
      "cross-validate", "also fit on each run alone and report the error on the others")(
      "attention",
      "also fit a factor on the attention efficiencies (runs at two or more sequence lengths)")(
      "tensor-speed",
      "fit the profile's tensor_speed (the tensor cores' rate over the datasheet peaks) in place "
      "of its software_efficiency")("cases", "only runs whose id starts with this (repeatable)",
                                    cxxopts::value<std::vector<std::string>>())(
      "set",
      "change every run's scenario first: PATH=VALUE, as capsim validate --set "
      "(stack=nemo; repeatable)",
      cxxopts::value<std::vector<std::string>>())("runs", "capsim.validation/v1 file",
                                                  cxxopts::value<std::string>());
  options.parse_positional({"runs"});
  options.positional_help("RUNS.json");
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("runs") == 0)
    throw io::InputError("RUNS.json", "", "missing argument");
  if (args.count("output") == 0)
    throw io::InputError("-o", "", "missing PROFILE.json, the profile to write");
  const std::string runs_path = args["runs"].as<std::string>();
  // -o may be the --profile it starts from: the profile is read whole before it is replaced,
  // and scripts/fit-profiles.sh refines the shipped profiles so.
  io::check_outputs({{"-o", args["output"].as<std::string>()}}, {{"the runs file", runs_path}});
  // Every run must read, as --set changes it: the first that does not is the error.
  io::ValidationFile file = io::load_validation_file(runs_path, overrides_option(args));
  if (!file.rejected.empty())
    throw file.rejected.front().error;
  std::vector<io::ValidationCase> runs = std::move(file.cases);
  if (args.count("cases") > 0) {
    const auto prefixes = args["cases"].as<std::vector<std::string>>();
    std::erase_if(
        runs, [&](const io::ValidationCase& run) { return !io::id_has_prefix(run.id, prefixes); });
  }
  if (runs.empty())
    throw io::InputError(runs_path, "/cases", "no run id starts with a --cases prefix");
  HardwareProfile base;
  if (args.count("profile") > 0) {
    base =
        io::load_profile_for(args["profile"].as<std::string>(), runs.front().scenario.cluster.gpu);
  } else {
    base = io::resolve_profile(runs.front().scenario);
    for (size_t i = 1; i < runs.size(); ++i) {
      const HardwareProfile other = io::resolve_profile(runs[i].scenario);
      if (!calibrate::one_factor_serves(base, other)) {
        throw io::InputError(runs_path, runs[i].pointer + "/scenario",
                             "run \"" + runs[i].id + "\" resolves to profile \"" + other.name +
                                 "\", the first run to \"" + base.name + "\"; pass --profile");
      }
    }
  }
  const bool fit_attention = args.count("attention") > 0;
  const bool fit_speed = args.count("tensor-speed") > 0;
  if (fit_speed && (fit_attention || args.count("cross-validate") > 0)) {
    throw io::InputError("--tensor-speed", "",
                         "fits the tensor speed alone: not with --attention or --cross-validate");
  }
  const calibrate::StepFit fit =
      fit_speed ? calibrate::fit_tensor_speed(runs, base, runs_path)
                : calibrate::fit_software_efficiency(runs, base, runs_path, fit_attention);
  HardwareProfile calibrated = fit.profile;
  const std::string fitted_to = " fitted to " + std::to_string(runs.size()) +
                                " measured iteration(s) of " + runs_path + cases_text(args) +
                                " (capsim calibrate step, analytic engine)";
  if (fit_speed) {
    calibrate::set_tensor_speed(calibrated, fit.tensor_speed,
                                "tensor_speed " + std::to_string(fit.tensor_speed) + fitted_to);
  } else {
    calibrate::set_software_efficiency(
        calibrated, fit.software_efficiency,
        "software_efficiency " + std::to_string(fit.software_efficiency) +
            (fit_attention ? ", attention efficiencies x " + std::to_string(fit.attention_scale)
                           : "") +
            fitted_to);
  }
  const std::string out = args["output"].as<std::string>();
  io::write_file_atomically(out, io::profile_to_text(calibrated));
  std::printf("%-44s %12s %12s %8s %12s %8s\n", "run", "measured s", "before s", "error", "after s",
              "error");
  for (size_t i = 0; i < runs.size(); ++i) {
    const double measured = runs[i].measured_iteration_time_s;
    std::printf("%-44s %12.4g %12.4g %7.1f%% %12.4g %7.1f%%\n", runs[i].id.c_str(), measured,
                fit.predicted_before_s[i], 100.0 * (fit.predicted_before_s[i] / measured - 1.0),
                fit.predicted_after_s[i], 100.0 * (fit.predicted_after_s[i] / measured - 1.0));
  }
  double before = 0.0;
  double after = 0.0;
  for (size_t i = 0; i < runs.size(); ++i) {
    before += std::fabs(fit.predicted_before_s[i] / runs[i].measured_iteration_time_s - 1.0);
    after += std::fabs(fit.predicted_after_s[i] / runs[i].measured_iteration_time_s - 1.0);
  }
  const auto n = static_cast<double>(runs.size());
  if (fit_speed) {
    std::printf("tensor_speed %.4g (profile \"%s\", was %.4g): MAPE %.2f%% -> %.2f%%\n",
                fit.tensor_speed, base.name.c_str(), base.tensor_speed, 100.0 * before / n,
                100.0 * after / n);
  } else {
    std::printf("software_efficiency %.4g (profile \"%s\", was %.4g): MAPE %.2f%% -> %.2f%%\n",
                fit.software_efficiency, base.name.c_str(), base.software_efficiency,
                100.0 * before / n, 100.0 * after / n);
  }
  if (fit_attention)
    std::printf("attention efficiencies x %.4g (capped at 1)\n", fit.attention_scale);
  if (args.count("cross-validate") > 0 && runs.size() < 2) {
    std::printf("cross-validation needs at least two runs (one to fit, others to predict)\n");
  } else if (args.count("cross-validate") > 0) {
    std::vector<double> mape = calibrate::cross_validate_one_step(runs, base, runs_path);
    std::sort(mape.begin(), mape.end());
    std::printf(
        "cross-validation (fit on one run, predict the other %zu): MAPE median %.2f%%, "
        "best %.2f%%, worst %.2f%%\n",
        runs.size() - 1, mape[mape.size() / 2], mape.front(), mape.back());
  }
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}

}  // namespace

int run_calibrate(int argc, char** argv) {
  return guarded("capsim calibrate", [&] {
    if (argc < 2) {
      std::cerr << kUsage;
      return 2;
    }
    const std::string sub = argv[1];
    if (sub == "fit")
      return run_fit(argc - 1, argv + 1);
    if (sub == "step")
      return run_step(argc - 1, argv + 1);
    if (sub == "-h" || sub == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (sub == "run") {
#ifdef CAPSIM_HARNESS_BUILT
      std::cout << "The measurement harness is the separate binary capsim-calibrate (built next "
                   "to capsim):\n  capsim-calibrate nccl --help\n  capsim-calibrate gemm --help\n"
                   "  capsim-calibrate overlap --help\n"
                   "Then: capsim calibrate fit measurements.json -o profile.json\n";
      return 0;
#else
      std::cerr << "capsim calibrate run: this build has no CUDA/NCCL harness (configure with "
                   "-DCAPSIM_WITH_CUDA=ON on a machine with CUDA and NCCL to get "
                   "capsim-calibrate)\n";
      return 2;
#endif
    }
    std::cerr << "capsim calibrate: unknown subcommand \"" << sub << "\"\n" << kUsage;
    return 2;
  });
}

}  // namespace capsim::cli
