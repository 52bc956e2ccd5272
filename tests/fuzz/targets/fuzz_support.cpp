#include "tests/fuzz/targets/fuzz_support.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <typeinfo>
#include <utility>

#include "io/input_error.hpp"
#include <unistd.h>

namespace capsim::fuzz {
namespace {

namespace fs = std::filesystem;

// The folder lives until a normal exit removes it (libFuzzer leaves it behind after a finding).
class Scratch {
 public:
  Scratch() : path_(fs::temp_directory_path() / ("capsim-fuzz-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
    // The shipped profiles and job traces beside the input, so the relative references of the
    // seeds ("profile": "a100-ib.json", "path": "jobs.csv") resolve as they do in the repository.
    const fs::path root(CAPSIM_SOURCE_DIR);
    const std::pair<const char*, const char*> shipped[] = {{"scenarios/profiles", ".json"},
                                                           {"scenarios/whatif", ".csv"},
                                                           {"tests/data/whatif", ".csv"}};
    for (const auto& [folder, extension] : shipped) {
      for (const auto& entry : fs::directory_iterator(root / folder)) {
        const fs::path link = path_ / entry.path().filename();
        if (entry.path().extension() == extension && !fs::exists(link))
          fs::create_symlink(entry.path(), link);
      }
    }
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const Scratch& scratch() {
  static const Scratch folder;
  return folder;
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "capsim fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

std::string source_dir() {
  return CAPSIM_SOURCE_DIR;
}

std::string scratch_dir() {
  return scratch().path().string();
}

std::string write_scratch(const std::string& name, std::string_view bytes) {
  const fs::path path = scratch().path() / name;
  if (fs::is_symlink(path))
    finding("a target would write through the link " + path.string());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    finding("cannot write the scratch file " + path.string());
  return path.string();
}

void run_one(const std::function<void()>& body) {
  try {
    body();
  } catch (const io::InputError&) {
    // The reader's rejection: exit code 2 with the file and pointer.
  } catch (const std::exception& e) {
    finding(std::string("unexpected ") + typeid(e).name() + ": " + e.what());
  }
}

void require(bool ok, const std::string& what) {
  if (!ok)
    finding(what);
}

void require_finite(const nlohmann::json& j, const std::string& what) {
  if (j.is_number_float()) {
    require(std::isfinite(j.get<double>()), what + ": a non-finite number in " + j.dump());
  } else if (j.is_structured()) {
    for (const auto& item : j)
      require_finite(item, what);
  }
}

}  // namespace capsim::fuzz
