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
  src/embedding/row_precision.cpp
  src/embedding/row_ttl.cpp
  src/embedding/shard_store.cpp
  src/embedding/sharding.cpp)
