#include "io/profile_reference.hpp"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "io/gpu_spec_io.hpp"
#include "io/input_error.hpp"
#include "io/json_reader.hpp"

namespace capsim::io {

std::string resolve_profile_path(const std::string& profile_path, const std::string& file,
                                 const std::string& pointer) {
  if (profile_path.empty())
    return profile_path;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path profile(profile_path);
  if (profile.is_relative()) {
    const fs::path beside = fs::path(file).parent_path() / profile;
    if (fs::is_regular_file(beside, ec))
      profile = beside;
  }
  if (!fs::is_regular_file(profile, ec)) {
    throw InputError(file, pointer,
                     "profile file \"" + profile_path +
                         "\" not found (looked beside the input file and in the working folder)");
  }
  return profile.string();
}

void define_gpu_of_profile(const std::string& profile_path, const std::string& input_file,
                           const std::string& pointer, Catalog& catalog) {
  if (profile_path.empty())  // the input's reader rejects an empty path with its own message
    return;
  const std::string path = resolve_profile_path(profile_path, input_file, pointer);
  const nlohmann::json doc = JsonReader::parse_file(path);
  if (!doc.is_object() || !doc.contains("gpu") || !doc.at("gpu").is_object())
    return;
  JsonReader root(doc, path);
  (void)read_gpu_name_or_definition(root, "gpu", catalog);
}

}  // namespace capsim::io
