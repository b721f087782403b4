// Id admission (--admit-after K): an id gets a stored row only once it has been seen K times.
// Until then a lookup serves its initial values (init_row(), as for any new row) and a push of its
// gradient is dropped, both counted. Most ids of a long-tailed vocabulary are seen once or twice;
// their rows would take memory and disk and barely train.
//
// Sightings are counted in a count-min sketch: 4 rows of 8-bit saturating counters, an id's count
// the smallest of its 4 cells, each sighting raising only the cells at that minimum (conservative
// update: collisions inflate counts less). Only ids without a row are counted, so the sketch holds
// the tail. Every `counters` sightings all cells are halved: an id must be seen K times within
// about that many sightings of the tail, and the sketch does not fill up with a long run's
// history (a full one would admit everything).
//
// Thread-safety: see() and admitted() may run concurrently from any number of threads; racing
// sightings of one id may count once (relaxed atomics), which only delays its admission.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace ss::embedding {

class admission_filter {
 public:
  static constexpr std::uint32_t rows = 4;

  // k >= 1 (1 admits every id at once); `counters` per row, rounded up to a power of two.
  admission_filter(std::uint32_t k, std::uint64_t counters);

  // Counts one sighting of (table, id); whether it has now been seen k times.
  bool see(std::uint32_t table, std::uint64_t id);
  // Whether (table, id) has been seen k times, without counting a sighting.
  bool admitted(std::uint32_t table, std::uint64_t id) const;
  // The sketch's estimate of the sightings of (table, id), at most 255.
  std::uint32_t count(std::uint32_t table, std::uint64_t id) const;

  std::uint32_t k() const { return k_; }
  std::uint64_t counters() const { return mask_ + 1; }
  std::uint64_t bytes() const { return rows * counters(); }

  // Lookups served initial values for want of a row, and gradients dropped for want of one.
  std::atomic<std::uint64_t> refused{0}, dropped{0};
  // Rows created for ids that passed (the sketch's admissions), and times the sketch was halved.
  std::atomic<std::uint64_t> admissions{0}, halvings{0};

 private:
  struct cells {
    std::uint64_t at[rows];
  };
  cells cells_of(std::uint32_t table, std::uint64_t id) const;
  void halve();

  std::uint32_t k_;
  std::uint64_t mask_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> cells_;  // rows x counters, row-major
  std::atomic<std::uint64_t> sightings_{0};
};

}  // namespace ss::embedding
