// Where a test finds the repository's files: tests/CMakeLists.txt sets the three directories for
// every test binary.
#pragma once

#include <string>

namespace capsim::testing {

inline const std::string kSourceDir = CAPSIM_SOURCE_DIR;       // the repository's root
inline const std::string kTestDataDir = CAPSIM_TEST_DATA_DIR;  // tests/data
inline const std::string kShippedDataDir = CAPSIM_DATA_DIR;    // data: what capsim ships

}  // namespace capsim::testing
