#include "models/io/output_files.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "models/io/input_error.hpp"

#include <unistd.h>

namespace capsim {

void check_output_path(const std::string& path) {
  if (path.empty())
    throw InputError("", "", "an output file name is empty");
  const std::filesystem::path out(path);
  if (std::filesystem::is_directory(out))
    throw InputError(path, "", "cannot write file: it is a folder");
  const std::filesystem::path dir = out.has_parent_path() ? out.parent_path() : ".";
  if (!std::filesystem::is_directory(dir))
    throw InputError(path, "", "cannot write file: no folder " + dir.string());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  write_files_atomically({{path, text}});
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  // Every file goes to a temporary beside it first (named by this process, so that no file of
  // the user's is overwritten); only when all are written are they renamed into place.
  std::vector<std::string> temps;
  const auto discard = [&temps] {
    for (const std::string& t : temps)
      std::remove(t.c_str());
  };
  for (const auto& [path, text] : files)
    check_output_path(path);
  for (const auto& [path, text] : files) {
    const std::string tmp = path + ".capsim-" + std::to_string(getpid()) + ".tmp";
    temps.push_back(tmp);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out)
      out << text << std::flush;
    if (!out) {
      discard();
      throw InputError(path, "", "cannot write file");
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temps[i], files[i].first, ec);
    if (ec) {
      discard();
      throw InputError(files[i].first, "", "cannot write file: " + ec.message());
    }
  }
}

}  // namespace capsim
