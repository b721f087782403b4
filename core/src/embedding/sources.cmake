# Sources of ss_math's embedding area.
target_sources(ss_math PRIVATE
  src/embedding/admission.cpp
  src/embedding/batch_rows.cpp
  src/embedding/embedding_table.cpp
  src/embedding/local_embeddings.cpp
  src/embedding/memory_rows.cpp
  src/embedding/publish_staging.cpp
  src/embedding/push_ledger.cpp
  src/embedding/row_index.cpp
  src/embedding/row_layout.cpp
  src/embedding/row_precision.cpp
  src/embedding/row_ttl.cpp
  src/embedding/shard_store.cpp
  src/embedding/sharding.cpp)
# The row precision conversions must vectorize (row_precision.cpp), as the dense updates do: no
# floating-point traps (a conversion of a discarded lane may not be skipped for them) and, with
# GCC, the dynamic cost model at -O2.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set_source_files_properties(src/embedding/row_precision.cpp PROPERTIES COMPILE_OPTIONS "-fno-trapping-math;-fvect-cost-model=dynamic")
else()
  set_source_files_properties(src/embedding/row_precision.cpp PROPERTIES COMPILE_OPTIONS "-fno-trapping-math")
endif()
