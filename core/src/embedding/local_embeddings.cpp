#include "ss/core/embedding/local_embeddings.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace ss::embedding {

thread_local embedding_table::batch_scratch local_embeddings::scratch_;
thread_local std::vector<float*> local_embeddings::found_;

local_embeddings::local_embeddings(const embedding_options& options) : options_(options) {
  for (std::uint32_t t = 0; t < options.tables; ++t) {
    table_options o = options_of_table(options, t);
    o.precision = row_precision::fp32;  // rows are read in place (embedding_options::precision)
    tables_.push_back(std::make_unique<embedding_table>(o));
  }
}

status local_embeddings::fetch(batch_rows& rows) {
  if (rows.tables() > tables_.size())
    return {errc::out_of_range, "batch has " + std::to_string(rows.tables()) + " tables but the model has " +
                                    std::to_string(tables_.size())};
  auto& ptrs = rows.row_pointers();
  const auto& order = rows.by_table();
  const auto& ids = rows.table_ids();
  for (std::uint32_t t = 0; t < rows.tables(); ++t) {
    const std::size_t begin = rows.table_begin(t), n = rows.table_begin(t + 1) - begin;
    if (n == 0) continue;
    found_.resize(n);
    const std::size_t missing = tables_[t]->find_or_create_batch(ids.data() + begin, n, found_.data(), scratch_);
    if (missing > 0)
      return {errc::resource_exhausted, "table " + std::to_string(t) + " is full (" +
                                            std::to_string(options_.max_rows_per_table) +
                                            " rows, --max-rows-per-table: the single-process trainer's Hogwild "
                                            "workers hold row pointers, so it refuses new rows where a cluster's "
                                            "shards evict)"};
    for (std::size_t j = 0; j < n; ++j) ptrs[order[begin + j]] = found_[j];
  }
  return status::ok();
}

status local_embeddings::peek(batch_rows& rows) const {
  if (rows.tables() > tables_.size())
    return {errc::out_of_range, "batch has " + std::to_string(rows.tables()) + " tables but the model has " +
                                    std::to_string(tables_.size())};
  const std::uint32_t dim = options_.dim;
  rows.use_values();
  auto& ptrs = rows.row_pointers();
  const auto& order = rows.by_table();
  const auto& ids = rows.table_ids();
  std::vector<float> fresh(dim + options_.optimizer.state_floats());
  for (std::uint32_t t = 0; t < rows.tables(); ++t) {
    const std::size_t begin = rows.table_begin(t), n = rows.table_begin(t + 1) - begin;
    if (n == 0) continue;
    found_.resize(n);
    tables_[t]->find_batch(ids.data() + begin, n, found_.data(), scratch_);
    for (std::size_t j = 0; j < n; ++j) {
      float* dst = ptrs[order[begin + j]];  // the row's slice of rows.values()
      if (found_[j] != nullptr) {
        std::memcpy(dst, found_[j], sizeof(float) * dim);
      } else {
        init_row(tables_[t]->options(), ids[begin + j], fresh.data());
        std::memcpy(dst, fresh.data(), sizeof(float) * dim);
        // A model trained at 16 bits gave a new row its initial values rounded to the nearest.
        round_to_nearest(dst, dim, options_.precision);
      }
    }
  }
  return status::ok();
}

void local_embeddings::apply(const batch_rows& rows, float lr_scale) {
  const std::uint32_t dim = options_.dim;
  const auto& ptrs = rows.row_pointers();
  const float* grads = rows.grads();
  const std::size_t n = rows.size();
  for (std::size_t r = 0; r < n; ++r) {
    if (r + 8 < n) __builtin_prefetch(ptrs[r + 8], 1);
    options_.optimizer.apply(ptrs[r], grads + r * dim, dim, lr_scale);
  }
}

std::uint64_t local_embeddings::total_rows() const {
  std::uint64_t n = 0;
  for (const auto& t : tables_) n += t->rows();
  return n;
}

std::uint64_t local_embeddings::total_bytes() const {
  std::uint64_t n = 0;
  for (const auto& t : tables_) n += t->bytes();
  return n;
}

}  // namespace ss::embedding
