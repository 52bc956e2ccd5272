#pragma once

namespace capsim::cli {

// Returns the rank an MPI launcher gave this process, read from the environment it sets (Open
// MPI's OMPI_COMM_WORLD_RANK; PMI_RANK of MPICH, Intel MPI and Slurm; PMIX_RANK), or 0 when no
// launcher started it. Commands that do not shard their work over ranks run on rank 0 only.
[[nodiscard]] int launcher_rank();

}  // namespace capsim::cli
