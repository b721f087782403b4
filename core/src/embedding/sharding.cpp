#include "ss/core/embedding/sharding.hpp"

#include <cstring>

namespace ss::embedding {

void shard_split::build(const batch_rows& rows, std::uint32_t shards) {
  parts_.resize(shards);
  for (auto& p : parts_) {
    p.tables.clear();
    p.ids.clear();
    p.rows.clear();
  }
  const auto& keys = rows.keys();
  for (std::size_t r = 0; r < keys.size(); ++r) {
    auto& p = parts_[shard_of(keys[r].table, keys[r].id, shards)];
    p.tables.push_back(keys[r].table);
    p.ids.push_back(keys[r].id);
    p.rows.push_back(static_cast<std::uint32_t>(r));
  }
}

bool shard_split::scatter_values(std::uint32_t shard, const std::vector<float>& values, batch_rows& rows) const {
  const auto& p = parts_[shard];
  const std::size_t dim = rows.dim();
  if (values.size() != p.rows.size() * dim) return false;
  float* out = rows.values();
  for (std::size_t i = 0; i < p.rows.size(); ++i)
    std::memcpy(out + static_cast<std::size_t>(p.rows[i]) * dim, values.data() + i * dim, sizeof(float) * dim);
  return true;
}

std::vector<float> shard_split::gather_grads(std::uint32_t shard, const batch_rows& rows) const {
  const auto& p = parts_[shard];
  const std::size_t dim = rows.dim();
  std::vector<float> g(p.rows.size() * dim);
  const float* in = rows.grads();
  for (std::size_t i = 0; i < p.rows.size(); ++i)
    std::memcpy(g.data() + i * dim, in + static_cast<std::size_t>(p.rows[i]) * dim, sizeof(float) * dim);
  return g;
}

}  // namespace ss::embedding
