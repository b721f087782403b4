// Dirty tracking: which rows of a stripe changed (or were made) since storage last took them,
// since the publisher last took them (delta publishing), and since a live reshard copied them to
// their next owner (the copy clears that mark), one bit each in a byte per index slot,
// moved with the rows (slot_column). A mark set under the stripe's lock and cleared by the take
// under the same lock is what makes an update and a flush (or a publish) exclusive: a stored or
// published row never misses an update whose call returned. The table adds up the storage marks
// it sets and clears (embedding_table::dirty_rows); nothing here locks or counts across stripes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/embedding/row_index.hpp"

namespace ss::embedding {

class dirty_marks {
 public:
  void assign(std::size_t slots) { marks_.assign(slots); }

  // Changed since storage took it.
  bool marked(std::size_t i) const { return (marks_[i] & for_storage) != 0; }
  // Marks slot i's row changed, for storage, the publisher and a reshard's copy; true when
  // storage's mark was not set yet (one more dirty row).
  bool mark(std::size_t i) {
    const bool was = marked(i);
    marks_[i] = for_storage | for_publisher | for_move;
    return !was;
  }
  // Brings slot i's mark towards the cache ahead of mark(i): an update's marks fall at random in
  // an array of a byte per row, one cache miss each, which the row's update then overlaps.
  void prefetch(std::size_t i) const { __builtin_prefetch(&marks_[i], 1); }
  // Clears slot i's storage mark (storage took the row); true when it was set (one dirty row fewer).
  bool unmark(std::size_t i) {
    if (!marked(i)) return false;
    marks_[i] = static_cast<std::uint8_t>(marks_[i] & ~for_storage);
    return true;
  }

  // Changed since the publisher took it.
  bool marked_for_publisher(std::size_t i) const { return (marks_[i] & for_publisher) != 0; }
  // Clears slot i's publisher mark; true when it was set.
  bool unmark_for_publisher(std::size_t i) {
    if (!marked_for_publisher(i)) return false;
    marks_[i] = static_cast<std::uint8_t>(marks_[i] & ~for_publisher);
    return true;
  }

  // Changed since a live reshard copied it (or never copied): the copy under the hold takes it.
  bool marked_for_move(std::size_t i) const { return (marks_[i] & for_move) != 0; }
  // The reshard's copy took slot i's row as it stands.
  void unmark_for_move(std::size_t i) { marks_[i] = static_cast<std::uint8_t>(marks_[i] & ~for_move); }
  // Marks slot i's row for a reshard's copy alone (a copy begins: every row is to be copied).
  void mark_for_move(std::size_t i) { marks_[i] = static_cast<std::uint8_t>(marks_[i] | for_move); }

  // Following the index (row_index::erase, grow).
  void move(std::size_t from, std::size_t to) { marks_.move(from, to); }
  void vacate(std::size_t i) { marks_.vacate(i); }
  void follow(const std::vector<std::uint32_t>& moved_to) { marks_.follow(moved_to); }

 private:
  static constexpr std::uint8_t for_storage = 1, for_publisher = 2, for_move = 4;
  slot_column<std::uint8_t> marks_;
};

}  // namespace ss::embedding
