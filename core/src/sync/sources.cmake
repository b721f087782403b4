# Sources of ss_math's sync area: the synchronization algorithms, pure arithmetic.
set(SS_SYNC_SOURCES src/sync/sync_algorithms.cpp src/sync/quantize.cpp src/sync/replica_mirror.cpp)
target_sources(ss_math PRIVATE ${SS_SYNC_SOURCES})
# Every sync round runs these loops over a whole slice, on the trainer and on the server, in CPU
# taken from training on a small machine, so they must vectorize (multiversioned per ISA,
# SS_MULTIVERSION): no trapping math (the clamp of a quantized value vectorizes only without
# it; nothing here reads the FP exception flags) and, with GCC, the dynamic cost model at -O2.
# No contraction into FMA: a trainer and its server each rebuild the same mirror from the same
# 8-bit values, and must agree to the bit on any two ISAs.
set(SS_SYNC_OPTIONS "-fno-math-errno;-fno-trapping-math;-ffp-contract=off")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")  # a GCC flag; clang (the fuzz build) rejects it
  list(APPEND SS_SYNC_OPTIONS "-fvect-cost-model=dynamic")
endif()
set_source_files_properties(${SS_SYNC_SOURCES} PROPERTIES COMPILE_OPTIONS "${SS_SYNC_OPTIONS}")
