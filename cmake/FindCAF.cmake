# CAF 0.17 (Debian bookworm) ships neither a CMake package nor a .pc file, so we define the
# imported targets CAF::core and CAF::io ourselves (same names CAF >= 0.18 exports).
find_package(Threads REQUIRED)
find_path(CAF_INCLUDE_DIR NAMES caf/all.hpp)
find_library(CAF_CORE_LIBRARY NAMES caf_core)
find_library(CAF_IO_LIBRARY NAMES caf_io)
if(CAF_INCLUDE_DIR)
  # CAF_VERSION 1706 -> "0.17.6"
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_line REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_v "${_caf_line}")
  math(EXPR _caf_major "${_caf_v} / 10000")
  math(EXPR _caf_minor "(${_caf_v} / 100) % 100")
  math(EXPR _caf_patch "${_caf_v} % 100")
  set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
endif()
foreach(_caf_c IN LISTS CAF_FIND_COMPONENTS)
  if(_caf_c STREQUAL "core" OR (_caf_c STREQUAL "io" AND CAF_IO_LIBRARY))
    set(CAF_${_caf_c}_FOUND TRUE)
  endif()
endforeach()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIBRARY
                                  VERSION_VAR CAF_VERSION HANDLE_COMPONENTS)
if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core SHARED IMPORTED)
  set_target_properties(CAF::core PROPERTIES IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}" INTERFACE_LINK_LIBRARIES Threads::Threads)
  if(CAF_IO_LIBRARY)
    add_library(CAF::io SHARED IMPORTED)
    set_target_properties(CAF::io PROPERTIES IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
      INTERFACE_LINK_LIBRARIES CAF::core)
  endif()
endif()
