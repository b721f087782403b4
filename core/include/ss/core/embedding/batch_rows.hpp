// The distinct embedding rows a batch touches. A batch of 128 Criteo examples names 3,328
// (table, id) pairs but far fewer distinct rows; looking each up once (locally or on a shard)
// and summing their gradients before one update is both cheaper and what row-wise optimizers
// expect.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/aligned_buffer.hpp"
#include "ss/core/data/example_batch.hpp"

namespace ss::embedding {

struct row_key {
  std::uint32_t table = 0;
  std::uint64_t id = 0;
  bool operator==(const row_key& o) const { return table == o.table && id == o.id; }
};

// Maps a raw feature id to its row id: the id itself, or id mod buckets for a table with a fixed
// bucket count.
inline std::uint64_t row_id(std::uint64_t id, std::uint64_t buckets) {
  return buckets == 0 ? id : id % buckets;
}

class batch_rows {
 public:
  // Collects the distinct rows of `batch`. buckets[t] is table t's bucket count (0 or missing
  // = unbounded). dim is the embedding width.
  void build(const data::example_batch& batch, const std::vector<std::uint64_t>& buckets,
             std::uint32_t dim);

  std::size_t size() const { return keys_.size(); }
  std::uint32_t dim() const { return dim_; }
  const std::vector<row_key>& keys() const { return keys_; }
  // Distinct row of each id occurrence, parallel to batch.ids.
  const std::vector<std::uint32_t>& occurrence_rows() const { return occurrence_; }

  // The distinct rows grouped by table: rows by_table()[table_begin(t) .. table_begin(t + 1))
  // belong to table t, and table_ids() holds their ids in that order (ready for batch lookups).
  std::size_t table_begin(std::uint32_t table) const { return table_offsets_[table]; }
  std::uint32_t tables() const { return static_cast<std::uint32_t>(table_offsets_.size() - 1); }
  const std::vector<std::uint32_t>& by_table() const { return by_table_; }
  const std::vector<std::uint64_t>& table_ids() const { return table_ids_; }

  // Where each row's values are read from by pool(): set by a local store to its own row memory
  // (no copy), or by use_values() to the values() buffer a remote store fills.
  std::vector<float*>& row_pointers() { return row_ptrs_; }
  const std::vector<float*>& row_pointers() const { return row_ptrs_; }
  // size() x dim values buffer, for rows that arrive by copy (from a shard); use_values() points
  // every row at its slice.
  float* values() { return values_.data(); }
  const float* values() const { return values_.data(); }
  void use_values();

  // size() x dim row gradients, valid after accumulate_grads().
  float* grads() { return grads_.data(); }
  const float* grads() const { return grads_.data(); }

  // Writes the sum of its rows' values for every (example e, table t) to
  // first_slot + e * example_stride + t * dim (the layout of the DLRM interaction input).
  void pool(const data::example_batch& batch, float* first_slot, std::size_t example_stride) const;
  // grads[r] = sum over the occurrences of row r of the gradient at that (example, table) slot.
  void accumulate_grads(const data::example_batch& batch, const float* first_slot_grad,
                        std::size_t example_stride);

 private:
  std::uint32_t dim_ = 0;
  std::vector<row_key> keys_;
  std::vector<std::uint32_t> occurrence_;
  std::vector<std::uint32_t> slot_index_;  // dedup hash: slot -> row number + 1 (0 = free)
  std::vector<std::size_t> table_offsets_;
  std::vector<std::uint32_t> by_table_;
  std::vector<std::uint64_t> table_ids_;
  std::vector<float*> row_ptrs_;
  aligned_buffer<float> values_;
  aligned_buffer<float> grads_;
};

}  // namespace ss::embedding
