#pragma once

#include "planner/confirm.hpp"

namespace capsim::planner {

// One MPI job (`mpirun -np N capsim plan ...`): MPI_Init on construction, MPI_Finalize on
// destruction. Built only when CMake finds MPI (CAPSIM_WITH_MPI); otherwise a single rank that
// does nothing. Every rank screens the same space (deterministic); confirmations are sharded.
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
// all outcomes (failures on other ranks keep only "failed on rank R"). With one rank it is
// `local` itself.
[[nodiscard]] ConfirmFn mpi_sharded(ConfirmFn local, const MpiSession& session);

}  // namespace capsim::planner
