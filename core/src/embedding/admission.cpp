#include "ss/core/embedding/admission.hpp"

#include <algorithm>

#include "ss/core/hash.hpp"

namespace ss::embedding {

admission_filter::admission_filter(std::uint32_t k, std::uint64_t counters) : k_(std::max<std::uint32_t>(k, 1)) {
  std::uint64_t width = 64;
  while (width < counters) width <<= 1;
  mask_ = width - 1;
  cells_.reset(new std::atomic<std::uint8_t>[rows * width]);
  for (std::uint64_t i = 0; i < rows * width; ++i) cells_[i].store(0, std::memory_order_relaxed);
}

admission_filter::cells admission_filter::cells_of(std::uint32_t table, std::uint64_t id) const {
  // Double hashing: two independent 64-bit hashes give the 4 rows' cells.
  const std::uint64_t h1 = mix64(id ^ mix64(0x5bd1e995ULL + table));
  const std::uint64_t h2 = mix64(h1) | 1;
  cells c;
  for (std::uint32_t r = 0; r < rows; ++r) c.at[r] = r * (mask_ + 1) + ((h1 + r * h2) & mask_);
  return c;
}

std::uint32_t admission_filter::count(std::uint32_t table, std::uint64_t id) const {
  const cells c = cells_of(table, id);
  std::uint32_t least = 255;
  for (std::uint32_t r = 0; r < rows; ++r)
    least = std::min<std::uint32_t>(least, cells_[c.at[r]].load(std::memory_order_relaxed));
  return least;
}

bool admission_filter::admitted(std::uint32_t table, std::uint64_t id) const {
  return k_ <= 1 || count(table, id) >= k_;
}

bool admission_filter::see(std::uint32_t table, std::uint64_t id) {
  if (k_ <= 1) return true;
  const cells c = cells_of(table, id);
  std::uint8_t value[rows];
  std::uint8_t least = 255;
  for (std::uint32_t r = 0; r < rows; ++r) {
    value[r] = cells_[c.at[r]].load(std::memory_order_relaxed);
    least = std::min(least, value[r]);
  }
  if (least == 255) return true;
  for (std::uint32_t r = 0; r < rows; ++r) {
    std::uint8_t expected = value[r];
    if (expected == least) cells_[c.at[r]].compare_exchange_strong(expected, static_cast<std::uint8_t>(least + 1),
                                                                 std::memory_order_relaxed);
  }
  if ((sightings_.fetch_add(1, std::memory_order_relaxed) + 1) % counters() == 0) halve();
  return static_cast<std::uint32_t>(least) + 1 >= k_;
}

void admission_filter::halve() {
  for (std::uint64_t i = 0; i < rows * counters(); ++i) {
    std::uint8_t v = cells_[i].load(std::memory_order_relaxed);
    // A sighting racing with the halving may be undone or halved: either delays an admission.
    while (v != 0 && !cells_[i].compare_exchange_weak(v, static_cast<std::uint8_t>(v >> 1), std::memory_order_relaxed)) {
    }
  }
  halvings.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace ss::embedding
