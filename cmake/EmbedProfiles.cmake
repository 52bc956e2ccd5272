# Sets CAPSIM_EMBEDDED_PROFILES_CPP: a generated source embedding scenarios/profiles/*.json.
# The glob lists data files, not sources (docs/design/conventions.md §9 bans globbing sources);
# CONFIGURE_DEPENDS re-runs it when a profile is added.
file(GLOB CAPSIM_PROFILE_FILES CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/scenarios/profiles/*.json")
set(CAPSIM_EMBEDDED_PROFILES_CPP "${PROJECT_BINARY_DIR}/generated/embedded_profiles.cpp")
add_custom_command(
  OUTPUT "${CAPSIM_EMBEDDED_PROFILES_CPP}"
  COMMAND "${CMAKE_COMMAND}" -DPROFILE_DIR=${PROJECT_SOURCE_DIR}/scenarios/profiles
          -DOUTPUT=${CAPSIM_EMBEDDED_PROFILES_CPP} -P ${PROJECT_SOURCE_DIR}/cmake/embed_profiles.cmake
  DEPENDS ${CAPSIM_PROFILE_FILES} "${PROJECT_SOURCE_DIR}/cmake/embed_profiles.cmake"
  COMMENT "Embedding shipped profiles"
  VERBATIM)
