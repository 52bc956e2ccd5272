// The CUDA/NCCL/cuBLASLt layer of capsim-calibrate: the NCCL collectives here, the cuBLASLt
// GEMMs in cublaslt_gemm.cpp. Kept thin: every decision (sizes, statistics, output) lives in
// harness.cpp, which the tests exercise with a fake backend.
// NOT RUN ON A GPU YET (docs/calibration.md, "What has not run on a real GPU").
#include "calibrate/harness/cuda_backend.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "calibrate/harness/cublaslt_gemm.hpp"
#include "calibrate/harness/device_check.hpp"

#include <unistd.h>

#ifdef CAPSIM_HARNESS_WITH_MPI
#include <mpi.h>
#endif

namespace capsim::calibrate::harness {

std::string device_error_text(const char* file, int line, const char* what,
                              const std::string& detail) {
  std::array<char, 256> host{};
  const std::string host_name =
      gethostname(host.data(), host.size() - 1) == 0 ? std::string(host.data()) : "?";
  return host_name + " " + file + ":" + std::to_string(line) + ": " + what + ": " + detail;
}

namespace {

constexpr size_t kFloat = 4;

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

#ifdef CAPSIM_HARNESS_WITH_MPI
void mpi_check(int rc, const char* what) {
  if (rc != MPI_SUCCESS)
    throw DeviceError(std::string("MPI call failed: ") + what);
}
#endif

// Returns how many CUDA devices this process sees; throws DeviceError when there are none.
int visible_device_count() {
  int visible = 0;
  CAPSIM_CUDA_CHECK(cudaGetDeviceCount(&visible));
  if (visible < 1)
    throw DeviceError("no CUDA device visible");
  return visible;
}

// One GPU's part of a collective inside an NCCL group: its buffers, its rank of `n`, its
// communicator and stream. Buffer offsets and peers follow nccl-tests.
struct RankPart {
  char* send = nullptr;
  char* recv = nullptr;
  int rank = 0;
  int n = 1;
  ncclComm_t comm = nullptr;
  cudaStream_t s = nullptr;

  // Enqueues this rank's part of one op of nccl-tests size `bytes`.
  void enqueue(CollectiveKind kind, size_t bytes, bool in_place) const {
    switch (kind) {
      case CollectiveKind::kAllReduce:
        all_reduce(bytes, in_place);
        break;
      case CollectiveKind::kAllGather:
        all_gather(bytes, in_place);
        break;
      case CollectiveKind::kReduceScatter:
        reduce_scatter(bytes, in_place);
        break;
      case CollectiveKind::kAllToAll:
        all_to_all(bytes, in_place);
        break;
      case CollectiveKind::kBroadcast:
        broadcast(bytes, in_place);
        break;
      case CollectiveKind::kSendRecv:
        send_recv(bytes, in_place);
        break;
    }
  }

  void all_reduce(size_t bytes, bool in_place) const {
    const size_t count = bytes / kFloat;
    CAPSIM_NCCL_CHECK(
        ncclAllReduce(in_place ? recv : send, recv, count, ncclFloat, ncclSum, comm, s));
  }

  // nccl-tests: size is the gathered buffer; in place, the send chunk sits at rank's slot.
  void all_gather(size_t bytes, bool in_place) const {
    const size_t count = bytes / kFloat / static_cast<size_t>(n);
    char* in = in_place ? recv + static_cast<size_t>(rank) * count * kFloat : send;
    CAPSIM_NCCL_CHECK(ncclAllGather(in, recv, count, ncclFloat, comm, s));
  }

  // In place inside recv (nccl.h: recvbuff = sendbuff + rank * recvcount), so that the send
  // buffers keep the 1.0s every check reads.
  void reduce_scatter(size_t bytes, bool in_place) const {
    const size_t count = bytes / kFloat / static_cast<size_t>(n);
    char* in = in_place ? recv : send;
    char* out = in_place ? recv + static_cast<size_t>(rank) * count * kFloat : recv;
    CAPSIM_NCCL_CHECK(ncclReduceScatter(in, out, count, ncclFloat, ncclSum, comm, s));
  }

  void all_to_all(size_t bytes, bool in_place) const {
    const size_t count = bytes / kFloat / static_cast<size_t>(n);
    char* from = in_place ? recv : send;
    for (int peer = 0; peer < n; ++peer) {
      const size_t off = static_cast<size_t>(peer) * count * kFloat;
      CAPSIM_NCCL_CHECK(ncclSend(from + off, count, ncclFloat, peer, comm, s));
      CAPSIM_NCCL_CHECK(ncclRecv(recv + off, count, ncclFloat, peer, comm, s));
    }
  }

  void broadcast(size_t bytes, bool in_place) const {
    const size_t count = bytes / kFloat;
    CAPSIM_NCCL_CHECK(ncclBroadcast(in_place ? recv : send, recv, count, ncclFloat, 0, comm, s));
  }

  // nccl-tests sendrecv: each rank sends to rank+1 and receives from rank-1.
  void send_recv(size_t bytes, bool in_place) const {
    const size_t count = bytes / kFloat;
    CAPSIM_NCCL_CHECK(ncclSend(in_place ? recv : send, count, ncclFloat, (rank + 1) % n, comm, s));
    CAPSIM_NCCL_CHECK(ncclRecv(recv, count, ncclFloat, (rank - 1 + n) % n, comm, s));
  }
};

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(const CudaBackendOptions& options) : options_(options) {
    const int visible = visible_device_count();
#ifdef CAPSIM_HARNESS_WITH_MPI
    if (options.use_mpi) {
      join_mpi_job(visible);
      init_nccl_over_mpi();
    }
#endif
    if (!options.use_mpi)
      init_nccl_on_local_gpus(visible);
    create_streams();
    gemm_.emplace(devices_[0]);
  }

  ~CudaBackend() override {
    // Destructors must not throw: errors while freeing are ignored. The communicators go
    // first: after an NCCL asynchronous error, or while an exception unwinds (a hung peer,
    // MPI_Abort to come), ncclCommAbort (nccl.h: "aborts any operations that might still be
    // running on the device") must run before cudaFree, which waits for the device, and
    // instead of ncclCommDestroy, which finalizes (flushes) the communicator first.
    const bool abort_comms = nccl_failed_ || std::uncaught_exceptions() > 0;
    for (auto& c : comms_) {
      if (abort_comms)
        ncclCommAbort(c);
      else
        ncclCommDestroy(c);
    }
    for (size_t i = 0; i < devices_.size(); ++i) {
      cudaSetDevice(devices_[i]);
      if (i < send_.size())
        cudaFree(send_[i]);
      if (i < recv_.size())
        cudaFree(recv_[i]);
      cudaStreamDestroy(streams_[i]);
    }
    if (overlap_stream_ != nullptr) {
      cudaSetDevice(devices_[0]);
      cudaStreamDestroy(overlap_stream_);
    }
    // gemm_ frees its cuBLASLt state after this body, as a member.
  }

  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  CudaBackend(CudaBackend&&) = delete;
  CudaBackend& operator=(CudaBackend&&) = delete;

  MachineInfo machine() override {
    MachineInfo m;
    std::array<char, 256> host{};
    if (gethostname(host.data(), host.size() - 1) == 0)
      m.hostname = host.data();
    cudaDeviceProp prop{};
    CAPSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, devices_[0]));
    m.gpu = prop.name;
    m.gpus_per_node = ranks_per_node_;
    m.nodes = nodes_;
    int version = 0;
    CAPSIM_NCCL_CHECK(ncclGetVersion(&version));
    m.nccl_version = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
                     "." + std::to_string(version % 100);
    int runtime = 0;
    int driver = 0;
    CAPSIM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    CAPSIM_CUDA_CHECK(cudaDriverGetVersion(&driver));
    m.cuda_version = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
    m.driver_version = std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
    std::error_code ec;
    int nics = 0;
    for (const auto& e : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
      (void)e;
      ++nics;
    }
    m.nics_per_node = nics;
    for (const char* path :
         {"/opt/amazon/ofi-nccl/lib/libnccl-net.so", "/opt/amazon/ofi-nccl/lib64/libnccl-net.so",
          "/opt/aws-ofi-nccl/lib/libnccl-net.so"}) {
      if (std::filesystem::exists(path, ec))
        m.efa_plugin = std::string("aws-ofi-nccl at ") + path;
    }
    for (const char* name :
         {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NET_PLUGIN", "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE",
          "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_BUFFSIZE", "FI_PROVIDER",
          "FI_EFA_USE_DEVICE_RDMA", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_MAX_CONNECTIONS"}) {
      m.env[name] = env_or_empty(name);
    }
    m.topology = std::to_string(ranks_per_node_) + " x " + prop.name + " (sm" +
                 std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                 std::to_string(prop.multiProcessorCount) + " SMs) per node, " +
                 std::to_string(nodes_) + " node(s), " + std::to_string(nics) +
                 " RDMA device(s) per node";
    m.date = options_.date;
    return m;
  }

  int ranks() override {
    return ranks_;
  }
  int nodes() override {
    return nodes_;
  }

  CollectiveTiming time_collective(CollectiveKind kind, double bytes, bool in_place, int warmup,
                                   int iters) override {
    const auto size = static_cast<size_t>(bytes);
    ensure_collective_buffers(size);
    CollectiveTiming out;
    if (!in_place)
      out.wrong = check_collective(kind, size);
    for (int i = 0; i < warmup; ++i)
      launch(kind, size, in_place);
    synchronize();
    barrier();
    // nccl-tests (src/common.cu): host timer around iters back-to-back launches, then the
    // per-op mean; averaged over ranks (-a 1).
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      launch(kind, size, in_place);
    synchronize();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.time_s = average_over_ranks(elapsed / iters);
    return out;
  }

  GemmTiming time_gemm(const std::string& dtype, const GemmShape& shape, int warmup,
                       int repeats) override {
    gemm_->prepare(dtype, shape);
    GemmTiming t;
    t.times_s = gemm_->time(streams_[0], warmup, repeats);
    gemm_->check(streams_[0], t.wrong, t.checked);
    return t;
  }

  int sm_count() override {
    cudaDeviceProp prop{};
    CAPSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, devices_[0]));
    return prop.multiProcessorCount;
  }

  OverlapTiming time_gemm_beside_collective(const std::string& dtype, const GemmShape& shape,
                                            CollectiveKind kind, double collective_bytes,
                                            int collective_ops, int warmup, int repeats) override {
    gemm_->prepare(dtype, shape);
    const auto size = static_cast<size_t>(collective_bytes);
    ensure_collective_buffers(size);
    ensure_overlap_stream();
    cudaEvent_t first_done = nullptr;
    cudaEvent_t loop_done = nullptr;
    cudaEvent_t gemms_done = nullptr;
    CAPSIM_CUDA_CHECK(cudaEventCreate(&first_done));
    CAPSIM_CUDA_CHECK(cudaEventCreate(&loop_done));
    CAPSIM_CUDA_CHECK(cudaEventCreate(&gemms_done));
    // GPU 0's GEMM stream waits for the loop's first op, so every GEMM starts while the loop
    // is under way.
    enqueue_collective_loop(kind, size, collective_ops, first_done, loop_done);
    CAPSIM_CUDA_CHECK(cudaStreamWaitEvent(overlap_stream_, first_done, 0));
    OverlapTiming t;
    t.times_s = gemm_->time(overlap_stream_, warmup, repeats);
    CAPSIM_CUDA_CHECK(cudaEventRecord(gemms_done, overlap_stream_));
    t.collective_outlasted = loop_outlasted_gemms(gemms_done, loop_done);
    cudaEventDestroy(first_done);
    cudaEventDestroy(loop_done);
    cudaEventDestroy(gemms_done);
    gemm_->check(overlap_stream_, t.wrong, t.checked);
    return t;
  }

 private:
#ifdef CAPSIM_HARNESS_WITH_MPI
  // One process per GPU: the world and node-local MPI ranks give the job's shape and pick
  // this process's device.
  void join_mpi_job(int visible) {
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_), "MPI_Comm_rank");
    mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &world_size_), "MPI_Comm_size");
    MPI_Comm local = MPI_COMM_NULL;
    mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank_, MPI_INFO_NULL,
                                  &local),
              "MPI_Comm_split_type");
    int local_rank = 0;
    int local_size = 1;
    mpi_check(MPI_Comm_rank(local, &local_rank), "MPI_Comm_rank");
    mpi_check(MPI_Comm_size(local, &local_size), "MPI_Comm_size");
    MPI_Comm_free(&local);
    nodes_ = std::max(1, world_size_ / local_size);
    ranks_per_node_ = local_size;
    devices_ = {local_rank % visible};
  }

  // One NCCL rank per process: rank 0's unique id reaches every process over MPI.
  void init_nccl_over_mpi() {
    ncclUniqueId id;
    if (world_rank_ == 0)
      CAPSIM_NCCL_CHECK(ncclGetUniqueId(&id));
    mpi_check(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    comms_.resize(1);
    CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[0]));
    CAPSIM_NCCL_CHECK(ncclCommInitRank(&comms_[0], world_size_, id, world_rank_));
    ranks_ = world_size_;
  }
#endif

  // One process drives `options_.gpus` local GPUs (all visible when 0), one communicator each.
  void init_nccl_on_local_gpus(int visible) {
    const int n = options_.gpus > 0 ? std::min(options_.gpus, visible) : visible;
    for (int d = 0; d < n; ++d)
      devices_.push_back(d);
    comms_.resize(devices_.size());
    CAPSIM_NCCL_CHECK(
        ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data()));
    ranks_ = static_cast<int>(devices_.size());
    ranks_per_node_ = ranks_;
  }

  void create_streams() {
    streams_.resize(devices_.size());
    for (size_t i = 0; i < devices_.size(); ++i) {
      CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[i]));
      CAPSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking));
    }
  }

  // GPU 0's GEMM stream beside the collective streams, created on first use.
  void ensure_overlap_stream() {
    CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[0]));
    if (overlap_stream_ == nullptr)
      CAPSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&overlap_stream_, cudaStreamNonBlocking));
  }

  // `collective_ops` ops back to back on every GPU's collective stream; on GPU 0's,
  // `first_done` marks the end of the first and `loop_done` the end of the last.
  void enqueue_collective_loop(CollectiveKind kind, size_t size, int collective_ops,
                               cudaEvent_t first_done, cudaEvent_t loop_done) {
    launch(kind, size, false);
    CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[0]));
    CAPSIM_CUDA_CHECK(cudaEventRecord(first_done, streams_[0]));
    for (int i = 1; i < collective_ops; ++i)
      launch(kind, size, false);
    CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[0]));
    CAPSIM_CUDA_CHECK(cudaEventRecord(loop_done, streams_[0]));
  }

  // Waits for every stream; returns true when the collective loop ended after the last GEMM.
  bool loop_outlasted_gemms(cudaEvent_t gemms_done, cudaEvent_t loop_done) {
    synchronize();
    CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[0]));
    CAPSIM_CUDA_CHECK(cudaStreamSynchronize(overlap_stream_));
    float ms = 0.0f;  // from the last GEMM's end to the loop's end
    CAPSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, gemms_done, loop_done));
    return ms > 0.0f;
  }

  void ensure_collective_buffers(size_t bytes) {
    if (bytes <= buffer_bytes_)
      return;
    free_collective_buffers();
    send_.assign(devices_.size(), nullptr);
    recv_.assign(devices_.size(), nullptr);
    // Round up to 16 MiB so a doubling sweep reallocates rarely.
    buffer_bytes_ = (bytes + (16u << 20) - 1) / (16u << 20) * (16u << 20);
    allocate_collective_buffers();
  }

  void free_collective_buffers() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[i]));
      if (i < send_.size()) {
        CAPSIM_CUDA_CHECK(cudaFree(send_[i]));
        CAPSIM_CUDA_CHECK(cudaFree(recv_[i]));
      }
    }
  }

  // buffer_bytes_ of send (filled with 1.0f) and receive buffer on every GPU.
  void allocate_collective_buffers() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[i]));
      CAPSIM_CUDA_CHECK(cudaMalloc(&send_[i], buffer_bytes_));
      CAPSIM_CUDA_CHECK(cudaMalloc(&recv_[i], buffer_bytes_));
      fill_floats(send_[i], buffer_bytes_ / kFloat, 1.0f, streams_[i]);
    }
  }

  static void fill_floats(void* dst, size_t count, float value, cudaStream_t stream) {
    const std::vector<float> chunk(std::min<size_t>(count, 4u << 20), value);
    for (size_t done = 0; done < count; done += chunk.size()) {
      const size_t n = std::min(chunk.size(), count - done);
      CAPSIM_CUDA_CHECK(cudaMemcpyAsync(static_cast<float*>(dst) + done, chunk.data(), n * kFloat,
                                        cudaMemcpyHostToDevice, stream));
      CAPSIM_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }

  [[nodiscard]] int global_rank(size_t local) const {
    return options_.use_mpi ? world_rank_ : static_cast<int>(local);
  }

  // One op on every local GPU, in one NCCL group (nccl-tests' -g N single-process mode).
  void launch(CollectiveKind kind, size_t bytes, bool in_place) {
    CAPSIM_NCCL_CHECK(ncclGroupStart());
    for (size_t i = 0; i < devices_.size(); ++i)
      rank_part(i).enqueue(kind, bytes, in_place);
    CAPSIM_NCCL_CHECK(ncclGroupEnd());
  }

  [[nodiscard]] RankPart rank_part(size_t i) const {
    return {static_cast<char*>(send_[i]),
            static_cast<char*>(recv_[i]),
            global_rank(i),
            ranks_,
            comms_[i],
            streams_[i]};
  }

  // Waits for every collective stream, polling NCCL's asynchronous errors meanwhile (as
  // nccl-tests and NCCL's user guide do): an op whose peer or network failed never completes,
  // so cudaStreamSynchronize would wait forever where ncclCommGetAsyncError (nccl.h) reports it.
  // All streams are polled in turn: one GPU of a clique may wait on another that failed.
  void synchronize() {
    std::vector<bool> done(devices_.size(), false);
    for (size_t left = devices_.size(); left > 0;) {
      for (size_t i = 0; i < devices_.size(); ++i) {
        if (done[i])
          continue;
        const cudaError_t query = cudaStreamQuery(streams_[i]);
        if (query == cudaSuccess) {
          done[i] = true;
          --left;
          continue;
        }
        if (query != cudaErrorNotReady)
          CAPSIM_CUDA_CHECK(query);
        ncclResult_t async = ncclSuccess;
        CAPSIM_NCCL_CHECK(ncclCommGetAsyncError(comms_[i], &async));
        if (async != ncclSuccess && async != ncclInProgress) {
          nccl_failed_ = true;  // the destructor aborts the communicators
          throw DeviceError(device_error_text(
              __FILE__, __LINE__, "ncclCommGetAsyncError",
              std::string(ncclGetErrorString(async)) + " (" + ncclGetLastError(comms_[i]) + ")"));
        }
      }
      if (left > 0)
        std::this_thread::yield();
    }
  }

  void barrier() {
#ifdef CAPSIM_HARNESS_WITH_MPI
    if (options_.use_mpi)
      mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
#endif
  }

  double average_over_ranks(double value) {
#ifdef CAPSIM_HARNESS_WITH_MPI
    if (options_.use_mpi) {
      double sum = 0.0;
      mpi_check(MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce");
      return sum / world_size_;
    }
#endif
    return value;
  }

  // One untimed out-of-place op on send buffers of 1.0f (no op writes them) into cleared
  // receive buffers, then sampled output elements: sums equal the rank count (all-reduce,
  // reduce-scatter), copies equal 1; an op that wrote nothing leaves zeros and fails.
  long long check_collective(CollectiveKind kind, size_t bytes) {
    clear_receive_buffers(bytes);
    launch(kind, bytes, false);
    synchronize();
    const bool sums = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter;
    const float expected = sums ? static_cast<float>(ranks_) : 1.0f;
    size_t out_elems = bytes / kFloat;
    if (kind == CollectiveKind::kReduceScatter)
      out_elems /= static_cast<size_t>(ranks_);
    long long wrong = 0;
    for (size_t i = 0; i < devices_.size() && out_elems > 0; ++i)
      wrong += wrong_samples_on(i, out_elems, expected);
    return sum_over_ranks(wrong);
  }

  void clear_receive_buffers(size_t bytes) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[i]));
      CAPSIM_CUDA_CHECK(cudaMemsetAsync(recv_[i], 0, bytes, streams_[i]));
    }
  }

  // Returns how many of 16 sampled elements of GPU i's first `out_elems` received floats
  // differ from `expected`.
  long long wrong_samples_on(size_t i, size_t out_elems, float expected) {
    CAPSIM_CUDA_CHECK(cudaSetDevice(devices_[i]));
    long long wrong = 0;
    for (int s = 0; s < 16; ++s) {
      const size_t idx = (static_cast<size_t>(s) * 2654435761u) % out_elems;
      float v = 0.0f;
      CAPSIM_CUDA_CHECK(
          cudaMemcpy(&v, static_cast<float*>(recv_[i]) + idx, kFloat, cudaMemcpyDeviceToHost));
      if (v != expected)
        ++wrong;
    }
    return wrong;
  }

  // Under MPI every rank must reach the same verdict: a rank that stopped alone would leave
  // the others waiting in their next NCCL call.
  long long sum_over_ranks(long long value) {
#ifdef CAPSIM_HARNESS_WITH_MPI
    if (options_.use_mpi) {
      long long sum = 0;
      mpi_check(MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce");
      return sum;
    }
#endif
    return value;
  }

  CudaBackendOptions options_;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<void*> send_;
  std::vector<void*> recv_;
  size_t buffer_bytes_ = 0;
  int ranks_ = 1;
  int ranks_per_node_ = 1;
  int nodes_ = 1;
  int world_rank_ = 0;
  int world_size_ = 1;
  std::optional<CublasLtGemm> gemm_;       // on GPU 0, made once the devices are known
  cudaStream_t overlap_stream_ = nullptr;  // GPU 0's GEMM stream beside the collectives
  bool nccl_failed_ = false;               // an NCCL asynchronous error was seen
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

bool cuda_device_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

int cuda_compute_capability() {
  cudaDeviceProp prop{};
  CAPSIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop.major * 10 + prop.minor;
}

bool built_with_mpi() {
#ifdef CAPSIM_HARNESS_WITH_MPI
  return true;
#else
  return false;
#endif
}

void mpi_init(int* argc, char*** argv) {
#ifdef CAPSIM_HARNESS_WITH_MPI
  MPI_Init(argc, argv);
#else
  (void)argc;
  (void)argv;
#endif
}

void mpi_finalize() {
#ifdef CAPSIM_HARNESS_WITH_MPI
  MPI_Finalize();
#endif
}

void mpi_abort(int code) {
#ifdef CAPSIM_HARNESS_WITH_MPI
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1)
    MPI_Abort(MPI_COMM_WORLD, code);
#else
  (void)code;
#endif
}

int mpi_rank() {
#ifdef CAPSIM_HARNESS_WITH_MPI
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
#else
  return 0;
#endif
}

}  // namespace capsim::calibrate::harness
