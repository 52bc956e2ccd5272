#include "io/output_files.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "io/detail/output_target.hpp"
#include "io/input_error.hpp"
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

namespace capsim::io {
namespace {

namespace fs = std::filesystem;
using detail::OutputTarget;

// A temporary is "<name>.capsim-<12 random letters and digits>.tmp" beside its file.
constexpr std::string_view kTemporaryMarker = ".capsim-";
constexpr std::string_view kTemporaryExtension = ".tmp";
constexpr size_t kRandomChars = 12;
constexpr size_t kTemporarySuffix =
    kTemporaryMarker.size() + kRandomChars + kTemporaryExtension.size();

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw InputError(path, "", "cannot write file: " + why);
}

std::string folder_of(const std::string& file) {
  const fs::path path(file);
  return path.has_parent_path() ? path.parent_path().string() : ".";
}

// The longest file name the folder's file system takes (NAME_MAX when it does not say).
size_t longest_name(const std::string& folder) {
  const long longest = pathconf(folder.c_str(), _PC_NAME_MAX);
  return longest > 0 ? static_cast<size_t>(longest) : NAME_MAX;
}

// Letters and digits from the kernel's random source, so that no other process can predict a
// temporary's name and plant a file or link there first.
std::string random_chars() {
  constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::array<unsigned char, kRandomChars> bytes{};
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      // No getrandom (a kernel before 3.17): the clock still varies the name; the exclusive
      // open below is what keeps it safe.
      const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
      for (size_t i = got; i < bytes.size(); ++i)
        bytes[i] = static_cast<unsigned char>(static_cast<unsigned long long>(ticks) >> (5 * i));
      break;
    }
  }
  std::string chars;
  for (const unsigned char byte : bytes)
    chars += kAlphabet[byte % kAlphabet.size()];
  return chars;
}

// The file's name cut so that the temporary's name fits the folder's limit (at a UTF-8
// character boundary), then the marker, random characters and extension.
std::string temporary_path(const std::string& file) {
  const std::string folder = folder_of(file);
  const std::string name = fs::path(file).filename().string();
  const size_t limit = longest_name(folder);
  size_t keep = std::min(name.size(), limit > kTemporarySuffix ? limit - kTemporarySuffix : 0);
  while (keep > 0 && keep < name.size() && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80)
    --keep;
  const std::string temporary = name.substr(0, keep) + std::string(kTemporaryMarker) +
                                random_chars() + std::string(kTemporaryExtension);
  return fs::path(file).has_parent_path() ? (fs::path(folder) / temporary).string() : temporary;
}

// Creates a temporary beside `file`: O_EXCL makes the name this process's alone and, with
// O_NOFOLLOW, never opens through a link planted under it. Returns its descriptor, or -1 with
// errno set. The mode 0666 lets the umask decide a new file's permissions, as for any file.
int create_temporary(const std::string& file, std::string& temporary) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    temporary = temporary_path(file);
    const int fd =
        open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  errno = EEXIST;
  return -1;
}

// Writes all of `text` to `fd`; returns 0 or the errno of the failed write.
int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    text.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// The folder of a file to be created or replaced must exist and take a new file: a probe
// temporary is created and removed, which also tests what access() cannot (a read-only mount
// as root, an immutable folder) and that the temporary's name fits.
void check_folder(const std::string& path, const std::string& file) {
  const std::string name = fs::path(file).filename().string();
  if (name.empty() || name == "." || name == "..")
    fail(path, "it names a folder, not a file");
  const std::string folder = folder_of(file);
  const size_t limit = longest_name(folder);
  if (name.size() > limit) {
    fail(path, "its name has " + std::to_string(name.size()) + " bytes, more than the " +
                   std::to_string(limit) + " a file name may have there");
  }
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    fail(path, "no folder " + folder);
  std::string probe;
  const int fd = create_temporary(file, probe);
  if (fd < 0)
    fail(path, "cannot create a file in folder " + folder + " (" + std::strerror(errno) + ")");
  close(fd);
  unlink(probe.c_str());
}

// Everything check_output_path promises, returning where the output leads.
OutputTarget checked_target(const NamedPath& output) {
  const std::string& path = output.path;
  if (path.empty())
    throw InputError(output.role, "", "an output file name is empty");
  if (path.size() >= PATH_MAX) {
    fail(path, "the path has " + std::to_string(path.size()) + " bytes, more than the " +
                   std::to_string(PATH_MAX - 1) + " a path may have");
  }
  OutputTarget target = detail::resolve_output(path);
  switch (target.kind) {
    case OutputTarget::Kind::kDescriptor: {
      const int flags = fcntl(target.descriptor, F_GETFL);
      if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
        fail(path, "descriptor " + std::to_string(target.descriptor) + " is not open for writing");
      }
      break;
    }
    case OutputTarget::Kind::kStream:
      if (access(target.file.c_str(), W_OK) != 0)
        fail(path, std::strerror(errno));
      break;
    case OutputTarget::Kind::kRegularFile:
      if (access(target.file.c_str(), W_OK) != 0)
        fail(path, errno == EACCES ? "it is read-only" : std::strerror(errno));
      check_folder(path, target.file);
      break;
    case OutputTarget::Kind::kNewFile:
      check_folder(path, target.file);
      break;
  }
  return target;
}

// Temporaries written but not yet renamed into place; the destructor removes those left, so
// that no failure path leaves one behind.
class Temporaries {
 public:
  Temporaries() = default;
  Temporaries(const Temporaries&) = delete;
  Temporaries& operator=(const Temporaries&) = delete;
  ~Temporaries() {
    for (const Entry& entry : entries_)
      unlink(entry.temporary.c_str());
  }

  // Writes `text` to a new temporary for `target` (a file), with the permissions of the file it
  // replaces.
  void write(const std::string& path, const OutputTarget& target, std::string_view text) {
    Entry entry{path, target.file, ""};
    const int fd = create_temporary(target.file, entry.temporary);
    if (fd < 0)
      fail(path, std::strerror(errno));
    entries_.push_back(entry);
    int error = write_all(fd, text);
    if (error == 0 && target.kind == OutputTarget::Kind::kRegularFile &&
        fchmod(fd, target.mode) != 0)
      error = errno;
    if (close(fd) != 0 && error == 0)
      error = errno;
    if (error != 0)
      fail(path, std::strerror(error));
  }

  // Renames every temporary over its file.
  void commit() {
    while (!entries_.empty()) {
      const Entry& entry = entries_.front();
      if (std::rename(entry.temporary.c_str(), entry.file.c_str()) != 0)
        fail(entry.path, std::strerror(errno));
      entries_.erase(entries_.begin());
    }
  }

 private:
  struct Entry {
    std::string path;  // as the user named it, for messages
    std::string file;  // links followed
    std::string temporary;
  };
  std::vector<Entry> entries_;
};

// Writes `text` straight to a device, pipe or open descriptor.
void write_directly(const std::string& path, const OutputTarget& target, std::string_view text) {
  if (target.kind == OutputTarget::Kind::kDescriptor) {
    std::fflush(nullptr);  // what was printed before comes first on the same descriptor
    const int error = write_all(target.descriptor, text);
    if (error != 0)
      fail(path, std::strerror(error));
    return;
  }
  const int fd = open(target.file.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    fail(path, std::strerror(errno));
  int error = write_all(fd, text);
  if (close(fd) != 0 && error == 0)
    error = errno;
  if (error != 0)
    fail(path, std::strerror(error));
}

}  // namespace

void check_output_path(const NamedPath& output) {
  (void)checked_target(output);
}

void check_outputs(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  std::vector<std::optional<std::string>> identities;
  for (const NamedPath& output : outputs)
    identities.push_back(detail::file_identity(checked_target(output)));
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!identities[i])
      continue;
    for (size_t j = 0; j < i; ++j) {
      if (identities[j] == identities[i]) {
        fail(outputs[i].path, outputs[j].role + " and " + outputs[i].role +
                                  " name the same file; give each output its own");
      }
    }
    for (const NamedPath& input : inputs) {
      if (!input.path.empty() && detail::file_identity(input.path) == identities[i]) {
        fail(outputs[i].path, outputs[i].role + " names an input of the command (" + input.role +
                                  " " + input.path + "); write the output elsewhere");
      }
    }
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_files_atomically({{path, text}});
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<OutputTarget> targets;
  targets.reserve(files.size());
  for (const auto& [path, text] : files)
    targets.push_back(checked_target({"output", path}));
  Temporaries temporaries;
  for (size_t i = 0; i < files.size(); ++i) {
    const OutputTarget::Kind kind = targets[i].kind;
    if (kind == OutputTarget::Kind::kNewFile || kind == OutputTarget::Kind::kRegularFile)
      temporaries.write(files[i].first, targets[i], files[i].second);
  }
  // Devices and pipes cannot be taken back: written once every file's temporary is complete,
  // before any rename, so a failed one (/dev/full) still leaves no file replaced.
  for (size_t i = 0; i < files.size(); ++i) {
    const OutputTarget::Kind kind = targets[i].kind;
    if (kind == OutputTarget::Kind::kStream || kind == OutputTarget::Kind::kDescriptor)
      write_directly(files[i].first, targets[i], files[i].second);
  }
  temporaries.commit();
}

}  // namespace capsim::io
