#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>
#include <nccl.h>

#include <cublasLt.h>

namespace capsim::calibrate::harness {

// A CUDA, NCCL or cuBLASLt call failed: host, file:line, the library's error string and, for
// NCCL, ncclGetLastError (the content of nccl-tests' messages, as an exception).
class DeviceError : public std::runtime_error {
 public:
  explicit DeviceError(const std::string& message) : std::runtime_error(message) {}
};

// Returns "host file:line: what: detail" for DeviceError messages.
[[nodiscard]] std::string device_error_text(const char* file, int line, const char* what,
                                            const std::string& detail);

}  // namespace capsim::calibrate::harness

#define CAPSIM_CUDA_CHECK(expr)                                                              \
  do {                                                                                       \
    const cudaError_t capsim_err_ = (expr);                                                  \
    if (capsim_err_ != cudaSuccess) {                                                        \
      throw ::capsim::calibrate::harness::DeviceError(                                       \
          ::capsim::calibrate::harness::device_error_text(__FILE__, __LINE__, #expr,         \
                                                          cudaGetErrorString(capsim_err_))); \
    }                                                                                        \
  } while (0)

#define CAPSIM_NCCL_CHECK(expr)                                                                 \
  do {                                                                                          \
    const ncclResult_t capsim_res_ = (expr);                                                    \
    if (capsim_res_ != ncclSuccess && capsim_res_ != ncclInProgress) {                          \
      throw ::capsim::calibrate::harness::DeviceError(                                          \
          ::capsim::calibrate::harness::device_error_text(                                      \
              __FILE__, __LINE__, #expr,                                                        \
              std::string(ncclGetErrorString(capsim_res_)) + " (" + ncclGetLastError(nullptr) + \
                  ")"));                                                                        \
    }                                                                                           \
  } while (0)

#define CAPSIM_CUBLAS_CHECK(expr)                                                         \
  do {                                                                                    \
    const cublasStatus_t capsim_st_ = (expr);                                             \
    if (capsim_st_ != CUBLAS_STATUS_SUCCESS) {                                            \
      throw ::capsim::calibrate::harness::DeviceError(                                    \
          ::capsim::calibrate::harness::device_error_text(                                \
              __FILE__, __LINE__, #expr, "cuBLAS status " + std::to_string(capsim_st_))); \
    }                                                                                     \
  } while (0)
