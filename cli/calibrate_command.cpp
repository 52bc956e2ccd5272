// capsim calibrate fit LOG_OR_JSON... -o PROFILE.json [--report REPORT.html]
// capsim calibrate run ...   (points to the capsim-calibrate harness of CUDA builds)
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "calibrate/profile_fit.hpp"
#include "models/collective_cost.hpp"
#include "models/io/input_error.hpp"
#include "models/io/profile_io.hpp"
#include "models/io/units.hpp"

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"

namespace capsim::cli {
namespace {

constexpr const char* kUsage =
    "usage: capsim calibrate fit LOG_OR_JSON... -o PROFILE.json [--report REPORT.html]\n"
    "       capsim calibrate run   (the CUDA/NCCL harness: capsim-calibrate)\n";

int run_fit(int argc, char** argv) {
  cxxopts::Options options("capsim calibrate fit",
                           "Fit a capsim.profile/v1 from nccl-tests logs (*.txt), capsim "
                           "measurement JSON (*.json) and the GEMM CSV (*.csv)");
  options.add_options()("o,output", "profile JSON to write", cxxopts::value<std::string>())(
      "report", "HTML fit report to write", cxxopts::value<std::string>())(
      "name", "profile name (default GPU-fabric)", cxxopts::value<std::string>())(
      "gpu", "catalog GPU (default: from the logs' device lines)", cxxopts::value<std::string>())(
      "fabric", "inter-node fabric of the logs: infiniband, roce, efa",
      cxxopts::value<std::string>())(
      "node-nic-bandwidth", "aggregate NIC bandwidth per node of the logs, e.g. 400Gbps",
      cxxopts::value<std::string>())("max-regimes", "most NCCL regimes per curve (1-4)",
                                     cxxopts::value<int>()->default_value("4"))(
      "validate", "held-out nccl-tests log to evaluate the fitted profile on (repeatable)",
      cxxopts::value<std::vector<std::string>>())("inputs", "measurement files",
                                                  cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"inputs"});
  options.positional_help("LOG_OR_JSON...");
  cxxopts::ParseResult args;
  if (!parse_or_help(options, argc, argv, args))
    return 0;
  if (args.count("inputs") == 0)
    throw InputError("", "", "no input files; see --help");
  if (args.count("output") == 0)
    throw InputError("", "", "missing -o PROFILE.json");

  calibrate::ProfileFitOptions fit_options;
  if (args.count("name") > 0)
    fit_options.name = args["name"].as<std::string>();
  if (args.count("gpu") > 0)
    fit_options.gpu = args["gpu"].as<std::string>();
  if (args.count("fabric") > 0) {
    fit_options.fabric = args["fabric"].as<std::string>();
    if (fit_options.fabric != "infiniband" && fit_options.fabric != "roce" &&
        fit_options.fabric != "efa" && fit_options.fabric != "nvswitch") {
      throw InputError(
          "--fabric", "",
          "expected infiniband, roce, efa or nvswitch, got \"" + fit_options.fabric + "\"");
    }
  }
  if (args.count("node-nic-bandwidth") > 0) {
    const std::string text = args["node-nic-bandwidth"].as<std::string>();
    auto bw = units::parse_bandwidth_bytes_per_s(text);
    if (!bw) {
      throw InputError("--node-nic-bandwidth", "",
                       "expected a bandwidth like \"400Gbps\", got \"" + text + "\"");
    }
    fit_options.node_nic_bandwidth_bytes_per_s = *bw;
  }
  fit_options.max_regimes = args["max-regimes"].as<int>();
  if (fit_options.max_regimes < 1 || fit_options.max_regimes > 4) {
    throw InputError("--max-regimes", "", "expected 1 to 4");
  }

  auto inputs = calibrate::load_inputs(args["inputs"].as<std::vector<std::string>>());
  auto result = calibrate::fit_profile(std::move(inputs), fit_options);
  const std::string out = args["output"].as<std::string>();
  write_file_atomically(out, profile_to_text(result->profile));
  if (args.count("report") > 0) {
    write_file_atomically(args["report"].as<std::string>(), calibrate::render_report(*result));
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
        throw InputError(path, "", "the fitted profile has no fit for this collective and scope");
      }
      const FitRecord f = calibrate::evaluate_fit(*fit, curve);
      std::printf("held-out %-43s %-58s MAPE %6.2f%%  >=1MiB %6.2f%% (%d pts)\n", f.curve.c_str(),
                  f.source.c_str(), f.mape_pct, f.mape_large_pct, f.points_large);
    }
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
