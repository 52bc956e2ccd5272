#pragma once

#include <string>
#include <utility>
#include <vector>

namespace capsim::io {

// Output files of every command: checked before the work, written whole or not at all
// (docs/architecture.md, "Output files").

// A file named on the command line and what it is there, for messages: {"--report", "r.html"},
// {"the scenario", "s.json"}.
struct NamedPath {
  std::string role;
  std::string path;
};

// Throws InputError naming `output.path` (an empty one by its role) unless an output could be
// written there: a non-empty name of a file (its symbolic links followed) in a folder that
// exists and takes a new file (a probe file is created and removed), not longer than the system
// allows, not a read-only file, not a folder, socket or block device. Commands call it before
// their work, so a long run does not end in an error about its output.
void check_output_path(const NamedPath& output);

// Runs check_output_path on every output, and throws InputError naming the output when two of
// them name one file (`x`, `./x` and a link to x are one file) or one names a file of `inputs`.
// Devices and pipes (/dev/null, /dev/stdout, a FIFO) may be named more than once. Empty paths
// in `inputs` are skipped.
void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// Writes `text` to `path` whole or not at all; throws InputError naming the path when it cannot
// (write_files_atomically with one file).
void write_file_atomically(const std::string& path, const std::string& text);
// Writes several files so that either all are written or none is: each regular file goes to a
// temporary beside it (an unpredictable name, created exclusively, never through a link) that
// is renamed into place once every file was written; a symbolic link to a file keeps pointing
// at the replaced file. Devices, pipes and /dev/stdout are written directly, before the renames.
// Throws InputError naming the file, with the system's reason (e.g. no space left on device),
// and removes every temporary on failure.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace capsim::io
