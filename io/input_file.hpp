#pragma once

#include <cstddef>
#include <string>

namespace capsim::io {

// What an input file holds; each kind has its own size limit.
enum class InputKind {
  kJson,      // scenarios, plans, what-ifs, profiles, validation files, measurements
  kLog,       // nccl-tests logs and GEMM tables
  kJobTrace,  // job-trace CSVs
};

// Largest input files capsim reads (docs/scenario.md, "Input files"). JSON documents, logs and
// GEMM tables are kilobytes to a few megabytes; a job trace of 10^6 jobs is 30-200 MB as CSV.
inline constexpr std::size_t kMaxJsonInputBytes = std::size_t{64} << 20;       // 64 MiB
inline constexpr std::size_t kMaxLogInputBytes = std::size_t{64} << 20;        // 64 MiB
inline constexpr std::size_t kMaxJobTraceInputBytes = std::size_t{512} << 20;  // 512 MiB

// Returns the largest file of `kind` capsim reads, in bytes.
[[nodiscard]] std::size_t max_input_bytes(InputKind kind);

// Returns the bytes of the input file at `path`: the one way capsim reads an input file. Throws
// InputError naming the file when it is missing or unreadable, is not a regular file (a folder,
// FIFO, device or socket: reading one can block forever or never end), or holds more than
// max_input_bytes(kind) bytes.
[[nodiscard]] std::string read_input_file(const std::string& path, InputKind kind);

}  // namespace capsim::io
