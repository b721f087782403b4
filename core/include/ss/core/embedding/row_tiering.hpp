// Tiering: rows beyond a memory budget live in the shard's storage (the cold tier) and are read
// back on a miss. What a table needs for it, besides the CLOCK hand (row_eviction.hpp):
//  - row_budget: the shard's budget and counters, shared by its tables;
//  - flush_marks: per row, the flush generation that last took it, so that only a row storage
//    holds as it is may go;
//  - eviction_memory: per stripe, the last keys evicted, so that a miss can tell whether the row
//    it read from storage may have been written again since.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "ss/core/embedding/row_index.hpp"
#include "ss/core/status.hpp"

namespace ss::embedding {

// A shard's memory budget: how many rows all its tables together keep in RAM (the hot tier); the
// others live only in the shard's storage (the cold tier) and are read back on a miss. Shared by
// the tables of one shard_store. Counters are totals since the store was made.
//
// Eviction (clock_hand) takes only a row that storage holds as it is: not changed since a flush
// last took it, nor taken by a flush whose writes have not all succeeded. When no row of the
// stripe qualifies (all new or changed, waiting for the next flush), the new row comes in anyway
// and `over_budget` counts it: the budget is a target the flusher brings RAM back to, never a
// reason to refuse a lookup. The shard's persister flushes early once RAM is past the budget by
// its slack (under_pressure), so that the overshoot lasts a flush, not a flush interval. On a
// loaded machine that flush runs late, and training would fill RAM meanwhile: past twice the
// budget (past_ceiling) a batch waits for the next flush to be stored first (wait_for_flush),
// which makes rows evictable again, so that RAM stays near twice the budget however slow the
// persister is.
//
// A shard whose tables may lose rows for good (a full table's eviction, table_options::
// evict_when_full) has one too, with max_rows = unlimited when there is no memory budget: what it
// brings is that rows are only ever used under their stripe's lock (visit_tiered), and the CLOCK
// marks and flush generations that eviction goes by.
struct row_budget {
  static constexpr std::uint64_t unlimited = ~std::uint64_t{0};
  std::uint64_t max_rows = 0;
  std::atomic<std::uint64_t> resident{0}, peak_resident{0};
  std::atomic<std::uint64_t> hits{0}, misses{0}, loaded{0}, evictions{0}, over_budget{0};
  // Rows read from the cold tier ahead of their lookup (warm_tiered), and hinted rows not read
  // because RAM was full of rows that may not go yet.
  std::atomic<std::uint64_t> warmed{0}, warm_skipped{0};
  // Rows full tables evicted for good (evict_when_full), to make room for new ones.
  std::atomic<std::uint64_t> table_evictions{0};
  // Row TTL (row_ttl.hpp; tables with a touch slot): the clock rows are touched at, the TTL in
  // its ticks (0: none), and the rows deleted for having expired.
  std::atomic<std::uint32_t> now{0};
  std::uint32_t ttl = 0;
  std::atomic<std::uint64_t> expired{0};
  // Batches that touched rows (training's lookups and pushes): a sweep expires nothing while none
  // came since the last, so a job that scores or exports keeps the model it trained.
  std::atomic<std::uint64_t> touching_batches{0};
  // Flush generations: a row taken by flush g may be evicted once flush g wrote everything. After
  // a failed flush its rows may be missing from storage: nothing is evicted any more.
  std::atomic<std::uint32_t> taking{0}, flushed{0};
  std::atomic<bool> flush_failed{false};
  // Batches that waited for a flush at the ceiling, and how long they waited in all.
  std::atomic<std::uint64_t> flush_waits{0}, flush_wait_us{0};
  // Delta publishing started (a base cleared the publisher marks): from then on a row that leaves
  // RAM marked, or is given up for good, is remembered for the publisher's next take, so that the
  // delta names it (its values from storage, or a tombstone). Before the first base nothing is
  // remembered: a job that does not publish keeps no such list.
  std::atomic<bool> publishing{false};
  // A live reshard copies rows from this shard while it trains: a row that leaves RAM marked for
  // the move (changed since its copy) is remembered (embedding_table::moved_out), since the mark
  // leaves with it, and so is every row given up for good (the copy may have carried it: the move
  // under the hold says it is gone). Off (and the lists cleared) when no reshard is under way.
  std::atomic<bool> tracking_moves{false};

  // RAM holds more rows than the budget plus a sixteenth: the changed rows that may not go are
  // piling up, and a flush now would let them go.
  bool under_pressure() const {
    return max_rows != unlimited && resident.load(std::memory_order_relaxed) > max_rows + max_rows / 16;
  }
  // RAM holds twice the budget: a batch waits for a flush before it brings in more.
  bool past_ceiling() const {
    return max_rows != unlimited && resident.load(std::memory_order_relaxed) >= 2 * max_rows;
  }
  // Flush g wrote all it took (its rows may be evicted now), or a flush failed; wakes the waiters.
  void flush_stored(std::uint32_t g, bool failed = false) {
    {
      std::lock_guard<std::mutex> lock(flush_mu_);
      if (failed) flush_failed.store(true, std::memory_order_release);
      else flushed.store(g, std::memory_order_release);
    }
    flush_done_.notify_all();
  }
  // Waits until a flush is stored after the call (or one failed), for at most max_wait: a stalled
  // persister slows training but never stops it.
  void wait_for_flush(std::chrono::milliseconds max_wait) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(flush_mu_);
    const std::uint32_t then = flushed.load(std::memory_order_acquire);
    flush_done_.wait_for(lock, max_wait, [&] {
      return flushed.load(std::memory_order_acquire) != then || flush_failed.load(std::memory_order_acquire);
    });
    lock.unlock();
    flush_waits.fetch_add(1, std::memory_order_relaxed);
    const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    flush_wait_us.fetch_add(static_cast<std::uint64_t>(waited.count()), std::memory_order_relaxed);
  }
  // One more row in RAM; keeps the peak.
  void came_in() {
    const std::uint64_t now_resident = resident.fetch_add(1, std::memory_order_relaxed) + 1;
    std::uint64_t peak = peak_resident.load(std::memory_order_relaxed);
    while (now_resident > peak &&
           !peak_resident.compare_exchange_weak(peak, now_resident, std::memory_order_relaxed)) {
    }
  }
  bool full() const { return resident.load(std::memory_order_relaxed) >= max_rows; }

 private:
  std::mutex flush_mu_;
  std::condition_variable flush_done_;
};

// Reads n rows of one table from the cold tier: found[i] = 1 and row i's row_floats() values in
// rows when stored, else found[i] = 0.
using row_loader = std::function<status(const std::uint64_t* ids, std::size_t n, float* rows, std::uint8_t* found)>;

// Per row in RAM: the flush generation that last took it (0: none yet). A row that is not dirty
// and was taken by a flush that storage finished holds nothing storage lacks: it may go.
class flush_marks {
 public:
  void assign(std::size_t slots) { taken_.assign(slots); }
  bool kept() const { return taken_.kept(); }

  void taken_by(std::size_t i, std::uint32_t flush) { taken_[i] = flush; }
  std::uint32_t taken(std::size_t i) const { return taken_[i]; }
  // Whether the last flush that took slot i's row is stored (`flushed`: the newest stored one).
  bool stored(std::size_t i, std::uint32_t flushed) const { return taken_[i] <= flushed; }

  // Following the index (row_index::erase, grow).
  void move(std::size_t from, std::size_t to) { taken_.move(from, to); }
  void vacate(std::size_t i) { taken_.vacate(i); }
  void follow(const std::vector<std::uint32_t>& moved_to) { taken_.follow(moved_to); }

 private:
  slot_column<std::uint32_t> taken_;
};

// The keys that left a stripe last: evicted, or dropped for good. A miss reads its row from
// storage outside the stripe's lock; if the row was in RAM meanwhile and got evicted (so written
// back since), or was dropped for good (so deleted, maybe before the read is looked at), what was
// read is stale: evicted_since says to read it again.
class eviction_memory {
 public:
  static constexpr std::size_t remembered = 64;

  void remember(std::uint64_t key) { keys_[count_++ % remembered] = key; }
  // Evictions since the stripe was made: what a miss notes before it reads.
  std::uint64_t count() const { return count_; }
  // Whether `key` was evicted since the count was `then`, or may have been (more evictions
  // happened than are remembered).
  bool evicted_since(std::uint64_t key, std::uint64_t then) const {
    if (count_ - then > remembered) return true;
    for (std::uint64_t k = then; k < count_; ++k)
      if (keys_[k % remembered] == key) return true;
    return false;
  }

 private:
  std::uint64_t count_ = 0;
  std::array<std::uint64_t, remembered> keys_{};  // keys_[k % remembered]: the k-th eviction's key
};

}  // namespace ss::embedding
