#include "ss/core/embedding/batch_rows.hpp"

#include <algorithm>
#include <cstring>

#include "ss/core/hash.hpp"

namespace ss::embedding {

void batch_rows::build(const data::example_batch& batch, const std::vector<std::uint64_t>& buckets,
                       std::uint32_t dim) {
  dim_ = dim;
  keys_.clear();
  local_rows_.clear();
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
        std::size_t i = hash_combine(key.id, t) & mask;
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
      std::memcpy(dst, values_.data() + occurrence_[begin] * dim, sizeof(float) * dim);
      for (std::uint32_t p = begin + 1; p < end; ++p) {
        const float* src = values_.data() + occurrence_[p] * dim;
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
