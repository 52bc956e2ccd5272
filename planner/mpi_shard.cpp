#include "planner/mpi_shard.hpp"

#include <algorithm>
#include <string>
#include <vector>

#ifdef CAPSIM_WITH_MPI
#include <mpi.h>
#endif

namespace capsim::planner {

#ifdef CAPSIM_WITH_MPI

MpiSession::MpiSession(int* argc, char*** argv) {
  int already = 0;
  MPI_Initialized(&already);
  if (already == 0) {
    MPI_Init(argc, argv);
    initialized_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (initialized_)
    MPI_Finalize();
}

bool MpiSession::built_with_mpi() {
  return true;
}

ConfirmFn mpi_sharded(ConfirmFn local, const MpiSession& session) {
  if (session.size() <= 1)
    return local;
  const int rank = session.rank();
  const int size = session.size();
  return [local = std::move(local), rank, size](const std::vector<Scenario>& scenarios,
                                                const ProgressFn& progress) {
    std::vector<Scenario> mine;
    for (size_t i = static_cast<size_t>(rank); i < scenarios.size();
         i += static_cast<size_t>(size)) {
      mine.push_back(scenarios[i]);
    }
    const ConfirmBatch part = local(mine, rank == 0 ? progress : ProgressFn{});
    // Fixed-size records summed over ranks: each scenario is filled by exactly one rank.
    constexpr size_t kFields = 7;  // ok, failed, time, tokens/s, mfu, peak, capacity
    std::vector<double> send(scenarios.size() * kFields, 0.0);
    for (size_t j = 0; j < part.outcomes.size(); ++j) {
      const size_t i = static_cast<size_t>(rank) + j * static_cast<size_t>(size);
      const ConfirmOutcome& o = part.outcomes[j];
      double* f = &send[i * kFields];
      f[0] = o.ok ? 1.0 : 0.0;
      f[1] = o.ok ? 0.0 : 1.0;
      f[2] = o.evaluation.iteration_time_s;
      f[3] = o.evaluation.tokens_per_s;
      f[4] = o.evaluation.mfu;
      f[5] = o.evaluation.peak_memory_bytes;
      f[6] = o.evaluation.capacity_bytes;
    }
    std::vector<double> all(send.size(), 0.0);
    MPI_Allreduce(send.data(), all.data(), static_cast<int>(send.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    int available = part.available ? 1 : 0;
    int all_available = 0;
    MPI_Allreduce(&available, &all_available, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ConfirmBatch batch;
    batch.available = all_available == 1;
    if (!batch.available) {
      batch.reason =
          part.available ? "the event engine is unavailable on another rank" : part.reason;
      return batch;
    }
    batch.outcomes.resize(scenarios.size());
    for (size_t i = 0; i < scenarios.size(); ++i) {
      const double* f = &all[i * kFields];
      ConfirmOutcome& o = batch.outcomes[i];
      o.ok = f[0] > 0.5;
      o.evaluation = {"event", f[2], f[3], f[4], f[5], f[6]};
      const int owner = static_cast<int>(i % static_cast<size_t>(size));
      if (!o.ok) {
        o.error = owner == rank ? part.outcomes[i / static_cast<size_t>(size)].error
                                : "failed on rank " + std::to_string(owner);
      }
    }
    return batch;
  };
}

#else

MpiSession::MpiSession(int* /*argc*/, char*** /*argv*/) {}
MpiSession::~MpiSession() = default;
bool MpiSession::built_with_mpi() {
  return false;
}
ConfirmFn mpi_sharded(ConfirmFn local, const MpiSession& /*session*/) {
  return local;
}

#endif

}  // namespace capsim::planner
