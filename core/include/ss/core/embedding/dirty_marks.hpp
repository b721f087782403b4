// Dirty tracking: which rows of a stripe changed (or were made) since storage last took them. A
// byte per index slot, moved with the rows (slot_column). A mark set under the stripe's lock and
// cleared by the take under the same lock is what makes an update and a flush exclusive: a stored
// row never misses an update whose call returned. The table adds up the marks it sets and clears
// (embedding_table::dirty_rows); nothing here locks or counts across stripes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ss/core/embedding/row_index.hpp"

namespace ss::embedding {

class dirty_marks {
 public:
  void assign(std::size_t slots) { marks_.assign(slots); }

  bool marked(std::size_t i) const { return marks_[i] != 0; }
  // Marks slot i's row changed; true when it was not marked yet (one more dirty row).
  bool mark(std::size_t i) {
    if (marks_[i] != 0) return false;
    marks_[i] = 1;
    return true;
  }
  // Clears slot i's mark (storage took the row); true when it was marked (one dirty row fewer).
  bool unmark(std::size_t i) {
    if (marks_[i] == 0) return false;
    marks_[i] = 0;
    return true;
  }

  // Following the index (row_index::erase, grow).
  void move(std::size_t from, std::size_t to) { marks_.move(from, to); }
  void vacate(std::size_t i) { marks_.vacate(i); }
  void follow(const std::vector<std::uint32_t>& moved_to) { marks_.follow(moved_to); }

 private:
  slot_column<std::uint8_t> marks_;
};

}  // namespace ss::embedding
