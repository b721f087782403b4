// Every embedding table of a model held in this process, with their sparse optimizer: the
// embedding store of `shadowsync train`. (In a cluster the same tables are split over shard
// servers, each holding its hash partition.)
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ss/core/embedding/batch_rows.hpp"
#include "ss/core/embedding/embedding_table.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/optim/sparse_optimizer.hpp"
#include "ss/core/status.hpp"

namespace ss::embedding {

struct embedding_options {
  std::uint32_t tables = 26;
  std::uint32_t dim = 16;
  float init_scale = 0.01f;             // Default: 0.01
  std::uint64_t seed = 1;
  std::vector<std::uint64_t> buckets;   // per table; empty or 0 = unbounded (first touch)
  std::uint64_t max_rows_per_table = 0; // 0 = unbounded
  optim::sparse_optimizer optimizer;
  // Shard servers keep rows at this precision (shard_store_options). This store hands out
  // pointers to its rows for the model to read in place, so it keeps FP32 whatever this says
  // (a served model decodes a 16-bit model file into it; `shadowsync train` refuses another);
  // peek() rounds an unseen id's initial values to it, as the shards did.
  row_precision precision = row_precision::fp32;
};

class local_embeddings {
 public:
  explicit local_embeddings(const embedding_options& options);

  const embedding_options& options() const { return options_; }
  embedding_table& table(std::uint32_t t) { return *tables_[t]; }
  const embedding_table& table(std::uint32_t t) const { return *tables_[t]; }

  // Points rows.row_pointers() at the table rows (no copy), creating rows on first touch.
  // Thread-safe. The pointers stay valid for the store's lifetime.
  status fetch(batch_rows& rows);
  // Like fetch, but never creates rows: a row not held reads the values it would start with
  // (written into rows.values(); at options().precision).
  status peek(batch_rows& rows) const;
  // Applies rows.grads() to the rows fetch() found, with the sparse optimizer at its learning
  // rate times lr_scale. Thread-safe (Hogwild on row values).
  void apply(const batch_rows& rows, float lr_scale = 1.0f);

  std::uint64_t total_rows() const;
  std::uint64_t total_bytes() const;

 private:
  embedding_options options_;
  std::vector<std::unique_ptr<embedding_table>> tables_;
  // Per-thread scratch of the batch lookups.
  static thread_local embedding_table::batch_scratch scratch_;
  static thread_local std::vector<float*> found_;
};

}  // namespace ss::embedding
