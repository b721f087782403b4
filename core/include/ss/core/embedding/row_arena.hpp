// The memory of one stripe's rows: chunks that double in size (16 rows, then up to 4,096), so
// that small tables stay small, and that never move, so that a row's pointer stays valid while
// the row lives. A row that leaves (eviction, a drop for good) gives its memory to the next new
// row. Behind the stripe's lock; nothing here locks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace ss::embedding {

// Brings the first `bytes` of a row towards the cache, a line at a time, ahead of its use: rows lie
// at random in memory, a miss each, which work on other rows then overlaps. `for_write`: the row
// is about to be updated.
inline void prefetch_row(const float* row, std::size_t bytes, bool for_write) {
  const char* p = reinterpret_cast<const char*>(row);
  for (std::size_t line = 0; line < bytes; line += 64) {
    if (for_write) __builtin_prefetch(p + line, 1);
    else __builtin_prefetch(p + line, 0);
  }
}

class row_arena {
 public:
  static constexpr std::size_t first_chunk_rows = 16;
  static constexpr std::size_t max_chunk_rows = 4096;

  // Every row of an arena has `row_floats` floats.
  explicit row_arena(std::size_t row_floats = 0) : floats_(row_floats) {}
  void set_row_floats(std::size_t row_floats) { floats_ = row_floats; }

  // Memory for one row, its values unset: a released row's, else the next of the newest chunk.
  float* allocate() {
    if (!free_.empty()) {
      float* row = free_.back();
      free_.pop_back();
      return row;
    }
    if (chunk_used_ == chunk_rows_) {
      chunk_rows_ = chunks_.empty() ? first_chunk_rows : std::min(chunk_rows_ * 2, max_chunk_rows);
      chunks_.emplace_back(new float[chunk_rows_ * floats_]);
      chunk_used_ = 0;
      allocated_floats_ += chunk_rows_ * floats_;
    }
    return chunks_.back().get() + chunk_used_++ * floats_;
  }
  // The row's memory is free for the next allocate().
  void release(float* row) { free_.push_back(row); }

  // Floats held in chunks (rows in use and free ones alike).
  std::size_t allocated_floats() const { return allocated_floats_; }
  std::size_t free_rows() const { return free_.size(); }

 private:
  std::size_t floats_;
  std::vector<std::unique_ptr<float[]>> chunks_;
  std::size_t chunk_rows_ = 0;  // capacity of the newest chunk, in rows
  std::size_t chunk_used_ = 0;  // rows taken from the newest chunk
  std::size_t allocated_floats_ = 0;
  std::vector<float*> free_;
};

}  // namespace ss::embedding
