// Rows a stripe gave up for good (a full table's eviction, an expired row) whose stored copy may
// still exist: storage deletes each at the flush that takes it, and until that flush is stored a
// stored copy read back counts as absent, so a lookup never brings a dropped row back. Behind the
// stripe's lock; nothing here locks. The table adds up the deletions no flush took yet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ss::embedding {

class dropped_rows {
 public:
  bool empty() const { return flush_of_.empty(); }
  std::size_t size() const { return flush_of_.size(); }

  // `id` is dropped (again): its deletion waits for the next take. True when it was not waiting
  // already (one more untaken deletion).
  bool drop(std::uint64_t id) {
    auto [entry, inserted] = flush_of_.try_emplace(id, 0);
    const bool untaken_now = inserted || entry->second != 0;
    entry->second = 0;
    return untaken_now;
  }
  // Whether a stored copy of `id` counts as absent: dropped, and the deletion not stored yet
  // (`flushed`: the newest flush generation stored).
  bool hides(std::uint64_t id, std::uint32_t flushed) const {
    if (flush_of_.empty()) return false;
    const auto it = flush_of_.find(id);
    return it != flush_of_.end() && (it->second == 0 || it->second > flushed);
  }
  // `id` gets a row anew: its stored copy will be overwritten, nothing to delete. True when its
  // deletion was still untaken (one untaken deletion fewer).
  bool revive(std::uint64_t id) {
    if (flush_of_.empty()) return false;
    const auto it = flush_of_.find(id);
    if (it == flush_of_.end()) return false;
    const bool untaken = it->second == 0;
    flush_of_.erase(it);
    return untaken;
  }
  // Hands every untaken deletion to flush generation `flush` (their ids appended to `erased`) and
  // forgets those whose flush is stored (`flushed`). Returns how many were handed.
  std::size_t take(std::uint32_t flush, std::uint32_t flushed, std::vector<std::uint64_t>& erased) {
    std::size_t handed = 0;
    for (auto it = flush_of_.begin(); it != flush_of_.end();) {
      if (it->second == 0) {
        it->second = flush;
        erased.push_back(it->first);
        ++handed;
      } else if (it->second <= flushed) {
        it = flush_of_.erase(it);  // its deletion is stored
        continue;
      }
      ++it;
    }
    return handed;
  }

 private:
  // id -> the flush generation that took its deletion (0: none yet).
  std::unordered_map<std::uint64_t, std::uint32_t> flush_of_;
};

}  // namespace ss::embedding
