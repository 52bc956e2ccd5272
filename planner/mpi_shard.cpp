#include "planner/mpi_shard.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/report_bytes.hpp"

#include "io/input_error.hpp"

#ifdef CAPSIM_WITH_MPI
#include <mpi.h>
#endif

namespace capsim::planner {
namespace {

// The world size a launcher announced in the environment (Open MPI's mpirun; MPICH/Intel mpiexec
// and Slurm's PMI), 1 for a PMIx launch (size not in the environment), or 0 when this process
// was not started as an MPI rank.
int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0')
      return std::max(1, std::atoi(v));
  }
  return std::getenv("PMIX_RANK") != nullptr ? 1 : 0;
}

}  // namespace

#ifdef CAPSIM_WITH_MPI

MpiSession::MpiSession(int* argc, char*** argv) {
  if (launcher_world_size() == 0)
    return;  // not under mpirun: one rank without MPI_Init (a singleton init costs ~0.35 s)
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

namespace {

// Returns every rank's `mine`, in rank order, on every rank.
std::vector<std::string> allgather(const std::string& mine, int size) {
  if (mine.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("MPI: confirmation record over 2 GiB");
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size), 0);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<size_t>(size), 0);
  long long total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
    if (total > std::numeric_limits<int>::max())
      throw std::runtime_error("MPI: confirmation records over 2 GiB");
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                 MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> parts;
  for (size_t r = 0; r < lengths.size(); ++r) {
    parts.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
  }
  return parts;
}

// Runs this rank's share. Only scenario 0 (rank 0's first) is the probe, as with one process: on
// another rank, exit 2 of the first scenario of a call is a failed outcome like any later one
// (forked_confirmer's "exit 2: <message>"), and the rest of the share runs.
ConfirmBatch run_share(const ConfirmFn& local, const std::vector<Scenario>& mine, int rank,
                       const ProgressFn& progress) {
  if (rank == 0)
    return local(mine, progress);
  ConfirmBatch share;
  size_t start = 0;
  while (start < mine.size()) {
    const std::vector<Scenario> rest(mine.begin() + static_cast<std::ptrdiff_t>(start), mine.end());
    ConfirmBatch part = local(rest, progress);
    if (part.available) {
      for (auto& o : part.outcomes)
        share.outcomes.push_back(std::move(o));
      break;
    }
    ConfirmOutcome failed;
    failed.error = "exit 2: " + part.reason;
    share.outcomes.push_back(std::move(failed));
    ++start;
  }
  return share;
}

// Record (sim/report_bytes.hpp; every rank runs the same binary): status (0 ran, 1 threw) and
// the message, or available, reason and the outcomes, each evaluation as encode_evaluation
// writes it.
std::string encode(const ConfirmBatch* share, const std::string& thrown) {
  sim::ReportWriter out;
  out.put_int(share == nullptr ? 1 : 0);
  if (share == nullptr) {
    out.put_string(thrown);
    return out.bytes();
  }
  out.put_int(share->available ? 1 : 0);
  out.put_string(share->reason);
  out.put_int(static_cast<std::int64_t>(share->outcomes.size()));
  for (const ConfirmOutcome& o : share->outcomes) {
    out.put_int(o.ok ? 1 : 0);
    out.put_string(encode_evaluation(o.evaluation));
    out.put_string(o.error);
  }
  return out.bytes();
}

// Returns the share `record` holds; throws the rank's error when it threw.
ConfirmBatch decode(const std::string& record, size_t rank) {
  sim::ReportReader in(record);
  if (in.get_int() != 0) {
    const std::string what = in.get_string();
    throw std::runtime_error(rank == 0 ? what : "rank " + std::to_string(rank) + ": " + what);
  }
  ConfirmBatch share;
  share.available = in.get_int() != 0;
  share.reason = in.get_string();
  const std::int64_t count = in.get_int();
  for (std::int64_t i = 0; i < count; ++i) {
    ConfirmOutcome o;
    o.ok = in.get_int() != 0;
    o.evaluation = decode_evaluation(in.get_string());
    o.error = in.get_string();
    share.outcomes.push_back(std::move(o));
  }
  in.finish();
  return share;
}

}  // namespace

ConfirmFn mpi_sharded(ConfirmFn local, const MpiSession& session) {
  if (session.size() <= 1)
    return local;
  const int rank = session.rank();
  const int size = session.size();
  return [local = std::move(local), rank, size](const std::vector<Scenario>& scenarios,
                                                const ProgressFn& progress) {
    const auto ranks = static_cast<size_t>(size);
    std::vector<Scenario> mine;
    for (auto i = static_cast<size_t>(rank); i < scenarios.size(); i += ranks)
      mine.push_back(scenarios[i]);
    // A rank that throws still takes part in the exchange, so that every rank throws the same
    // error instead of the others waiting forever in the collective.
    std::string record;
    try {
      const ConfirmBatch share = run_share(local, mine, rank, rank == 0 ? progress : ProgressFn{});
      if (share.available && share.outcomes.size() != mine.size())
        throw std::runtime_error("confirmer returned a wrong number of outcomes");
      record = encode(&share, "");
    } catch (const std::exception& e) {
      record = encode(nullptr, e.what());
    }
    const std::vector<std::string> records = allgather(record, size);

    std::vector<ConfirmBatch> shares;
    for (size_t r = 0; r < ranks; ++r)
      shares.push_back(decode(records[r], r));
    // Rank 0 ran the probe (scenario 0): its verdict on the engine is the batch's.
    ConfirmBatch batch;
    if (!shares[0].available) {
      batch.available = false;
      batch.reason = shares[0].reason;
      return batch;
    }
    batch.outcomes.resize(scenarios.size());
    for (size_t i = 0; i < scenarios.size(); ++i) {
      ConfirmBatch& share = shares[i % ranks];
      if (i / ranks >= share.outcomes.size())
        throw std::runtime_error("rank " + std::to_string(i % ranks) + " is missing outcomes");
      batch.outcomes[i] = std::move(share.outcomes[i / ranks]);
    }
    return batch;
  };
}

#else

MpiSession::MpiSession(int* /*argc*/, char*** /*argv*/) {
  // N independent copies would each run everything and write the same files.
  if (launcher_world_size() > 1) {
    throw io::InputError(
        "", "", "this capsim was built without MPI (libopenmpi-dev); run it without mpirun");
  }
}
MpiSession::~MpiSession() = default;
bool MpiSession::built_with_mpi() {
  return false;
}
ConfirmFn mpi_sharded(ConfirmFn local, const MpiSession& /*session*/) {
  return local;
}

#endif

}  // namespace capsim::planner
