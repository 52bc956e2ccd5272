#pragma once

namespace capsim::whatif::detail {

// scenarios/whatif/default.json and scenarios/whatif/philly_day.csv, compiled in by CMake
// (whatif/CMakeLists.txt generates the definitions).
extern const char* const kDefaultWhatIfJson;
extern const char* const kDefaultWhatIfTrace;

}  // namespace capsim::whatif::detail
