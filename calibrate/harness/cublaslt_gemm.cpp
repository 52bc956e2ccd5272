// cuBLASLt GEMM timing of capsim-calibrate's CUDA layer (cublaslt_gemm.hpp).
// NOT RUN ON A GPU YET (docs/calibration.md, "What has not run on a real GPU").
#include "calibrate/harness/cublaslt_gemm.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "calibrate/harness/device_check.hpp"
#include "calibrate/harness/harness.hpp"

namespace capsim::calibrate::harness {
namespace {

constexpr int kSampledChecks = 64;

// Half-precision bits to float, for the sampled GEMM check (IEEE 754 binary16).
float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  float value = 0.0f;
  if (exp == 0) {
    value = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    value = mant == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  return sign != 0 ? -value : value;
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float value = 0.0f;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// +1/-1 pattern of A (storage index), deterministic.
bool a_is_positive(uint64_t index) {
  return ((static_cast<uint32_t>(index) * 2654435761u) >> 13 & 1u) != 0;
}

// Returns the time between events[2 i] and events[2 i + 1] for each of the `repeats` pairs.
std::vector<double> event_pair_times_s(const std::vector<cudaEvent_t>& events, int repeats) {
  std::vector<double> times_s;
  for (size_t i = 0; i < static_cast<size_t>(repeats); ++i) {
    float ms = 0.0f;
    CAPSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    times_s.push_back(static_cast<double>(ms) * 1e-3);
  }
  return times_s;
}

}  // namespace

CublasLtGemm::~CublasLtGemm() {
  // Destructors must not throw: errors while freeing are ignored.
  cudaSetDevice(device_);
  release();
  for (void* p : buffers_)
    cudaFree(p);
  if (workspace_ != nullptr)
    cudaFree(workspace_);
  if (lt_ != nullptr)
    cublasLtDestroy(lt_);
}

void CublasLtGemm::prepare(const std::string& dtype, const GemmShape& shape) {
  CAPSIM_CUDA_CHECK(cudaSetDevice(device_));
  if (is_prepared(dtype, shape))
    return;
  release();
  ensure_handle();
  const bool fp8 = dtype == "fp8_e4m3";
  const cudaDataType_t in_type =
      fp8 ? CUDA_R_8F_E4M3 : (dtype == "fp16" ? CUDA_R_16F : CUDA_R_16BF);
  const cudaDataType_t out_type = dtype == "fp16" ? CUDA_R_16F : CUDA_R_16BF;
  const size_t in_elt = fp8 ? 1 : 2;
  const auto m = static_cast<uint64_t>(shape.m);
  const auto n = static_cast<uint64_t>(shape.n);
  const auto k = static_cast<uint64_t>(shape.k);
  const auto batch = static_cast<int32_t>(shape.batch);
  const size_t a_bytes = m * k * in_elt * static_cast<size_t>(batch);
  const size_t b_bytes = k * n * in_elt * static_cast<size_t>(batch);
  const size_t d_bytes = m * n * 2 * static_cast<size_t>(batch);
  const size_t sets = rotating_set_count(a_bytes + b_bytes + d_bytes);
  allocate_buffers(sets, a_bytes, b_bytes, d_bytes);
  fill_operands(fp8, dtype == "fp16", a_bytes / in_elt, b_bytes / in_elt, sets);
  prepared_.dtype = dtype;
  prepared_.shape = shape;
  prepared_.sets = sets;
  create_layouts(in_type, out_type, m, n, k, batch);
  choose_algorithm();
}

// All `warmup` and timed runs are enqueued back to back and synchronised once: a repeat's
// start event is then reached when the previous GEMM ends, so the host's launch latency is not
// timed (with a synchronisation per repeat the stream idles while the host launches, and small
// GEMMs would time ~2x long). Operand sets rotate across warm-up, timed runs and calls
// (Prepared::next_set): restarting at set 0 for the timed runs would give the first `warmup`
// of them the sets the warm-up has just left in L2 (with hundreds of sets for small GEMMs, 10
// of 30 repeats hot).
std::vector<double> CublasLtGemm::time(cudaStream_t stream, int warmup, int repeats) {
  CAPSIM_CUDA_CHECK(cudaSetDevice(device_));
  for (int i = 0; i < warmup; ++i)
    run(next_operand_set(), stream);
  std::vector<cudaEvent_t> events(2 * static_cast<size_t>(repeats), nullptr);
  for (auto& event : events)
    CAPSIM_CUDA_CHECK(cudaEventCreate(&event));
  for (size_t i = 0; i < static_cast<size_t>(repeats); ++i) {
    CAPSIM_CUDA_CHECK(cudaEventRecord(events[2 * i], stream));
    run(next_operand_set(), stream);
    CAPSIM_CUDA_CHECK(cudaEventRecord(events[2 * i + 1], stream));
  }
  CAPSIM_CUDA_CHECK(cudaEventSynchronize(events.back()));
  std::vector<double> times_s = event_pair_times_s(events, repeats);
  for (auto& event : events)
    cudaEventDestroy(event);
  return times_s;
}

// Checks set 0's output against the known A pattern (B is all ones):
// D[i, j] = sum over k of A(k, i), exact in fp32 accumulation, rounded once to 16 bits.
void CublasLtGemm::check(cudaStream_t stream, long long& wrong, long long& checked) {
  CAPSIM_CUDA_CHECK(cudaSetDevice(device_));
  run(0, stream);
  CAPSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto m = static_cast<uint64_t>(prepared_.shape.m);
  const auto n = static_cast<uint64_t>(prepared_.shape.n);
  const auto k = static_cast<uint64_t>(prepared_.shape.k);
  for (int s = 0; s < kSampledChecks; ++s) {
    const uint64_t i = (static_cast<uint64_t>(s) * 7919u) % m;
    const uint64_t j = (static_cast<uint64_t>(s) * 104729u) % n;
    uint16_t bits = 0;
    CAPSIM_CUDA_CHECK(cudaMemcpy(&bits, static_cast<char*>(buffers_[2]) + 2 * (j * m + i),
                                 sizeof(bits), cudaMemcpyDeviceToHost));
    const float got = prepared_.dtype == "fp16" ? half_to_float(bits) : bf16_to_float(bits);
    double expected = 0.0;
    for (uint64_t kk = 0; kk < k; ++kk)
      expected += a_is_positive(i * k + kk) ? 1.0 : -1.0;
    ++checked;
    if (std::abs(got - expected) > 0.01 * std::abs(expected) + 1.0)
      ++wrong;
  }
}

bool CublasLtGemm::is_prepared(const std::string& dtype, const GemmShape& shape) const {
  return prepared_.desc != nullptr && prepared_.dtype == dtype && prepared_.shape.m == shape.m &&
         prepared_.shape.n == shape.n && prepared_.shape.k == shape.k &&
         prepared_.shape.batch == shape.batch;
}

void CublasLtGemm::release() {
  if (prepared_.desc != nullptr)
    cublasLtMatmulDescDestroy(prepared_.desc);
  if (prepared_.a_layout != nullptr)
    cublasLtMatrixLayoutDestroy(prepared_.a_layout);
  if (prepared_.b_layout != nullptr)
    cublasLtMatrixLayoutDestroy(prepared_.b_layout);
  if (prepared_.d_layout != nullptr)
    cublasLtMatrixLayoutDestroy(prepared_.d_layout);
  prepared_ = Prepared{};
}

void CublasLtGemm::ensure_handle() {
  if (lt_ == nullptr) {
    CAPSIM_CUBLAS_CHECK(cublasLtCreate(&lt_));
    CAPSIM_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspace));
  }
}

// Returns how many rotating operand sets of `set_bytes` keep every repeat's operands out of
// the device's L2 (plan_gemm_operand_sets).
size_t CublasLtGemm::rotating_set_count(size_t set_bytes) const {
  cudaDeviceProp prop{};
  CAPSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_));
  return plan_gemm_operand_sets(static_cast<size_t>(prop.l2CacheSize), set_bytes);
}

// Replaces buffers_ with `sets` operand sets of A, B and D.
void CublasLtGemm::allocate_buffers(size_t sets, size_t a_bytes, size_t b_bytes, size_t d_bytes) {
  for (void* p : buffers_)
    CAPSIM_CUDA_CHECK(cudaFree(p));
  buffers_.clear();
  for (size_t s = 0; s < sets * 3; ++s) {
    void* p = nullptr;
    CAPSIM_CUDA_CHECK(cudaMalloc(&p, s % 3 == 0 ? a_bytes : (s % 3 == 1 ? b_bytes : d_bytes)));
    buffers_.push_back(p);
  }
}

void CublasLtGemm::fill_operands(bool fp8, bool fp16, size_t a_elems, size_t b_elems, size_t sets) {
  const uint16_t one16 = fp16 ? 0x3C00 : 0x3F80;
  const uint16_t minus16 = fp16 ? 0xBC00 : 0xBF80;
  const size_t elt = fp8 ? 1 : 2;
  std::vector<uint8_t> host(std::max(a_elems, b_elems) * elt);
  auto put = [&](size_t idx, bool positive) {
    if (fp8) {
      host[idx] = positive ? 0x38 : 0xB8;  // e4m3 +-1.0
    } else {
      const uint16_t v = positive ? one16 : minus16;
      std::memcpy(&host[2 * idx], &v, 2);
    }
  };
  for (size_t i = 0; i < a_elems; ++i)
    put(i, a_is_positive(i));
  CAPSIM_CUDA_CHECK(cudaMemcpy(buffers_[0], host.data(), a_elems * elt, cudaMemcpyHostToDevice));
  for (size_t i = 0; i < b_elems; ++i)
    put(i, true);
  CAPSIM_CUDA_CHECK(cudaMemcpy(buffers_[1], host.data(), b_elems * elt, cudaMemcpyHostToDevice));
  copy_first_set_to_others(a_elems, b_elems, elt, sets);
  // These copies run on the legacy default stream and may still be in flight: a pageable
  // host-to-device cudaMemcpy returns once the data is staged, "the DMA to final destination
  // may not have completed", and device-to-device ones do "no host-side synchronization"
  // (cuda_runtime_api.h, API synchronization behavior). The GEMMs run on
  // cudaStreamNonBlocking streams, which do not wait for stream 0 (driver_types.h): without
  // this they would read half-copied operands and be timed against the copies.
  CAPSIM_CUDA_CHECK(cudaDeviceSynchronize());
}

// Copies set 0's A and B (elements of `elt` bytes) into sets 1 .. sets - 1.
void CublasLtGemm::copy_first_set_to_others(size_t a_elems, size_t b_elems, size_t elt,
                                            size_t sets) {
  for (size_t s = 1; s < sets; ++s) {
    CAPSIM_CUDA_CHECK(
        cudaMemcpy(buffers_[3 * s], buffers_[0], a_elems * elt, cudaMemcpyDeviceToDevice));
    CAPSIM_CUDA_CHECK(
        cudaMemcpy(buffers_[3 * s + 1], buffers_[1], b_elems * elt, cudaMemcpyDeviceToDevice));
  }
}

// TN layout (column-major): A stored K x M and transposed, B K x N, D M x N; fp8 needs TN.
void CublasLtGemm::create_layouts(cudaDataType_t in_type, cudaDataType_t out_type, uint64_t m,
                                  uint64_t n, uint64_t k, int32_t batch) {
  CAPSIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&prepared_.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t op_t = CUBLAS_OP_T;
  CAPSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(prepared_.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                     &op_t, sizeof(op_t)));
  CAPSIM_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&prepared_.a_layout, in_type, k, m, static_cast<int64_t>(k)));
  CAPSIM_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&prepared_.b_layout, in_type, k, n, static_cast<int64_t>(k)));
  CAPSIM_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&prepared_.d_layout, out_type, m, n, static_cast<int64_t>(m)));
  if (batch > 1)
    set_batch_strides(m, n, k, batch);
}

void CublasLtGemm::set_batch_strides(uint64_t m, uint64_t n, uint64_t k, int32_t batch) {
  const std::array<std::pair<cublasLtMatrixLayout_t, int64_t>, 3> strides{
      {{prepared_.a_layout, static_cast<int64_t>(m * k)},
       {prepared_.b_layout, static_cast<int64_t>(k * n)},
       {prepared_.d_layout, static_cast<int64_t>(m * n)}}};
  for (const auto& [layout, stride] : strides) {
    CAPSIM_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &batch, sizeof(batch)));
    CAPSIM_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
}

// The heuristic's first algorithm within kWorkspace; throws DeviceError when there is none.
void CublasLtGemm::choose_algorithm() {
  cublasLtMatmulPreference_t pref = nullptr;
  CAPSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const size_t ws = kWorkspace;
  const cublasStatus_t set_ws = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  int found = 0;
  const cublasStatus_t heuristic =
      set_ws != CUBLAS_STATUS_SUCCESS
          ? set_ws
          : cublasLtMatmulAlgoGetHeuristic(
                lt_, prepared_.desc, prepared_.a_layout, prepared_.b_layout, prepared_.d_layout,
                prepared_.d_layout, pref, 1, &prepared_.heuristic, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  // A failure leaves nothing prepared: is_prepared must not reuse a GEMM without algorithm.
  if (heuristic != CUBLAS_STATUS_SUCCESS)
    release();
  CAPSIM_CUBLAS_CHECK(heuristic);
  // cublasLt.h, cublasLtMatmulAlgoGetHeuristic: on success "inspect
  // heuristicResultsArray[0 to (returnAlgoCount - 1)].state for detail status of results".
  if (found < 1 || prepared_.heuristic.state != CUBLAS_STATUS_SUCCESS) {
    release();
    throw DeviceError("cuBLASLt found no algorithm for this GEMM");
  }
}

// Enqueues the prepared GEMM on operand set `set`.
void CublasLtGemm::run(size_t set, cudaStream_t stream) {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  CAPSIM_CUBLAS_CHECK(cublasLtMatmul(
      lt_, prepared_.desc, &alpha, buffers_[3 * set], prepared_.a_layout, buffers_[3 * set + 1],
      prepared_.b_layout, &beta, buffers_[3 * set + 2], prepared_.d_layout, buffers_[3 * set + 2],
      prepared_.d_layout, &prepared_.heuristic.algo, workspace_, kWorkspace, stream));
}

// Returns the operand set of the next run and advances the rotation.
size_t CublasLtGemm::next_operand_set() {
  const size_t set = prepared_.next_set;
  prepared_.next_set = (set + 1) % prepared_.sets;
  return set;
}

}  // namespace capsim::calibrate::harness
