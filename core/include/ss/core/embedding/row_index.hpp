// One stripe's index from a row's id to its memory: open addressing with linear probing, kept
// below a 0.7 load factor. embedding_table holds one per stripe, behind the stripe's lock; nothing
// here locks.
//
// The marks other parts keep per row (dirty_marks, clock_hand, flush_marks) are columns parallel
// to the slots (slot_column): when a row moves (erase's backward shift, grow's rehash), the index
// says where, and each column follows. Parallel columns keep a probe to 16 bytes a slot.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/hash.hpp"

namespace ss::embedding {

class row_index {
 public:
  struct slot {
    std::uint64_t key = 0;
    float* row = nullptr;  // nullptr when the slot is free
  };
  // In grow()'s answer: the old slot held no row.
  static constexpr std::uint32_t moved_nowhere = ~std::uint32_t{0};
  static constexpr std::size_t first_slots = 16;

  row_index() : slots_(first_slots) { publish_home(); }
  row_index(const row_index&) = delete;
  row_index& operator=(const row_index&) = delete;

  // Slots (a power of two), and the rows they hold.
  std::size_t size() const { return slots_.size(); }
  std::size_t used() const { return used_; }
  const slot& operator[](std::size_t i) const { return slots_[i]; }
  float* row(std::size_t i) const { return slots_[i].row; }
  std::uint64_t key(std::size_t i) const { return slots_[i].key; }
  bool occupied(std::size_t i) const { return slots_[i].row != nullptr; }
  const std::vector<slot>& slots() const { return slots_; }

  // The slot of `id` (hash = mix64(id)): where its row is, or the free slot where it would go.
  std::size_t probe(std::uint64_t id, std::uint64_t hash) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = hash & mask;
    while (slots_[i].row != nullptr && slots_[i].key != id) i = (i + 1) & mask;
    return i;
  }
  std::size_t probe(std::uint64_t id) const { return probe(id, mix64(id)); }
  // Fetches towards the cache the slot where a probe for `hash` starts, ahead of the probe. Safe
  // without the stripe's lock (a batch prefetches the next ids of other stripes too): the slots'
  // address and mask are published as atomics on every growth; a stale pair only wastes the
  // prefetch, which never faults.
  void prefetch_home(std::uint64_t hash) const {
    const std::uintptr_t at = home_base_.load(std::memory_order_relaxed) +
                              (hash & home_mask_.load(std::memory_order_relaxed)) * sizeof(slot);
    __builtin_prefetch(reinterpret_cast<const void*>(at));
  }

  // Puts `row` for `id` in free slot i (from probe). True when the index is now past its load
  // factor and must grow() before the next probe.
  bool place(std::size_t i, std::uint64_t id, float* row) {
    slots_[i] = slot{id, row};
    return ++used_ * 10 > slots_.size() * 7;
  }

  // Doubles the slots, rehashing every row. Returns, per old slot, the slot its row moved to
  // (moved_nowhere for a free one), for the parallel columns to follow (slot_column::follow).
  std::vector<std::uint32_t> grow();

  // Frees slot i. Backward-shift deletion keeps every probe sequence unbroken: a later row of the
  // run moves into the hole unless its home slot lies after the hole (cyclically), where a probe
  // for it would stop before reaching the hole. Calls shifted(from, to) for each row moved, and
  // returns the slot left free at the end, which the columns clear.
  template <class Shifted>
  std::size_t erase(std::size_t i, Shifted&& shifted) {
    --used_;
    const std::size_t mask = slots_.size() - 1;
    std::size_t hole = i;
    for (std::size_t j = (hole + 1) & mask; slots_[j].row != nullptr; j = (j + 1) & mask) {
      const std::size_t home = mix64(slots_[j].key) & mask;
      const bool reachable = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (reachable) continue;
      slots_[hole] = slots_[j];
      shifted(j, hole);
      hole = j;
    }
    slots_[hole] = slot{};
    return hole;
  }

 private:
  void publish_home() {
    home_base_.store(reinterpret_cast<std::uintptr_t>(slots_.data()), std::memory_order_relaxed);
    home_mask_.store(slots_.size() - 1, std::memory_order_relaxed);
  }

  std::vector<slot> slots_;
  std::size_t used_ = 0;
  std::atomic<std::uintptr_t> home_base_{0};
  std::atomic<std::size_t> home_mask_{0};
};

// A mark per slot of a row_index, moved with the rows. An empty column (never assigned) is one a
// table does not keep (a table without a budget keeps no CLOCK marks): follow leaves it empty.
template <class T>
class slot_column {
 public:
  void assign(std::size_t slots) { values_.assign(slots, T{}); }
  bool kept() const { return !values_.empty(); }
  T& operator[](std::size_t i) { return values_[i]; }
  const T& operator[](std::size_t i) const { return values_[i]; }
  // A row moved from slot `from` to slot `to` (row_index::erase).
  void move(std::size_t from, std::size_t to) { values_[to] = values_[from]; }
  // Slot i holds no row any more.
  void vacate(std::size_t i) { values_[i] = T{}; }
  // The index grew (doubled); moved_to is row_index::grow's answer.
  void follow(const std::vector<std::uint32_t>& moved_to) {
    if (values_.empty()) return;
    std::vector<T> bigger(2 * moved_to.size(), T{});
    for (std::size_t j = 0; j < moved_to.size(); ++j)
      if (moved_to[j] != row_index::moved_nowhere) bigger[moved_to[j]] = values_[j];
    values_.swap(bigger);
  }

 private:
  std::vector<T> values_;
};

}  // namespace ss::embedding
