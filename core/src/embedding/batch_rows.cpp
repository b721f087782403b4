#include "ss/core/embedding/batch_rows.hpp"

#include <algorithm>
#include <cstring>

#include "ss/core/hash.hpp"

namespace ss::embedding {

void batch_rows::build(const data::example_batch& batch, const std::vector<std::uint64_t>& buckets,
                       std::uint32_t dim) {
  dim_ = dim;
  keys_.clear();
  occurrence_.resize(batch.ids.size());
  // Open-addressing dedup table at load <= 0.5, cleared per batch.
  std::size_t cap = 16;
  while (cap < batch.ids.size() * 2) cap *= 2;
  slot_index_.assign(cap, 0);
  const std::size_t mask = cap - 1;
  const std::uint32_t tables = batch.num_sparse;
  const std::size_t n = batch.size();
  for (std::size_t e = 0; e < n; ++e) {
    for (std::uint32_t t = 0; t < tables; ++t) {
      const std::uint64_t b = t < buckets.size() ? buckets[t] : 0;
      const std::size_t cell = e * tables + t;
      for (std::uint32_t p = batch.offsets[cell]; p < batch.offsets[cell + 1]; ++p) {
        const row_key key{t, row_id(batch.ids[p], b)};
        std::size_t i = mix64(key.id ^ (0x9e3779b97f4a7c15ULL * (t + 1))) & mask;
        for (;;) {
          const std::uint32_t r = slot_index_[i];
          if (r == 0) {
            keys_.push_back(key);
            slot_index_[i] = static_cast<std::uint32_t>(keys_.size());
            occurrence_[p] = static_cast<std::uint32_t>(keys_.size() - 1);
            break;
          }
          if (keys_[r - 1] == key) {
            occurrence_[p] = r - 1;
            break;
          }
          i = (i + 1) & mask;
        }
      }
    }
  }
  const std::size_t floats = keys_.size() * dim;
  if (values_.size() < floats) {
    values_.resize(floats + floats / 2);
    grads_.resize(floats + floats / 2);
  }
  // Group the distinct rows by table (counting sort), for one batch lookup per table.
  table_offsets_.assign(tables + 1, 0);
  for (const auto& k : keys_) ++table_offsets_[k.table + 1];
  for (std::uint32_t t = 0; t < tables; ++t) table_offsets_[t + 1] += table_offsets_[t];
  by_table_.resize(keys_.size());
  table_ids_.resize(keys_.size());
  std::vector<std::size_t> fill(table_offsets_.begin(), table_offsets_.end() - 1);
  for (std::size_t r = 0; r < keys_.size(); ++r) {
    const std::size_t at = fill[keys_[r].table]++;
    by_table_[at] = static_cast<std::uint32_t>(r);
    table_ids_[at] = keys_[r].id;
  }
  row_ptrs_.assign(keys_.size(), nullptr);
}

void batch_rows::use_values() {
  row_ptrs_.resize(keys_.size());
  for (std::size_t r = 0; r < keys_.size(); ++r) row_ptrs_[r] = values_.data() + r * dim_;
}

void batch_rows::pool(const data::example_batch& batch, float* first_slot, std::size_t example_stride) const {
  const std::uint32_t tables = batch.num_sparse;
  const std::size_t n = batch.size();
  const std::size_t dim = dim_;
  for (std::size_t e = 0; e < n; ++e) {
    float* slots = first_slot + e * example_stride;
    for (std::uint32_t t = 0; t < tables; ++t) {
      const std::size_t cell = e * tables + t;
      float* dst = slots + t * dim;
      const std::uint32_t begin = batch.offsets[cell], end = batch.offsets[cell + 1];
      if (begin == end) {
        std::memset(dst, 0, sizeof(float) * dim);  // an empty bag pools to zero
        continue;
      }
      std::memcpy(dst, row_ptrs_[occurrence_[begin]], sizeof(float) * dim);
      for (std::uint32_t p = begin + 1; p < end; ++p) {
        const float* src = row_ptrs_[occurrence_[p]];
        for (std::size_t d = 0; d < dim; ++d) dst[d] += src[d];
      }
    }
  }
}

void batch_rows::accumulate_grads(const data::example_batch& batch, const float* first_slot_grad,
                                  std::size_t example_stride) {
  const std::size_t dim = dim_;
  std::memset(grads_.data(), 0, sizeof(float) * keys_.size() * dim);
  const std::uint32_t tables = batch.num_sparse;
  const std::size_t n = batch.size();
  for (std::size_t e = 0; e < n; ++e) {
    const float* slots = first_slot_grad + e * example_stride;
    for (std::uint32_t t = 0; t < tables; ++t) {
      const std::size_t cell = e * tables + t;
      const float* g = slots + t * dim;
      for (std::uint32_t p = batch.offsets[cell]; p < batch.offsets[cell + 1]; ++p) {
        float* dst = grads_.data() + occurrence_[p] * dim;
        for (std::size_t d = 0; d < dim; ++d) dst[d] += g[d];
      }
    }
  }
}

}  // namespace ss::embedding
