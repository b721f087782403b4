# oneDNN (libdnnl-dev). Debian's own dnnl-config.cmake insists on OpenCL development files for
# its GPU runtime, which we never use, so we find the CPU library and header directly.
find_path(DNNL_INCLUDE_DIR NAMES dnnl.h)
find_library(DNNL_LIBRARY NAMES dnnl)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(DNNL REQUIRED_VARS DNNL_INCLUDE_DIR DNNL_LIBRARY)
if(DNNL_FOUND AND NOT TARGET DNNL::dnnl)
  add_library(DNNL::dnnl SHARED IMPORTED)
  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION "${DNNL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${DNNL_INCLUDE_DIR}")
endif()
