#include "ss/core/embedding/embedding_table.hpp"

#include <algorithm>
#include <cstring>

#include "ss/core/hash.hpp"
#include "ss/core/random.hpp"

namespace ss::embedding {

void init_row(const table_options& options, std::uint64_t id, float* row) {
  for (std::uint32_t d = 0; d < options.dim; ++d)
    row[d] = counter_uniform(options.seed, options.table, id, d, -options.init_scale, options.init_scale);
  for (std::uint32_t s = 0; s < options.state_floats; ++s) row[options.dim + s] = 0.0f;
}

embedding_table::embedding_table(const table_options& options) : options_(options) {
  for (auto& s : stripes_) {
    s.slot_keys.assign(16, 0);
    s.slot_rows.assign(16, nullptr);
  }
}

std::size_t embedding_table::probe(const stripe& s, std::uint64_t id, std::uint64_t hash) {
  const std::size_t mask = s.slot_rows.size() - 1;
  std::size_t i = hash & mask;
  while (s.slot_rows[i] != nullptr && s.slot_keys[i] != id) i = (i + 1) & mask;
  return i;
}

void embedding_table::grow_locked(stripe& s) {
  std::vector<std::uint64_t> keys(s.slot_keys.size() * 2, 0);
  std::vector<float*> rows(s.slot_rows.size() * 2, nullptr);
  const std::size_t mask = rows.size() - 1;
  for (std::size_t j = 0; j < s.slot_rows.size(); ++j) {
    if (s.slot_rows[j] == nullptr) continue;
    std::size_t i = mix64(s.slot_keys[j]) & mask;
    while (rows[i] != nullptr) i = (i + 1) & mask;
    keys[i] = s.slot_keys[j];
    rows[i] = s.slot_rows[j];
  }
  s.slot_keys.swap(keys);
  s.slot_rows.swap(rows);
}

float* embedding_table::insert_locked(stripe& s, std::uint64_t id, std::size_t slot) {
  if (options_.max_rows != 0 && rows_.load(std::memory_order_relaxed) >= options_.max_rows) return nullptr;
  const std::size_t floats = row_floats();
  if (s.chunk_used == s.chunk_rows) {
    s.chunk_rows = s.chunks.empty() ? first_chunk_rows : std::min(s.chunk_rows * 2, max_chunk_rows);
    s.chunks.emplace_back(new float[s.chunk_rows * floats]);
    s.chunk_used = 0;
    s.allocated_floats += s.chunk_rows * floats;
  }
  float* row = s.chunks.back().get() + s.chunk_used++ * floats;
  init_row(options_, id, row);
  s.slot_keys[slot] = id;
  s.slot_rows[slot] = row;
  rows_.fetch_add(1, std::memory_order_relaxed);
  // Linear probing stays short below a 0.7 load factor.
  if (++s.used * 10 > s.slot_rows.size() * 7) grow_locked(s);
  return row;
}

float* embedding_table::find_or_create(std::uint64_t id) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripe_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  const std::size_t slot = probe(s, id, h);
  if (s.slot_rows[slot] != nullptr) return s.slot_rows[slot];
  return insert_locked(s, id, slot);
}

float* embedding_table::find(std::uint64_t id) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripe_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  return s.slot_rows[probe(s, id, h)];
}

const float* embedding_table::find(std::uint64_t id) const {
  return const_cast<embedding_table*>(this)->find(id);
}

bool embedding_table::put(std::uint64_t id, const float* row) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripe_of(h);
  std::lock_guard<std::mutex> lock(s.mu);
  const std::size_t slot = probe(s, id, h);
  float* dst = s.slot_rows[slot] != nullptr ? s.slot_rows[slot] : insert_locked(s, id, slot);
  if (dst == nullptr) return false;
  std::memcpy(dst, row, sizeof(float) * row_floats());
  return true;
}

std::size_t embedding_table::bytes() const {
  std::size_t total = 0;
  for (const auto& s : stripes_) {
    std::lock_guard<std::mutex> lock(s.mu);
    total += s.allocated_floats * sizeof(float);
    total += s.slot_keys.size() * (sizeof(std::uint64_t) + sizeof(float*));
  }
  return total;
}

}  // namespace ss::embedding
