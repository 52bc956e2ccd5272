#pragma once

#include <memory>
#include <string>

#include "calibrate/harness/harness.hpp"

namespace capsim::calibrate::harness {

struct CudaBackendOptions {
  int gpus = 0;          // local GPUs one process drives (0 = all visible; 1 under MPI)
  bool use_mpi = false;  // one process per GPU, NCCL unique id broadcast over MPI
  std::string date;      // recorded in the machine header
};

// Returns the CUDA/NCCL/cuBLASLt backend (thin layer over the libraries; cuda_backend.cpp).
// Throws DeviceError when no GPU or NCCL communicator can be set up.
[[nodiscard]] std::unique_ptr<Backend> make_cuda_backend(const CudaBackendOptions& options);

// Returns true when at least one CUDA device is usable (driver present, device visible).
[[nodiscard]] bool cuda_device_available();

// Returns the compute capability of local CUDA device 0 as major x 10 + minor (90 for H100).
[[nodiscard]] int cuda_compute_capability();

// Returns true when this build can bootstrap multi-node runs over MPI.
[[nodiscard]] bool built_with_mpi();

// MPI lifetime for main(): no-ops without MPI.
void mpi_init(int* argc, char*** argv);
void mpi_finalize();
// Ends every process of the MPI job with `code` (a failure on one rank must not leave the
// others waiting in a collective); a no-op without MPI.
void mpi_abort(int code);
[[nodiscard]] int mpi_rank();

}  // namespace capsim::calibrate::harness
