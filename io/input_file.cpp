#include "io/input_file.hpp"

#include <array>
#include <cerrno>
#include <string>

#include "io/input_error.hpp"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace capsim::io {
namespace {

// Closes a descriptor on every path out of read_input_file.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&&) = delete;
  FileDescriptor& operator=(FileDescriptor&&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

const char* kind_name(InputKind kind) {
  switch (kind) {
    case InputKind::kJson:
      return "a JSON input";
    case InputKind::kLog:
      return "a log or table";
    case InputKind::kJobTrace:
      return "a job trace";
  }
  return "an input";
}

InputError too_large(const std::string& path, InputKind kind) {
  return {path, "",
          "is larger than " + std::to_string(max_input_bytes(kind) >> 20) + " MiB, the most " +
              kind_name(kind) + " may hold (docs/scenario.md, \"Input files\")"};
}

}  // namespace

std::size_t max_input_bytes(InputKind kind) {
  switch (kind) {
    case InputKind::kJson:
      return kMaxJsonInputBytes;
    case InputKind::kLog:
      return kMaxLogInputBytes;
    case InputKind::kJobTrace:
      return kMaxJobTraceInputBytes;
  }
  return kMaxJsonInputBytes;
}

std::string read_input_file(const std::string& path, InputKind kind) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. The type is checked
  // on the open descriptor, so a file swapped after a stat cannot slip through.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat info {};
  if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0)
    throw InputError(path, "", "cannot open file");
  if (S_ISDIR(info.st_mode))
    throw InputError(path, "", "is a folder, not a file");
  if (!S_ISREG(info.st_mode)) {
    throw InputError(path, "",
                     "is not a regular file (a FIFO, device or socket); capsim reads its inputs "
                     "from files");
  }
  const std::size_t max_bytes = max_input_bytes(kind);
  if (info.st_size < 0 || static_cast<std::size_t>(info.st_size) > max_bytes)
    throw too_large(path, kind);
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(info.st_size));
  // Reads to the end, never more than one buffer beyond the limit: a file that grows while it
  // is read is held to the same limit.
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw InputError(path, "", "cannot read file");
    if (n == 0)
      break;
    bytes.append(buffer.data(), static_cast<std::size_t>(n));
    if (bytes.size() > max_bytes)
      throw too_large(path, kind);
  }
  return bytes;
}

}  // namespace capsim::io
