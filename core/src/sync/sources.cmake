# Sources of ss_core's sync area: the synchronization algorithms, pure arithmetic.
target_sources(ss_core PRIVATE src/sync/sync_algorithms.cpp src/sync/quantize.cpp src/sync/replica_mirror.cpp)
