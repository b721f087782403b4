// The rows an embedding shard server holds: its hash partition of every table, with the sparse
// optimizer applied to pushed gradients. Tables are created as requests name them (a shard does
// not need to know the data schema), up to max_tables.
//
// With a memory budget (max_rows_in_memory), only the hot rows stay in RAM; the rest are in the
// shard's storage, read back on a miss (embedding_table::visit_tiered, row_budget).
//
// Thread-safety: lookup() and push() may run concurrently from any number of threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ss/core/embedding/durable_rows.hpp"
#include "ss/core/embedding/embedding_table.hpp"
#include "ss/core/embedding/row_layout.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/embedding/row_ttl.hpp"
#include "ss/core/optim/sparse_optimizer.hpp"
#include "ss/core/status.hpp"

namespace ss::embedding {

struct shard_store_options {
  std::uint32_t dim = 16;
  // The values' precision in RAM and storage (row_precision.hpp); lookups hand out FP32.
  row_precision precision = row_precision::fp32;
  float init_scale = 0.01f;
  std::uint64_t seed = 1;
  // 0 = unbounded. A table at it evicts a row for good (CLOCK, from both tiers) for each new one;
  // the evicted id comes back later with its initial values.
  std::uint64_t max_rows_per_table = 0;
  // A persister takes the changed rows (take_dirty) to storage: rows evicted for good are then
  // deleted there too. Implied by a cold tier.
  bool persisted = false;
  // Row TTL (row_ttl.hpp): rows not touched for this long are deleted by sweep_expired. Adds a
  // touch slot to every row (shard_row_floats).
  row_ttl ttl;
  std::uint32_t max_tables = 1024;
  optim::sparse_optimizer optimizer;
  // The memory budget, in rows kept in RAM by all tables (0: every row stays in RAM). With one,
  // `cold` is where the other rows are: the shard's storage, which the flusher keeps complete.
  std::uint64_t max_rows_in_memory = 0;
  std::shared_ptr<durable_rows> cold;
  // How long a lookup or push waits, with RAM at twice the budget, for the next flush to make rows
  // evictable (row_budget::past_ceiling); 0: it never waits (a store nothing flushes).
  std::chrono::milliseconds ceiling_wait{1000};
  // Id admission (admission.hpp): an id gets a row once seen admit_after times (1: at once),
  // counted in a sketch of admission_counters cells per row (4 rows of a byte each).
  std::uint32_t admit_after = 1;
  std::uint64_t admission_counters = std::uint64_t{1} << 22;
};

// 4-byte slots of a row as the shard keeps and stores it: values (at their precision), optimizer
// state, and with a row TTL its touch slot.
inline std::uint32_t shard_row_floats(const shard_store_options& o) {
  return value_slots(o.dim, o.precision) + o.optimizer.state_floats() + (o.ttl.enabled() ? 1 : 0);
}

// What a row's slots hold (row_layout.hpp), and that in words, e.g. "16 bf16 values, 1 fp32
// optimizer value, a TTL stamp": storage keeps it, and refuses to read rows of another layout as
// these.
row_layout shard_row_layout_of(const shard_store_options& o);
std::string shard_row_layout(const shard_store_options& o);

// What a row in RAM costs beyond its values and optimizer state: its index slot (16 bytes at a
// load factor of 0.35 to 0.7) and its tiering marks.
constexpr std::uint64_t row_overhead_bytes = 48;

// What one row in RAM costs a memory budget: row_floats x 4 + row_overhead_bytes.
constexpr std::uint64_t row_bytes_in_memory(std::uint32_t row_floats) {
  return std::uint64_t{row_floats} * sizeof(float) + row_overhead_bytes;
}

// The rows a memory budget of `bytes` holds.
constexpr std::uint64_t rows_in_budget(std::uint64_t bytes, std::uint32_t row_floats) {
  return bytes / row_bytes_in_memory(row_floats);
}

struct shard_store_stats {
  std::uint64_t rows = 0;   // in RAM
  std::uint64_t bytes = 0;  // RAM held by the rows and their index
  std::uint64_t tables = 0;
  // With a memory budget: the budget in rows, rows in the cold tier (what storage says: the shard's
  // storage estimates them, rows_held counts them), and the row_budget counters.
  std::uint64_t max_rows_in_memory = 0, rows_stored = 0, peak_rows_in_memory = 0;
  std::uint64_t hits = 0, misses = 0, loaded = 0, evictions = 0, over_budget = 0;
  // Lookups and pushes that waited for a flush with RAM at twice the budget, and their wait.
  std::uint64_t flush_waits = 0;
  double flush_wait_seconds = 0;
  // Prefetch hints (warm): rows read into RAM ahead of their lookup, and rows left in storage
  // for want of room.
  std::uint64_t warmed = 0, warm_skipped = 0;
  // With admission (admit_after > 1): K, the sketch's bytes, lookups served without a row,
  // gradients dropped for want of one, rows admitted.
  std::uint64_t admit_after = 1, admission_bytes = 0;
  std::uint64_t admission_refused = 0, gradients_dropped = 0, admissions = 0;
  // Rows full tables (max_rows_per_table) evicted for good, and rows of every table in both tiers.
  std::uint64_t table_evictions = 0, rows_held = 0;
  // Row TTL: rows deleted for having expired, and the clock (examples or unix seconds, mod 2^32).
  std::uint64_t rows_expired = 0, ttl_clock_now = 0;
  // Hits over hits and misses; 1 before the first.
  double hit_rate() const {
    return hits + misses > 0 ? static_cast<double>(hits) / static_cast<double>(hits + misses) : 1.0;
  }
};

class shard_store {
 public:
  explicit shard_store(const shard_store_options& options);

  const shard_store_options& options() const { return options_; }

  // values gets n x dim floats (decoded from the rows' precision): the rows of (tables[i], ids[i]), created on first touch when
  // `create` (with admission: on the admit_after-th), else read as their initial values without
  // being stored.
  status lookup(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, bool create, float* values);
  // Applies n x dim gradients with the sparse optimizer, rounding 16-bit rows stochastically
  // (seeded by options().seed and the push's number) (a row that does not exist yet, e.g.
  // after a restart without a checkpoint, is created first; with admission, only for an id
  // admitted already: the others' gradients are dropped and counted).
  status push(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, const float* grads,
              float lr_scale = 1.0f);
  // A prefetch hint: with a memory budget, reads the rows of (tables[i], ids[i]) that are only in
  // storage into RAM (embedding_table::warm_tiered); returns how many. Without one: 0, nothing to do.
  result<std::size_t> warm(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n);
  // With a memory budget: evicts rows that may go (stored as they are) until RAM is within the
  // budget, spread over every table's stripes; returns how many went. The persister calls it
  // after each flush, which is what makes changed rows evictable. Without a budget: 0.
  std::uint64_t shrink_to_budget();
  // With a memory budget and max_rows_per_table: brings every table back to its limit by dropping
  // stored rows that are out of RAM for good, in key order from where the last trim stopped
  // (rows in RAM only when none is left), for the next take_dirty to delete. Returns how many.
  // One thread (the persister's), before a flush.
  result<std::uint64_t> trim_full_tables();
  // Row TTL: the clock rows are touched at. An examples clock advances by the examples of each
  // training lookup (advance_clock); a seconds clock is set from the wall clock (set_clock).
  void advance_clock(std::uint32_t ticks);
  void set_clock(std::uint32_t now);
  std::uint32_t clock() const;
  // What the shard tells the clock, which takes what its TTL counts: a training lookup's batch
  // size (an examples clock advances by it), the wall clock in unix seconds (a seconds clock is
  // set to it, modulo 2^32). Either is ignored by the other kind of TTL, and without one.
  void count_examples(std::uint32_t examples);
  void read_wall_clock(std::uint64_t unix_seconds);
  // Row TTL: deletes every row not touched for longer than the TTL: those in RAM, then with a
  // memory budget up to `max_stored` stored rows read from storage, from where the last sweep
  // stopped (those out of RAM that expired are dropped; storage deletes them at the next flush).
  // Returns how many expired. Nothing while no training lookup or push came since the last sweep
  // (the job scores, exports or waits: its model stays as trained). One thread (the
  // persister's), before a flush.
  result<std::uint64_t> sweep_expired(std::size_t max_stored);
  // With a memory budget: RAM is past the budget by its slack (row_budget::under_pressure), so a
  // flush now would let changed rows go.
  bool under_pressure() const { return tiered() && budget_->under_pressure(); }

  // The table, created if needed; nullptr beyond max_tables.
  embedding_table* table(std::uint32_t t);
  // The table if it exists, else nullptr.
  const embedding_table* existing_table(std::uint32_t t) const;
  embedding_table* existing_table(std::uint32_t t);
  shard_store_stats stats() const;

  // Persistence. Lookups that create rows and pushes mark the rows dirty; take_dirty hands them over (values and
  // optimizer state, row_floats() each) one stripe of one table per call, clearing the marks:
  // calls fn(table, ids, rows, n) until every dirty row was handed over. Runs concurrently with
  // lookups and pushes; each stripe's lock is held only while its rows are copied.
  using dirty_sink = std::function<status(std::uint32_t table, const std::uint64_t* ids, const float* rows,
                                          std::size_t n)>;
  // And the ids full tables evicted for good since the last take: erase(table, ids, n), for
  // storage to delete. No id is handed to both in one take, so the order does not matter.
  using erase_sink = std::function<status(std::uint32_t table, const std::uint64_t* ids, std::size_t n)>;
  // With a memory budget, rows it hands over may be evicted once every call of fn succeeded; after
  // a failed one, no row is evicted any more (storage may lack it).
  status take_dirty(const dirty_sink& fn, const erase_sink& erase);
  // With a memory budget and RAM past it: writes back (through fn, like take_dirty) the changed
  // rows that eviction would take next (embedding_table::take_victims), enough of them to bring
  // RAM a sixteenth under the budget, then evicts down to the budget (shrink_to_budget). What a
  // full RAM costs is then a write per row evicted, not a write of every row changed since the
  // last flush. Returns the rows written, or fn's error (after which nothing is evicted any more).
  result<std::uint64_t> write_back(const dirty_sink& fn);
  std::uint64_t dirty_rows() const;
  // Sets a row to exactly `row` (row_floats() values): restoring from storage. Not marked dirty.
  status put(std::uint32_t table, std::uint64_t id, const float* row);
  // A row that storage holds and that restoring leaves there (a tiered shard keeps only what fits
  // its budget in RAM): counted among its table's rows, for max_rows_per_table.
  status count_stored(std::uint32_t table);
  // Rows moved to another shard (the job took another shard count; embedding_table::forget_moved):
  // gone from RAM where they are; storage is the caller's. Then, with a memory budget, `held` gives
  // each table's rows left in both tiers (what storage holds once flushed), by table.
  void forget_moved(std::uint32_t table, std::uint64_t id);
  // Rows that moved here from another shard (n whole rows): with a row TTL in examples, each shard
  // counts its own examples, so a row stamped by a shard whose clock ran ahead of this one's would
  // look aged by 2^32 and expire at once. The clock moves up to the newest stamp ahead of it
  // (this shard's own rows then age by that much sooner: by the spread of the shards' clocks).
  void catch_up_clock(const float* rows, std::size_t n);
  void set_held(const std::vector<std::uint64_t>& held);
  // A live reshard copies rows from this shard (on), or none does (off): every table with a budget
  // remembers, or forgets, the rows that leave RAM marked for the move and those given up for good
  // (embedding_table::track_moves).
  void track_moves(bool on);
  std::uint32_t row_floats() const { return shard_row_floats(options_); }
  // Whether rows live in two tiers (a memory budget over storage): the rows in RAM are then not
  // all the rows; restore leaves them in storage, export reads them from there.
  bool tiered() const { return tiered_; }
  // Delta publishing (publish_staging): a base starts. Clears every publisher mark; from now on,
  // where rows leave RAM (a memory budget, a row limit, a TTL), the ones that leave marked or for
  // good are remembered for the next take (embedding_table::take_published).
  void clear_published();
  // The values of table t's rows `ids` as a publication sends them, wherever they are now
  // (embedding_table::read_published): present[i] = 0 for a row the shard no longer holds. A table
  // that does not exist holds none.
  status read_published(std::uint32_t t, const std::uint64_t* ids, std::size_t n, float* values,
                        std::uint8_t* present) const;

 private:
  // With RAM at twice the budget: waits for the next flush (shard_store_options::ceiling_wait).
  void wait_below_ceiling();
  status check_tables(const std::uint32_t* tables, std::size_t n) const;
  // Checks a request's tables, groups its rows by table (this thread's scratch) and calls
  // fn(t, begin, count) for each table t with rows: positions begin .. begin + count of the
  // grouping. Stops at fn's first error. What lookup, push and warm share.
  template <class Fn>
  status by_table(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, Fn&& fn);
  // The tables that exist, with their numbers.
  std::vector<std::pair<std::uint32_t, embedding_table*>> live_tables() const;
  // Table t's rows read back from the cold tier.
  row_loader loader(std::uint32_t t) const;

  shard_store_options options_;
  // Set with a memory budget, or with max_rows_per_table (rows may then leave RAM for good: every
  // row is used under its lock, embedding_table::visit_tiered). max_rows unlimited without a budget.
  std::shared_ptr<row_budget> budget_;
  bool tiered_ = false;  // a memory budget over `cold`
  std::vector<std::uint64_t> trim_from_;  // per table: the id trim_full_tables goes on from
  std::uint64_t swept_after_ = 0;         // row_budget::touching_batches at the last sweep
  std::uint32_t sweep_table_ = 0;         // where sweep_expired goes on from in storage
  std::uint64_t sweep_id_ = 0;
  std::shared_ptr<admission_filter> admission_;  // set with admit_after > 1
  std::atomic<std::uint64_t> pushes_{0};          // numbers each push's stochastic rounding
  mutable std::mutex tables_mu_;
  std::vector<std::unique_ptr<embedding_table>> tables_;  // index = table; grows, never shrinks
  std::vector<std::atomic<embedding_table*>> fast_;       // lock-free read path to tables_
};

}  // namespace ss::embedding
