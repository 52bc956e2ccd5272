// capsim-calibrate: measures NCCL collectives and cuBLASLt GEMMs on this machine and writes
// capsim.measurements/v1 JSON for `capsim calibrate fit`.
//   capsim-calibrate nccl [-c all_reduce,...] [-b 8] [-e 8G] [-f 2] [-w 5] [-n 20] -o m.json
//   capsim-calibrate gemm [--scenario s.json] [--grid] [--dtypes bf16,fp16,fp8_e4m3] -o m.json
//   capsim-calibrate overlap [--shapes 8192x8192x8192,...] [-c all_reduce,all_gather] -o m.json
// Multi-node: build with MPI and launch one process per GPU with mpirun/srun (as nccl-tests).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "calibrate/harness/cuda_backend.hpp"
#include "calibrate/harness/dry_run.hpp"
#include "calibrate/harness/harness.hpp"
#include "models/gpu_catalog.hpp"

#include "io/input_error.hpp"
#include "io/output_files.hpp"
#include "io/scenario_io.hpp"

namespace h = capsim::calibrate::harness;

namespace {

constexpr const char* kUsage =
    "usage: capsim-calibrate nccl|gemm|overlap [options] -o MEASUREMENTS.json (see --help of "
    "each)\n";

std::string today_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 16> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%d", &tm);
  return buf.data();
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    out.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

// Rank 0 writes the measurements whole or not at all (temporary file, then rename).
void write(const std::string& path, const capsim::calibrate::Measurements& m) {
  if (h::mpi_rank() == 0)
    capsim::io::write_file_atomically(path,
                                      capsim::calibrate::measurements_to_json(m).dump(2) + "\n");
}

// Parses a subcommand's options (adding --dry-run): prints the help and returns nullopt on
// --help; otherwise requires -o, and rank 0, which writes it, checks it can before any GPU runs.
std::optional<cxxopts::ParseResult> parse_or_help(cxxopts::Options& options, int argc,
                                                  char** argv) {
  options.add_options()("dry-run", "check the options, print what would be measured, exit");
  auto args = options.parse(argc, argv);
  if (args.count("help") > 0) {
    std::cout << options.help();
    return std::nullopt;
  }
  if (args.count("output") == 0)
    throw capsim::io::InputError("-o", "", "missing output file");
  if (h::mpi_rank() == 0)
    capsim::io::check_output_path({"-o", args["output"].as<std::string>()});
  return args;
}

bool dry_run(const cxxopts::ParseResult& args, const std::string& plan) {
  if (args.count("dry-run") == 0)
    return false;
  if (h::mpi_rank() == 0)
    std::cout << plan;
  return true;
}

int run_nccl(int argc, char** argv) {
  cxxopts::Options options("capsim-calibrate nccl",
                           "NCCL collectives over a size sweep, nccl-tests conventions");
  options.add_options()("c,collectives", "all, or a list of all_reduce,all_gather,...",
                        cxxopts::value<std::string>()->default_value("all"))(
      "b,minbytes", "smallest size (1024-based K/M/G)",
      cxxopts::value<std::string>()->default_value("8"))(
      "e,maxbytes", "largest size", cxxopts::value<std::string>()->default_value("4G"))(
      "f,stepfactor", "size multiplier", cxxopts::value<double>()->default_value("2"))(
      "w,warmup_iters", "untimed ops per size", cxxopts::value<int>()->default_value("5"))(
      "n,iters", "timed ops per size", cxxopts::value<int>()->default_value("20"))(
      "no-in-place", "skip the in-place variant")(
      "g,gpus", "local GPUs this process drives (0 = all; 1 per process under MPI)",
      cxxopts::value<int>()->default_value("0"))("mpi", "bootstrap across processes with MPI")(
      "date", "date recorded in the header (default: today, UTC)", cxxopts::value<std::string>())(
      "o,output", "measurement JSON to write", cxxopts::value<std::string>())("h,help", "help");
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed)
    return 0;
  const auto& args = *parsed;
  h::NcclSweep sweep;
  sweep.collectives = h::parse_collectives_arg(args["collectives"].as<std::string>());
  sweep.min_bytes = h::parse_size_arg("--minbytes", args["minbytes"].as<std::string>());
  sweep.max_bytes = h::parse_size_arg("--maxbytes", args["maxbytes"].as<std::string>());
  sweep.factor = args["stepfactor"].as<double>();
  sweep.warmup = args["warmup_iters"].as<int>();
  sweep.iters = args["iters"].as<int>();
  sweep.in_place = args.count("no-in-place") == 0;
  h::validate(sweep);
  const int gpus = args["gpus"].as<int>();
  if (dry_run(args, h::describe_plan(sweep, gpus > 0 ? gpus : 8)))
    return 0;
  h::CudaBackendOptions backend_options;
  backend_options.gpus = gpus;
  backend_options.use_mpi = args.count("mpi") > 0;
  if (backend_options.use_mpi && !h::built_with_mpi()) {
    throw capsim::io::InputError("--mpi", "", "this capsim-calibrate was built without MPI");
  }
  backend_options.date = args.count("date") > 0 ? args["date"].as<std::string>() : today_utc();
  auto backend = h::make_cuda_backend(backend_options);
  write(args["output"].as<std::string>(), h::run_nccl(*backend, sweep));
  return 0;
}

int run_gemm(int argc, char** argv) {
  cxxopts::Options options("capsim-calibrate gemm", "cuBLASLt GEMMs, median of repeats");
  options.add_options()("scenario", "also run the GEMM shapes of this capsim scenario",
                        cxxopts::value<std::string>())("grid", "run the fitting grid")(
      "dtypes", "bf16,fp16,fp8_e4m3 (fp8 on Hopper)",
      cxxopts::value<std::string>()->default_value("bf16"))(
      "w,warmup", "untimed runs per shape", cxxopts::value<int>()->default_value("10"))(
      "r,repeats", "timed runs per shape (median)", cxxopts::value<int>()->default_value("30"))(
      "date", "date recorded in the header", cxxopts::value<std::string>())(
      "o,output", "measurement JSON to write", cxxopts::value<std::string>())("h,help", "help");
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed)
    return 0;
  const auto& args = *parsed;
  h::GemmSweep sweep;
  if (args.count("grid") > 0 || args.count("scenario") == 0)
    sweep.shapes = h::gemm_grid();
  if (args.count("scenario") > 0) {
    const auto scenario = capsim::io::load_scenario(args["scenario"].as<std::string>());
    for (const auto& s : h::scenario_gemm_shapes(scenario))
      sweep.shapes.push_back(s);
  }
  sweep.dtypes = split(args["dtypes"].as<std::string>());
  sweep.warmup = args["warmup"].as<int>();
  sweep.repeats = args["repeats"].as<int>();
  if (args.count("dry-run") > 0) {
    h::validate(sweep, /*gpu_has_fp8=*/true);  // the real run checks the GPU's fp8 support
    (void)dry_run(args, h::describe_plan(sweep));
    return 0;
  }
  h::CudaBackendOptions backend_options;
  backend_options.gpus = 1;
  backend_options.date = args.count("date") > 0 ? args["date"].as<std::string>() : today_utc();
  auto backend = h::make_cuda_backend(backend_options);
  // fp8 tensor cores from compute capability 8.9 on (Ada, Hopper and later), whatever the name.
  h::validate(sweep, h::cuda_compute_capability() >= 89);
  for (const auto& shape : sweep.shapes) {
    if (std::find(sweep.dtypes.begin(), sweep.dtypes.end(), "fp8_e4m3") != sweep.dtypes.end() &&
        !h::fp8_shape_supported(shape)) {
      std::fprintf(stderr, "capsim-calibrate: skipping fp8 %s: %s\n", h::shape_text(shape).c_str(),
                   h::kFp8AlignmentRule);
    }
  }
  write(args["output"].as<std::string>(), h::run_gemm(*backend, sweep));
  return 0;
}

int run_overlap(int argc, char** argv) {
  cxxopts::Options options(
      "capsim-calibrate overlap",
      "collective_sms in situ: GEMMs on GPU 0 alone, then beside a running collective over all "
      "local GPUs");
  options.add_options()(
      "shapes", "GEMMs MxNxK[xBATCH],...",
      cxxopts::value<std::string>()->default_value("8192x8192x8192,8192x28672x8192"))(
      "c,collectives", "all_reduce,all_gather,reduce_scatter",
      cxxopts::value<std::string>()->default_value("all_reduce,all_gather"))(
      "s,collective-bytes", "nccl-tests size of each collective (1024-based K/M/G)",
      cxxopts::value<std::string>()->default_value("256M"))(
      "dtype", "GEMM dtype: bf16 or fp16", cxxopts::value<std::string>()->default_value("bf16"))(
      "w,warmup", "untimed GEMMs per measurement", cxxopts::value<int>()->default_value("10"))(
      "r,repeats", "timed GEMMs per measurement (median)",
      cxxopts::value<int>()->default_value("30"))(
      "g,gpus", "local GPUs the collectives run over (0 = all visible; at least 2)",
      cxxopts::value<int>()->default_value("0"))("date", "date recorded in the header",
                                                 cxxopts::value<std::string>())(
      "o,output", "measurement JSON to write", cxxopts::value<std::string>())("h,help", "help");
  const auto parsed = parse_or_help(options, argc, argv);
  if (!parsed)
    return 0;
  const auto& args = *parsed;
  h::OverlapRun run;
  run.shapes = h::parse_shapes_arg("--shapes", args["shapes"].as<std::string>());
  run.collectives = h::parse_collectives_arg(args["collectives"].as<std::string>());
  run.collective_bytes =
      h::parse_size_arg("--collective-bytes", args["collective-bytes"].as<std::string>());
  run.dtype = args["dtype"].as<std::string>();
  run.warmup = args["warmup"].as<int>();
  run.repeats = args["repeats"].as<int>();
  h::validate(run);
  h::CudaBackendOptions backend_options;
  backend_options.gpus = args["gpus"].as<int>();
  if (backend_options.gpus == 1) {
    throw capsim::io::InputError("--gpus", "",
                                 "overlap needs at least 2 GPUs, got 1: a collective over one rank "
                                 "moves no data");
  }
  if (dry_run(args, h::describe_plan(run)))
    return 0;
  backend_options.date = args.count("date") > 0 ? args["date"].as<std::string>() : today_utc();
  auto backend = h::make_cuda_backend(backend_options);
  write(args["output"].as<std::string>(), h::run_overlap(*backend, run));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  h::mpi_init(&argc, &argv);
  int rc = 0;
  try {
    const std::string sub = argc > 1 ? argv[1] : "";
    if (sub == "nccl") {
      rc = run_nccl(argc - 1, argv + 1);
    } else if (sub == "gemm") {
      rc = run_gemm(argc - 1, argv + 1);
    } else if (sub == "overlap") {
      rc = run_overlap(argc - 1, argv + 1);
    } else {
      std::cerr << kUsage;
      rc = sub == "-h" || sub == "--help" ? 0 : 2;
    }
  } catch (const capsim::io::InputError& e) {
    std::fprintf(stderr, "capsim-calibrate: error: %s\n", e.what());
    rc = 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "capsim-calibrate: error: %s\n", e.what());
    rc = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "capsim-calibrate: error: %s\n", e.what());
    rc = 1;
  }
  if (rc != 0)
    h::mpi_abort(rc);
  h::mpi_finalize();
  return rc;
}
