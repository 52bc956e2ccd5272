#include "io/detail/output_target.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "io/input_error.hpp"
#include <sys/stat.h>
#include <unistd.h>

namespace capsim::io::detail {
namespace {

namespace fs = std::filesystem;

// Linux's own limit on links followed in one lookup (path_resolution(7)).
constexpr int kMaxSymlinks = 40;

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw InputError(path, "", "cannot write file: " + why);
}

// The absolute, lexically normal form of `path` ("" when the working folder is gone).
std::string normal_absolute(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  return ec ? std::string() : absolute.lexically_normal().string();
}

// The descriptor a path of the kernel's /proc/<pid>/fd links names: /dev/stdout is a link to
// /proc/self/fd/1, whose own link text ("pipe:[123]", a deleted file) is no path to write to.
std::optional<int> named_descriptor(const std::string& path) {
  const std::string name = normal_absolute(path);
  if (name == "/dev/stdin")
    return 0;
  if (name == "/dev/stdout")
    return 1;
  if (name == "/dev/stderr")
    return 2;
  for (const std::string& folder :
       {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
        std::string("/proc/thread-self/fd/"), "/proc/" + std::to_string(getpid()) + "/fd/"}) {
    if (name.rfind(folder, 0) != 0)
      continue;
    const std::string number = name.substr(folder.size());
    if (number.empty() || number.size() > 9 ||
        number.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoi(number);
  }
  return std::nullopt;
}

// The path a symbolic link at `link` points to (relative link text is relative to its folder).
std::string link_destination(const std::string& link, const std::string& path) {
  std::string text(PATH_MAX, '\0');
  const ssize_t n = readlink(link.c_str(), text.data(), text.size());
  if (n < 0)
    fail(path, std::strerror(errno));
  text.resize(static_cast<size_t>(n));
  const fs::path destination(text);
  if (destination.is_absolute() || !fs::path(link).has_parent_path())
    return text;
  return (fs::path(link).parent_path() / destination).string();
}

std::string inode_key(dev_t device, ino_t inode) {
  return "file:" + std::to_string(device) + ":" + std::to_string(inode);
}

// A name not taken yet: its folder's canonical name (links and "." resolved) and its own.
std::string new_file_key(const std::string& file) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(file, ec), ec);
  return "new:" + (ec ? normal_absolute(file) : canonical.string());
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  std::string current = path;
  for (int links = 0; links <= kMaxSymlinks; ++links) {
    OutputTarget target;
    target.file = current;
    if (const std::optional<int> descriptor = named_descriptor(current)) {
      target.kind = OutputTarget::Kind::kDescriptor;
      target.descriptor = *descriptor;
      return target;
    }
    struct stat st {};
    if (lstat(current.c_str(), &st) != 0) {
      // A new file; the caller checks its folder and the length of its name.
      if (errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG)
        return target;
      fail(path, std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      current = link_destination(current, path);
      continue;
    }
    if (S_ISDIR(st.st_mode))
      fail(path, "it is a folder");
    if (S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode))
      fail(path, S_ISSOCK(st.st_mode) ? "it is a socket" : "it is a block device");
    target.kind =
        S_ISREG(st.st_mode) ? OutputTarget::Kind::kRegularFile : OutputTarget::Kind::kStream;
    target.mode = st.st_mode & 07777;
    target.device = st.st_dev;
    target.inode = st.st_ino;
    return target;
  }
  fail(path, std::strerror(ELOOP));
}

std::optional<std::string> file_identity(const OutputTarget& target) {
  switch (target.kind) {
    case OutputTarget::Kind::kNewFile:
      return new_file_key(target.file);
    case OutputTarget::Kind::kRegularFile:
      return inode_key(target.device, target.inode);
    case OutputTarget::Kind::kStream:
    case OutputTarget::Kind::kDescriptor:
      break;
  }
  return std::nullopt;
}

std::optional<std::string> file_identity(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0)
    return S_ISREG(st.st_mode) ? std::optional<std::string>(inode_key(st.st_dev, st.st_ino))
                               : std::nullopt;
  if (errno == ENOENT)
    return new_file_key(path);
  return std::nullopt;
}

}  // namespace capsim::io::detail
