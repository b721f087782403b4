// Which embedding shard server owns a row, and how one batch's rows split into one request per
// shard. The mapping is a fixed function of (table, id, shard count): every trainer, every
// restart and every checkpoint agrees on it.
#pragma once

#include <cstdint>
#include <vector>

#include "ss/core/embedding/batch_rows.hpp"
#include "ss/core/hash.hpp"

namespace ss::embedding {

inline std::uint32_t shard_of(std::uint32_t table, std::uint64_t id, std::uint32_t shards) {
  return static_cast<std::uint32_t>(hash_combine(id, 0x7ab1eULL + table) % shards);
}

// The rows of a batch grouped by owning shard.
class shard_split {
 public:
  struct part {
    std::vector<std::uint32_t> tables;
    std::vector<std::uint64_t> ids;
    std::vector<std::uint32_t> rows;  // index of each (table, id) in batch_rows
  };

  void build(const batch_rows& rows, std::uint32_t shards);

  std::uint32_t shards() const { return static_cast<std::uint32_t>(parts_.size()); }
  const part& of(std::uint32_t shard) const { return parts_[shard]; }

  // Copies a shard's reply (its rows' values, in request order, dim floats each) into
  // rows.values(). false when the reply has the wrong size.
  bool scatter_values(std::uint32_t shard, const std::vector<float>& values, batch_rows& rows) const;
  // The gradients of a shard's rows, in request order (for its push request).
  std::vector<float> gather_grads(std::uint32_t shard, const batch_rows& rows) const;

 private:
  std::vector<part> parts_;
};

}  // namespace ss::embedding
