#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace capsim::testing {

// The whole text of the file at `path` ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace capsim::testing
