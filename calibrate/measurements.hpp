#pragma once

#include <map>
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
  int line = 0;  // CSV line (1-based), 0 for JSON
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

// Contents of one `capsim.measurements/v1` file.
struct Measurements {
  MachineInfo machine;
  std::vector<CollectiveCurve> collectives;
  std::vector<GemmMeasurement> gemms;
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
