#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/nccl_log.hpp"

namespace capsim::calibrate {

inline constexpr const char* kMeasurementsSchema = "capsim.measurements/v1";

// One timed GEMM C[m x n] = A[m x k] B[k x n] (x batch), from the GEMM CSV or the harness.
struct GemmMeasurement {
  std::string gpu;    // as recorded ("A100-SXM", "H100 (variant not stated)", device name)
  std::string dtype;  // "bf16", "fp16", "fp8_e4m3", "tf32"
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
  double batch = 1.0;
  double flop_per_s = 0.0;  // 2 m n k batch / time
  std::string source;
  std::string file;  // the file it was read from, without its folder
  int line = 0;      // CSV line (1-based), 0 for JSON
  // The best throughput of a brute-force shape search (e.g. MAMF, "Maximum Achievable Matmul
  // FLOPS"): no shape of the search ran faster, so the fitted model's ceiling may not either.
  bool search_maximum = false;
};

// The machine a measurement file was taken on (the harness header; docs/calibration.md).
struct MachineInfo {
  std::string hostname;
  std::string gpu;
  int gpus_per_node = 0;
  int nodes = 0;
  int nics_per_node = 0;
  double node_nic_bandwidth_bytes_per_s = 0.0;  // 0 when unknown
  std::string nccl_version;
  std::string cuda_version;
  std::string driver_version;
  std::string efa_plugin;  // aws-ofi-nccl version or ""
  std::string topology;    // free text, e.g. `nvidia-smi topo -m` summary
  std::string date;        // ISO 8601 as given by the user/harness (never the fitter's clock)
  std::map<std::string, std::string> env;  // NCCL_ALGO, NCCL_PROTO, FI_PROVIDER, ...
};

// One GEMM shape timed alone and beside one running collective (`capsim-calibrate overlap`).
struct OverlapSample {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
  double batch = 1.0;
  double time_alone_s = 0.0;   // median of repeats, nothing else running
  double time_beside_s = 0.0;  // median of repeats while the collective loops on another stream
  int sms_taken = 0;           // overlap_sms_taken(sms, time_alone_s, time_beside_s)
};

// The in-situ measurement of HardwareProfile::collective_sms: SMs a running NCCL collective
// takes from the compute kernels beside it (docs/calibration.md, "capsim-calibrate overlap").
struct OverlapMeasurement {
  int sms = 0;                    // SMs of the GPU the GEMMs ran on
  int ranks = 0;                  // GPUs the collectives ran over (one node)
  double collective_bytes = 0.0;  // nccl-tests size of every collective
  std::string dtype;              // GEMM dtype
  std::vector<OverlapSample> samples;
  int sms_taken = 0;   // overlap_median_sms_taken(samples): the value the fitter uses
  std::string source;  // file it was read from ("" when not read from a file)
};

// Returns the SMs a collective takes, from a GEMM's time alone and beside it: a GEMM that
// fills the GPU runs at (SMs - taken) / SMs of its speed, so taken = round(sms x (1 - alone /
// beside)), clamped to [0, sms - 1] (0 when it ran no slower). REQUIRES: sms >= 1, times > 0.
[[nodiscard]] int overlap_sms_taken(int sms, double time_alone_s, double time_beside_s);
// Returns the median of the samples' sms_taken, rounded half up (REQUIRES: non-empty).
[[nodiscard]] int overlap_median_sms_taken(const std::vector<OverlapSample>& samples);

// Contents of one `capsim.measurements/v1` file.
struct Measurements {
  MachineInfo machine;
  std::vector<CollectiveCurve> collectives;
  std::vector<GemmMeasurement> gemms;
  std::optional<OverlapMeasurement> overlap;
};

// Reads a `capsim.measurements/v1` file strictly (JsonReader; errors name file and pointer).
[[nodiscard]] Measurements read_measurements(const std::string& path);
// Reads measurements from a parsed document attributed to `file`.
[[nodiscard]] Measurements read_measurements_json(const nlohmann::json& doc,
                                                  const std::string& file);

// Writes measurements; read_measurements_json(measurements_to_json(m)) round-trips.
[[nodiscard]] nlohmann::json measurements_to_json(const Measurements& measurements);

// Reads the GEMM CSV (header gpu,dtype,M,N,K,tflops,source[,batch,library,note]; RFC 4180
// quoting). Errors name the file and line.
[[nodiscard]] std::vector<GemmMeasurement> read_gemm_csv(const std::string& path);

}  // namespace capsim::calibrate
