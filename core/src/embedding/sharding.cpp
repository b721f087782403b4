#include "ss/core/embedding/sharding.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace ss::embedding {

placement::placement(std::uint32_t shards)
    : shards_(std::clamp<std::uint32_t>(shards, 1, max_shards)), owner_(placement_ranges, 0) {
  std::vector<std::uint32_t> count(shards_, 0);
  count[0] = placement_ranges;
  // Each shard's ranges with their priority for the shard being added; reused between steps.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint32_t>>> held(shards_);
  for (std::uint32_t added = 1; added < shards_; ++added) {
    const std::uint32_t n = added + 1, base = placement_ranges / n, extra = placement_ranges % n;
    for (std::uint32_t j = 0; j < added; ++j) held[j].clear();
    for (std::uint32_t r = 0; r < placement_ranges; ++r)
      held[owner_[r]].emplace_back(hash_combine(r, 0x5348415244ULL + added), r);
    for (std::uint32_t j = 0; j < added; ++j) {
      const std::uint32_t target = base + (j < extra ? 1 : 0);
      if (count[j] <= target) continue;
      const std::uint32_t give = count[j] - target;
      auto& h = held[j];
      std::nth_element(h.begin(), h.begin() + give, h.end(), std::greater<>());
      for (std::uint32_t k = 0; k < give; ++k) owner_[h[k].second] = static_cast<std::uint16_t>(added);
      count[j] -= give;
      count[added] += give;
    }
  }
}

std::vector<std::uint32_t> placement::ranges_per_shard() const {
  std::vector<std::uint32_t> n(shards_, 0);
  for (auto o : owner_) ++n[o];
  return n;
}

std::vector<std::vector<std::uint32_t>> move_sources(const placement& from, const placement& to) {
  std::vector<std::vector<bool>> moves(to.shards(), std::vector<bool>(from.shards(), false));
  for (std::uint32_t r = 0; r < placement_ranges; ++r) {
    const std::uint32_t was = from.owner_of_range(r), now = to.owner_of_range(r);
    if (was != now) moves[now][was] = true;
  }
  std::vector<std::vector<std::uint32_t>> sources(to.shards());
  for (std::uint32_t j = 0; j < to.shards(); ++j)
    for (std::uint32_t i = 0; i < from.shards(); ++i)
      if (moves[j][i]) sources[j].push_back(i);
  return sources;
}

std::shared_ptr<const placement> placement_cache::of(std::uint32_t shards) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!last_ || last_->shards() != shards) last_ = std::make_shared<const placement>(shards);
  return last_;
}

void shard_split::build(const batch_rows& rows, std::uint32_t shards) {
  if (placement_.shards() != shards) placement_ = embedding::placement(shards);
  parts_.resize(shards);
  for (auto& p : parts_) {
    p.tables.clear();
    p.ids.clear();
    p.rows.clear();
  }
  const auto& keys = rows.keys();
  for (std::size_t r = 0; r < keys.size(); ++r) {
    auto& p = parts_[placement_.shard_of(keys[r].table, keys[r].id)];
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
