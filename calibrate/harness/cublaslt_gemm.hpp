#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "models/gemm_cost.hpp"

#include <cublasLt.h>

namespace capsim::calibrate::harness {

// cuBLASLt GEMMs on one GPU for capsim-calibrate (part of the CUDA layer, cuda_backend.cpp):
// one (dtype, shape) prepared at a time, with its descriptors, the heuristic's algorithm and
// rotating operand sets that keep every timed run's operands out of L2. Errors throw
// DeviceError (device_check.hpp). NOT RUN ON A GPU YET (docs/calibration.md).
class CublasLtGemm {
 public:
  // GEMMs on CUDA device `device` (its handle and buffers are made on first use).
  explicit CublasLtGemm(int device) : device_(device) {}
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;
  CublasLtGemm(CublasLtGemm&&) = delete;
  CublasLtGemm& operator=(CublasLtGemm&&) = delete;

  // Prepares (dtype, shape) unless it is the one prepared last. dtype: "bf16", "fp16" or
  // "fp8_e4m3" (16-bit output for all).
  void prepare(const std::string& dtype, const GemmShape& shape);

  // Times the prepared GEMM on `stream`: `warmup` untimed runs, then `repeats` runs, each
  // between two CUDA events; returns the repeats' times in seconds.
  [[nodiscard]] std::vector<double> time(cudaStream_t stream, int warmup, int repeats);

  // Runs the prepared GEMM once more and checks sampled output elements against the known
  // operands: adds the samples checked to `checked` and the wrong ones to `wrong`.
  void check(cudaStream_t stream, long long& wrong, long long& checked);

 private:
  // cuBLASLt state of one (dtype, shape): descriptors, the heuristic's algorithm and the
  // rotating operand sets in buffers_ (A, B, D per set).
  struct Prepared {
    std::string dtype;
    GemmShape shape;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a_layout = nullptr;
    cublasLtMatrixLayout_t b_layout = nullptr;
    cublasLtMatrixLayout_t d_layout = nullptr;
    cublasLtMatmulHeuristicResult_t heuristic{};
    size_t sets = 0;
    size_t next_set = 0;  // the operand set the next warm-up or timed run uses
  };

  static constexpr size_t kWorkspace = 32u << 20;

  [[nodiscard]] bool is_prepared(const std::string& dtype, const GemmShape& shape) const;
  void release();
  void ensure_handle();
  [[nodiscard]] size_t rotating_set_count(size_t set_bytes) const;
  void allocate_buffers(size_t sets, size_t a_bytes, size_t b_bytes, size_t d_bytes);
  void fill_operands(bool fp8, bool fp16, size_t a_elems, size_t b_elems, size_t sets);
  void copy_first_set_to_others(size_t a_elems, size_t b_elems, size_t elt, size_t sets);
  void create_layouts(cudaDataType_t in_type, cudaDataType_t out_type, uint64_t m, uint64_t n,
                      uint64_t k, int32_t batch);
  void set_batch_strides(uint64_t m, uint64_t n, uint64_t k, int32_t batch);
  void choose_algorithm();
  void run(size_t set, cudaStream_t stream);
  [[nodiscard]] size_t next_operand_set();

  int device_ = 0;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  std::vector<void*> buffers_;
  Prepared prepared_;
};

}  // namespace capsim::calibrate::harness
