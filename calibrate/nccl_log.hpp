#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/hardware_profile.hpp"

namespace capsim::calibrate {

// One message size of a collective benchmark. Sizes follow nccl-tests' "size" column (bytes,
// docs/design/nccl-tests-format.md §3); times are the mean time of one operation.
struct CollectiveSample {
  double bytes = 0.0;
  double time_s = 0.0;           // out-of-place
  double time_in_place_s = 0.0;  // 0 when the log has no in-place column
  int line = 0;                  // 1-based line in the source file (0 for JSON input)
  // Returns the time the fitter uses: the faster of out-of-place and in-place
  // (docs/design/nccl-tests-format.md §3).
  [[nodiscard]] double best_time_s() const;
};

// One sweep of one collective over one communicator, from a nccl-tests log or capsim
// measurement JSON. Plain value; the shape fields say how they were obtained.
struct CollectiveCurve {
  std::string source;  // file the curve came from
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int ranks = 0;
  int nodes = 1;
  int ranks_per_node = 0;
  bool ranks_inferred = false;     // from busbw/algbw, not from Rank lines
  bool nodes_inferred = false;     // assumed 8 GPUs per node (Rank lines elided)
  std::string gpu;                 // device name as printed ("NVIDIA A100-SXM4-80GB"), may be empty
  std::string nccl_version;        // "2.23.4" when the log says, else empty
  std::vector<std::string> notes;  // "# SOURCE:", "# HARDWARE:" lines of the shipped logs
  std::vector<CollectiveSample> samples;  // increasing size; size-0 rows dropped
};

// Reads a nccl-tests text log (any collective, any nccl-tests vintage, launcher prefixes and
// interleaved NCCL INFO/MPI lines tolerated). Throws InputError "file:line: message" on a
// malformed data row, and "file: message" when the log has no rows or an unknown collective.
[[nodiscard]] CollectiveCurve read_nccl_log(const std::string& path);

// Parses log text attributed to `name` (file name used for errors and collective detection).
[[nodiscard]] CollectiveCurve parse_nccl_log(std::string_view text, const std::string& name);

// Returns the line with a launcher prefix removed: srun --label "0: ", Open MPI --tag-output
// "[1,0]<stdout>:" (docs/design/nccl-tests-format.md §1).
[[nodiscard]] std::string_view strip_launcher_prefix(std::string_view line);

}  // namespace capsim::calibrate
