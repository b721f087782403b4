# Sources of ss_math's model area.
target_sources(ss_math PRIVATE
  src/model/dlrm_config.cpp
  src/model/dlrm.cpp
  src/model/gemm.cpp
  src/model/kernels.cpp)
# -O2 plus the dynamic vectorizer cost model, so the multiversioned kernels vectorize.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")  # a GCC flag; clang (the fuzz build) rejects it
  set_source_files_properties(src/model/kernels.cpp PROPERTIES COMPILE_OPTIONS "-fvect-cost-model=dynamic")
endif()
