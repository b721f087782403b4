# Sources of ss_math's optim area.
target_sources(ss_math PRIVATE src/optim/lr_schedule.cpp src/optim/optimizers.cpp)
# The dense updates must vectorize (optimizers.cpp): sqrt without errno (a NaN is caught as a
# diverged model, not by errno) and, with GCC, the dynamic cost model at -O2.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set_source_files_properties(src/optim/optimizers.cpp PROPERTIES COMPILE_OPTIONS "-fno-math-errno;-fvect-cost-model=dynamic")
else()
  set_source_files_properties(src/optim/optimizers.cpp PROPERTIES COMPILE_OPTIONS "-fno-math-errno")
endif()
