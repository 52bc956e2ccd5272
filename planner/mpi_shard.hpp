#pragma once

#include "planner/confirm.hpp"

namespace capsim::planner {

// One MPI job (`mpirun -np N capsim plan ...`): MPI_Init on construction, MPI_Finalize on
// destruction, when a launcher started this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// PMIX_RANK in the environment); a plain run is one rank without MPI. Built only when CMake
// finds MPI (CAPSIM_WITH_MPI); otherwise a single rank that does nothing, and throws InputError
// when a launcher announces more than one rank. Every rank screens the same space
// (deterministic); confirmations are sharded.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  MpiSession(MpiSession&&) = delete;
  MpiSession& operator=(MpiSession&&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  // Returns true when this binary was built with MPI support.
  [[nodiscard]] static bool built_with_mpi();

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialized_ = false;
};

// Returns a ConfirmFn that runs scenario i on rank i % size with `local` and gives every rank
// the batch `local` gives for all scenarios in one process, field for field: outcomes (numbers
// bit for bit, error messages) are exchanged with MPI_Allgatherv; only scenario 0 (rank 0's
// first) is the availability probe, as in one process. When `local` throws on some rank, every
// rank throws (the lowest such rank's message). Progress is rank 0's share. With one rank it is
// `local` itself.
[[nodiscard]] ConfirmFn mpi_sharded(ConfirmFn local, const MpiSession& session);

}  // namespace capsim::planner
