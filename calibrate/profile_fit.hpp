#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/collective_fit.hpp"
#include "calibrate/gemm_fit.hpp"
#include "calibrate/measurements.hpp"
#include "models/catalog.hpp"
#include "models/hardware_profile.hpp"

#include "io/input_error.hpp"

namespace capsim::calibrate {

// Everything read from the files given to `capsim calibrate fit`.
struct CalibrationInputs {
  std::vector<CollectiveCurve> curves;
  std::vector<GemmMeasurement> gemm_rows;
  std::vector<MachineInfo> machines;         // one per measurement JSON
  std::vector<OverlapMeasurement> overlaps;  // capsim-calibrate overlap, one per JSON having one
};

// Reads every input by kind: *.json capsim.measurements/v1, *.csv the GEMM CSV, anything else
// a nccl-tests text log. Throws InputError naming the file (a folder among them included), and
// naming every file when none holds a collective curve or a GEMM row (overlap measurements
// alone fit nothing but collective_sms). REQUIRES: !paths.empty()
[[nodiscard]] CalibrationInputs load_inputs(const std::vector<std::string>& paths);

// Choices the logs cannot make themselves (docs/calibration.md).
struct ProfileFitOptions {
  std::string name;    // profile name; default "<gpu>-<fabric>"
  std::string gpu;     // a name the fit's catalog knows; "" = from the logs' device names
  std::string fabric;  // one of fabric_names(); required with inter-node curves
  double node_nic_bandwidth_bytes_per_s = 0.0;  // required with inter-node curves
  int max_regimes = 4;
};

// Throws an InputError at `source` (the option, "--fabric" or "fabric") unless `fabric` is one
// of fabric_names().
void check_fit_fabric(const std::string& fabric, const std::string& source);

// The inter-node fabrics a fit's logs may have run on, as a sentence's list
// ("infiniband, roce, ... or tcpxo").
[[nodiscard]] std::string inter_node_fabric_list();

// An option the inputs need and the command line lacks, and why.
struct MissingOption {
  std::string option;  // "--fabric"
  std::string reason;  // "inter-node logs need the fabric they ran on: ..."
};

// Returns every option the inputs need that `options` lacks, in the order --gpu, --fabric,
// --node-nic-bandwidth: the GPU when no input names one `catalog` knows; with inter-node curves
// the fabric and, unless a measurement header states it, the NIC bandwidth per node.
[[nodiscard]] std::vector<MissingOption> missing_fit_options(
    const CalibrationInputs& inputs, const ProfileFitOptions& options,
    const Catalog& catalog = builtin_catalog());

// Returns the error naming all of `missing` at once, one problem per option: "--fabric: why",
// then "--node-nic-bandwidth: why". REQUIRES: !missing.empty().
[[nodiscard]] io::InputError missing_options_error(const std::vector<MissingOption>& missing);

// A fitted profile with what the report needs to draw it.
struct ProfileFitResult {
  HardwareProfile profile;
  // For stderr, not the profile: inputs measured on different GPUs, or on another GPU than
  // the profile's.
  std::vector<std::string> warnings;
  std::vector<CollectiveCurve> curves;
  std::vector<std::vector<double>> curve_model_s;  // model time per sample, per curve
  std::vector<GemmMeasurement> gemm_rows;          // owns the rows gemm->rows points into
  std::optional<GemmFit> gemm;
};

// Returns the GPU of `catalog` for a device name as nccl-tests prints it ("NVIDIA A100-SXM4-80GB",
// "A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"), or "" when none matches.
[[nodiscard]] std::string catalog_gpu_for_device(const std::string& device,
                                                 const Catalog& catalog = builtin_catalog());

// Fits a profile: one CollectiveFit per (collective, scope) over all curves of that scope,
// GemmParams from the GEMM rows of the GPU family (defaults when there are none), attention
// and framework overheads at their cited defaults; collective_sms is the median of the overlap
// measurements' sms_taken when there are any, else the default 24. The GPU is `catalog`'s
// (options.gpu, else the logs' device names). Deterministic. Throws missing_options_error when
// options the inputs need are missing.
// REQUIRES: a curve or a GEMM row in `inputs` (load_inputs ensures it)
[[nodiscard]] std::unique_ptr<ProfileFitResult> fit_profile(
    CalibrationInputs inputs, const ProfileFitOptions& options,
    const Catalog& catalog = builtin_catalog());

// Returns a self-contained HTML report: measured vs fitted curves as inline SVG and a table of
// errors per curve.
[[nodiscard]] std::string render_report(const ProfileFitResult& result);

}  // namespace capsim::calibrate
