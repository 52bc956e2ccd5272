#pragma once

#include <optional>
#include <string>

#include <sys/types.h>

namespace capsim::io::detail {

// What an output path leads to once its symbolic links are followed, and so how it is written:
// a file through a temporary and a rename, anything else directly. Plain value.
struct OutputTarget {
  enum class Kind {
    kNewFile,      // nothing there yet: created in the folder of `file`
    kRegularFile,  // an existing file: replaced through a temporary beside it
    kStream,       // a character device or FIFO (/dev/null, a named pipe): opened and written
    kDescriptor,   // /dev/stdout, /dev/stderr, /dev/fd/N: the process's open descriptor
  };
  Kind kind = Kind::kNewFile;
  std::string file;     // the name written: the path with its symbolic links followed
  int descriptor = -1;  // kDescriptor only
  mode_t mode = 0;      // kRegularFile: permission bits, kept by the replacement
  dev_t device = 0;     // kRegularFile and kStream: the file's identity
  ino_t inode = 0;
};

// Follows `path`'s symbolic links to what an output there writes. Throws InputError naming
// `path` for a folder, a socket or block device, a loop of links, or a name the system rejects.
// REQUIRES: `path` is not empty.
[[nodiscard]] OutputTarget resolve_output(const std::string& path);

// Returns a key equal for two paths exactly when they name one file (`x`, `./x`, a symbolic
// or hard link to x), or nullopt for streams and descriptors, which any number of outputs may
// share. Paths that name nothing yet compare by their folder's canonical name.
[[nodiscard]] std::optional<std::string> file_identity(const OutputTarget& target);
// The same key for an input file (symbolic links followed); nullopt for anything but a file.
[[nodiscard]] std::optional<std::string> file_identity(const std::string& path);

}  // namespace capsim::io::detail
