#include "io/output_directory.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/output_files.hpp"

namespace capsim::io {
namespace {

namespace fs = std::filesystem;

std::string parent_folder(const std::string& dir) {
  const fs::path parent = fs::path(dir).lexically_normal().parent_path();
  return parent.empty() ? "." : parent.string();
}

// The text of the regular file at `path`, or nullopt when it is not one or cannot be read.
std::optional<std::string> file_text(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

void check_output_directory(const std::string& role, const std::string& dir,
                            const std::vector<std::string>& names) {
  if (dir.empty())
    throw InputError(role, "", "expected a folder name, got an empty one");
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) {
    // A probe file in the parent shows that the folder could be created there.
    const std::string parent = parent_folder(dir);
    if (!fs::is_directory(parent, ec))
      throw InputError(dir, "", "cannot create the folder: " + parent + " is not a folder");
    check_output_path({role, (fs::path(parent) / ".capsim-folder-probe").string()});
    return;
  }
  if (!fs::is_directory(status))
    throw InputError(dir, "", "expected a folder for the launch files, got a file");
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (std::find(names.begin(), names.end(), name) == names.end() || !e.is_regular_file()) {
      throw InputError(dir, "",
                       "the folder holds " + name +
                           ", which this command does not write; give "
                           "an empty or new folder (it writes " +
                           join_names(names) + ")");
    }
  }
  if (ec)
    throw InputError(dir, "", "cannot read the folder: " + ec.message());
}

void write_output_directory(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::pair<std::string, std::string>> changed;
  for (const auto& [name, text] : files) {
    const fs::path path = fs::path(dir) / name;
    const std::optional<std::string> old = file_text(path);
    std::error_code ec;
    if (old && *old == text)
      continue;
    if (old || fs::exists(fs::symlink_status(path, ec))) {
      throw InputError(path.string(), "",
                       "exists with other content; capsim does not overwrite it (remove it, or "
                       "give an empty or new folder)");
    }
    changed.emplace_back(path.string(), text);
  }
  if (changed.empty())
    return;
  std::error_code ec;
  const bool created = fs::create_directory(dir, ec);
  if (ec)
    throw InputError(dir, "", "cannot create the folder: " + ec.message());
  try {
    write_files_atomically(changed);
  } catch (...) {
    if (created)
      fs::remove(dir, ec);
    throw;
  }
}

}  // namespace capsim::io
