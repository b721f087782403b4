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
  const std::vector<row_key>& keys() const { return keys_; }
  // Distinct row of each id occurrence, parallel to batch.ids.
  const std::vector<std::uint32_t>& occurrence_rows() const { return occurrence_; }

  // size() x dim row values, filled by the caller from a store before pool().
  float* values() { return values_.data(); }
  const float* values() const { return values_.data(); }
  // Where each row lives in a local store, recorded by local_embeddings::fetch so the update
  // after backward does not look every row up a second time (rows never move).
  std::vector<float*>& local_rows() { return local_rows_; }
  const std::vector<float*>& local_rows() const { return local_rows_; }

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
  std::vector<std::uint32_t> slot_index_;
  std::vector<float*> local_rows_;  // dedup hash: slot -> row number + 1 (0 = free)
  aligned_buffer<float> values_;
  aligned_buffer<float> grads_;
};

}  // namespace ss::embedding
