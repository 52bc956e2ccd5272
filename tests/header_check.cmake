# One translation unit per public header (docs/design/conventions.md §3: every header compiles on
# its own). Each generated file includes its header twice (the second must be a no-op), and the
# object library only compiles them. The CUDA harness headers are checked when the harness is built.
file(GLOB_RECURSE capsim_headers RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/models/*.hpp ${PROJECT_SOURCE_DIR}/estimate/*.hpp
     ${PROJECT_SOURCE_DIR}/io/*.hpp ${PROJECT_SOURCE_DIR}/sim/*.hpp ${PROJECT_SOURCE_DIR}/whatif/*.hpp
     ${PROJECT_SOURCE_DIR}/planner/*.hpp ${PROJECT_SOURCE_DIR}/traces/*.hpp
     ${PROJECT_SOURCE_DIR}/calibrate/*.hpp ${PROJECT_SOURCE_DIR}/cli/*.hpp)
if(NOT TARGET capsim_calibrate_cuda)
  list(FILTER capsim_headers EXCLUDE REGEX "^calibrate/harness/")
endif()
set(header_check_sources)
foreach(header ${capsim_headers})
  string(MAKE_C_IDENTIFIER ${header} name)
  set(source ${CMAKE_CURRENT_BINARY_DIR}/header_check/${name}.cpp)
  file(CONFIGURE OUTPUT ${source}
       CONTENT "#include \"${header}\"\n#include \"${header}\"  // pragma once\n")
  list(APPEND header_check_sources ${source})
endforeach()
add_library(capsim_header_check OBJECT ${header_check_sources})
set_target_properties(capsim_header_check PROPERTIES UNITY_BUILD OFF)
# Only whether each header compiles matters here, not the code it generates.
target_compile_options(capsim_header_check PRIVATE -O0)
target_include_directories(capsim_header_check PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(capsim_header_check PRIVATE capsim::io capsim::estimate capsim::sim capsim::planner
                      capsim::traces capsim::calibrate PkgConfig::SimGrid cxxopts::cxxopts
                      capsim_warnings)
if(TARGET capsim_whatif)
  target_link_libraries(capsim_header_check PRIVATE capsim_whatif)
endif()
if(TARGET capsim_calibrate_cuda)
  target_link_libraries(capsim_header_check PRIVATE capsim_calibrate_cuda)
  target_include_directories(capsim_header_check SYSTEM PRIVATE ${CAPSIM_CUDA_INCLUDE_DIRS})
endif()
