// One embedding table: rows keyed by a 64-bit id, created on first touch with deterministic
// values, stored with their optimizer state. Used by the single-process trainer (all tables in
// one process) and by the embedding shard server (its hash partition of every table).
//
// Thread-safety: every member may be called concurrently. The id -> row index is split into
// stripes, each behind its own mutex; row memory never moves once created, so the pointer a
// lookup returns stays valid for the table's lifetime. Writes through that pointer are not
// synchronized: concurrent updates of one row race on floats, which is Hogwild by design.
//
// Lookups are memory-latency bound on big tables, so the batch calls sort the ids by stripe,
// take each stripe's lock once, and prefetch index slots ahead of probing them.
//
// Each stripe composes one part per concern, each in its own header: the index (row_index) and
// the rows' memory (row_arena); dirty tracking (dirty_marks); eviction (clock_hand,
// row_eviction.hpp); tiering (row_budget, flush_marks, eviction_memory: row_tiering.hpp); rows
// dropped for good (dropped_rows); a row's TTL touch (row_touch, row_ttl.hpp). This class ties
// them together under the stripe's lock (docs/embeddings.md, "How the table is built").
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "ss/core/embedding/admission.hpp"
#include "ss/core/embedding/dirty_marks.hpp"
#include "ss/core/embedding/dropped_rows.hpp"
#include "ss/core/embedding/row_arena.hpp"
#include "ss/core/embedding/row_eviction.hpp"
#include "ss/core/embedding/row_index.hpp"
#include "ss/core/embedding/row_precision.hpp"
#include "ss/core/embedding/row_tiering.hpp"
#include "ss/core/embedding/row_ttl.hpp"
#include "ss/core/status.hpp"

namespace ss::embedding {

struct table_options {
  std::uint32_t table = 0;         // index of this table (categorical feature) in the model
  std::uint32_t dim = 16;          // values per row
  // The values' precision: they take value_slots(dim, precision) 4-byte slots (row_precision.hpp).
  row_precision precision = row_precision::fp32;
  std::uint32_t state_floats = 0;  // optimizer state per row, stored after the values
  float init_scale = 0.01f;        // new rows are uniform in [-init_scale, init_scale)
  std::uint64_t seed = 1;          // with (table, id), fixes a new row's values everywhere
  // 0 = unbounded. With a budget, counts the table's rows in both tiers (held_rows()). At it, a new
  // row is refused (find_or_create returns nullptr), or with evict_when_full takes the place of a
  // row the CLOCK hand picks, which is dropped for good: from RAM now, from storage by the next
  // flush (take_dirty's `erased`); that id comes back with its initial values. With a memory
  // budget (a cold tier), the new row comes in over the limit instead, and the shard gives up
  // cold rows at its next flush (drop_if_cold): any row out of RAM was used less recently than
  // every row in it.
  std::uint64_t max_rows = 0;
  bool evict_when_full = false;        // needs a budget: rows are then only used under their lock
  bool persisted = false;              // take_dirty's caller stores the rows: drops get deleted
  // Row TTL: each row ends with one more slot, its last touch (row_ttl.hpp), set from budget->now
  // by every visit that may create or change it. Needs a budget.
  bool touch_slot = false;
  std::shared_ptr<row_budget> budget;  // none: every row stays in RAM
  // --admit-after: a lookup that would create a row counts a sighting and creates it only once
  // the id was seen K times (else the caller gets no row: initial values, not stored); a push
  // to an id without a row is dropped until then. None: every id gets a row at once.
  std::shared_ptr<admission_filter> admission;
};

// Table `t`'s options in a store of several tables (local_embeddings, shard_store): both options
// structs name dim, init_scale, seed, max_rows_per_table and the sparse optimizer alike.
template <class StoreOptions>
table_options options_of_table(const StoreOptions& store, std::uint32_t t) {
  table_options o;
  o.table = t;
  o.dim = store.dim;
  o.precision = store.precision;
  o.state_floats = store.optimizer.state_floats();
  o.init_scale = store.init_scale;
  o.seed = store.seed;
  o.max_rows = store.max_rows_per_table;
  return o;
}

// The row of (table, id) as it starts (row_floats() slots), identical in every process that creates it.
void init_row(const table_options& options, std::uint64_t id, float* row);

class embedding_table {
 public:
  explicit embedding_table(const table_options& options);
  embedding_table(const embedding_table&) = delete;
  embedding_table& operator=(const embedding_table&) = delete;

  const table_options& options() const { return options_; }
  // 4-byte slots per row: the values at their precision, the optimizer state, the touch slot.
  std::uint32_t row_floats() const {
    return value_slots(options_.dim, options_.precision) + options_.state_floats + (options_.touch_slot ? 1 : 0);
  }

  // The row of `id`, created with init_row() if absent. nullptr only when max_rows is reached.
  float* find_or_create(std::uint64_t id);
  // The row of `id`, or nullptr.
  float* find(std::uint64_t id);
  const float* find(std::uint64_t id) const;
  // Batch forms: rows[i] for ids[i]. find_or_create_batch returns how many rows could not be
  // created (max_rows reached; their pointers are nullptr); an id not admitted yet
  // (options().admission) also gets nullptr, not counted there. `scratch` is reusable memory.
  struct batch_scratch {
    std::vector<std::uint32_t> order;
    std::vector<std::uint64_t> hashes;
    std::array<std::uint32_t, 65> starts{};
    // visit_tiered: the rows still to visit (positions, ids, their stripe's evictions when they
    // were seen out of RAM, where their row read from the cold tier is) and what it held.
    std::vector<std::uint32_t> pending, slot_of;
    std::vector<std::uint64_t> pending_ids, evictions_then;
    std::vector<float> loaded, fresh_row;  // fresh_row: a row dropped for good when seen starts anew
    std::vector<std::uint8_t> found;
    // update_batch: each position's row and index slot, found before any row is updated.
    std::vector<float*> rows;
    std::vector<std::size_t> slots;
  };
  std::size_t find_or_create_batch(const std::uint64_t* ids, std::size_t n, float** rows, batch_scratch& scratch);
  void find_batch(const std::uint64_t* ids, std::size_t n, float** rows, batch_scratch& scratch);

  // Updates rows in place: for each i, finds or creates the row of ids[i] and calls
  // update(context, row, i) under the row's stripe lock, then marks the row dirty. Holding the
  // lock makes an update and take_dirty() exclusive, so a persisted row is never missing an
  // update whose call returned. Returns how many rows could not be created (max_rows). An id
  // without a row that is not admitted (options().admission) is skipped: its update is dropped.
  using row_update = void (*)(void* context, float* row, std::size_t i);
  std::size_t update_batch(const std::uint64_t* ids, std::size_t n, row_update update, void* context,
                           batch_scratch& scratch);

  // With a budget (options().budget), the calls above that hand out row pointers must not be
  // used: a row may be evicted, and its memory reused, once its stripe's lock is released. This
  // one visits each row under its lock instead, in RAM or not: for every ids[i], calls
  // visit(context, row, i) with the row's row_floats() values, which are
  //  - the row in RAM, if it is there;
  //  - else the row read back from the cold tier by `load` (one call for all of a batch's misses,
  //    outside the locks), kept in RAM when `create`;
  //  - else, when storage has none either, a new row (init_row()), kept and marked for the next
  //    flush when `create`; without `create`, neither is kept and `row` is a scratch copy. With
  //    admission, such an id counts a sighting and the row is kept only once it is admitted; a
  //    push (`changes`) to an id that is not is dropped (not visited).
  // `changes`: the visit changes the row (a push), which marks it for the next flush; no row is
  // visited before the batch's misses were read, so that a failed read changes nothing (unless a
  // row evicted during the call must be read again and that read fails). Returns how many rows
  // could not be created (max_rows), or load's error.
  result<std::size_t> visit_tiered(const std::uint64_t* ids, std::size_t n, bool create, bool changes,
                                   const row_loader& load, row_update visit, void* context, batch_scratch& scratch);

  // A prefetch hint (with a budget): reads the rows of `ids` that are only in the cold tier (one
  // `load` call, outside the locks) and places them in RAM, as a miss would, so that the lookup
  // that follows finds them there. Creates no row, counts no sighting, changes no value, and never
  // pushes RAM past the budget: where no row may be evicted for it, a row is left in storage
  // (row_budget::warm_skipped). Nor places a row evicted meanwhile (storage may have a newer
  // version than the one read). Returns how many rows it placed, or load's error.
  result<std::size_t> warm_tiered(const std::uint64_t* ids, std::size_t n, const row_loader& load,
                                  batch_scratch& scratch);

  // The rows created (find_or_create_batch) or changed (update_batch) since they were last taken: appends their ids to `ids`
  // and copies of their row_floats() values to `rows`, for stripe `stripe` (0 <= stripe <
  // stripe_count), clearing their dirty marks. One stripe at a time keeps each lock short. With
  // a budget, `flush` is the flush generation taking them (row_budget::taking): they may be
  // evicted once row_budget::flushed reaches it. `erased` (may be null without evict_when_full)
  // gets the ids dropped for good since the last take, for storage to delete: never one of
  // `ids`, so the two may be applied in either order. Until flush `flush` is stored, a stored
  // copy of one of them read back counts as absent.
  std::size_t take_dirty(std::size_t stripe, std::vector<std::uint64_t>& ids, std::vector<float>& rows,
                         std::uint32_t flush = 0, std::vector<std::uint64_t>* erased = nullptr);
  // Delta publishing: the rows created or changed since the publisher last took them, for stripe
  // `stripe`: appends their ids to `ids`, clearing their publisher marks; returns how many. With a
  // budget, once publishing started (row_budget::publishing), also the rows that left RAM since
  // the last take marked (evicted: storage holds them) or for good (dropped, expired: the
  // publication gives a tombstone), each maybe more than once. The publisher reads their values
  // when it writes them (read_published), so a row changed meanwhile goes out as it stands then,
  // and again in the next take. Every row is marked until the first take or clear_published().
  std::size_t take_published(std::size_t stripe, std::vector<std::uint64_t>& ids);
  // Clears every publisher mark and the rows remembered as gone: a full copy (a published base)
  // starts now.
  void clear_published();
  // Delta publishing: the values (dim floats each, decoded, no optimizer state) of rows `ids` as they stand
  // now: in RAM, else (with a budget over a cold tier) as storage holds them. present[i] = 0 for
  // an id the table holds no row of (dropped for good, expired, never made): a tombstone. Changes,
  // touches and counts nothing. Returns load's error.
  status read_published(const std::uint64_t* ids, std::size_t n, const row_loader& load, float* values,
                        std::uint8_t* present) const;
  // With a budget: the next rows of stripe `stripe` that eviction would take, made ready to go.
  // Runs the CLOCK hand as eviction does (a row touched since it last passed gets a second
  // chance) until `want` rows were found that are not being used: a changed one is taken for
  // writing back (its id appended to `ids`, a copy to `rows`, its dirty mark cleared, taken by
  // flush generation `flush`), an unchanged one counts as found already. Returns how many were
  // taken. Writing back only these, not every changed row, is what keeps a hot row from being
  // written again at every flush a full RAM calls for.
  std::size_t take_victims(std::size_t stripe, std::size_t want, std::vector<std::uint64_t>& ids,
                           std::vector<float>& rows, std::uint32_t flush);
  // With a budget: evicts up to `max` rows of stripe `stripe` that may go (CLOCK, as a new row
  // does); returns how many went. The shard's background sweep brings RAM back to the budget
  // with it after a flush, instead of waiting for new rows to make room one by one.
  std::size_t evict(std::size_t stripe, std::size_t max);
  // Rows marked dirty now (approximate while updates run).
  std::size_t dirty_rows() const { return dirty_.load(std::memory_order_relaxed); }
  // Rows dropped for good whose deletion no take_dirty took yet (approximate while lookups run).
  std::size_t untaken_drops() const { return untaken_drops_.load(std::memory_order_relaxed); }
  static constexpr std::size_t stripe_count = 64;

  // Copies up to `max_rows` rows, stripe by stripe (in increasing stripe_of(id)), starting at
  // `position` (0 at first); returns the position to continue from, or 0 when every row was
  // visited. On a table that is trained meanwhile (an export on request), every row that existed
  // when the copy began is copied, with the values it has when its page is taken; a row created
  // meanwhile may or may not be. A stripe whose index grew between two calls is copied again
  // from its start, so rows of the stripe a page ended in may come twice: copied_rows_filter
  // lets each through once. Where rows leave RAM meanwhile (a budget, a full table's evictions, a
  // row TTL), a removal may move a row behind the copy's position: a copy that must be whole is
  // taken while nothing trains (a job's export), or from storage (a budget).
  std::uint64_t copy_rows(std::uint64_t position, std::size_t max_rows, std::vector<std::uint64_t>& ids,
                          std::vector<float>& rows) const;
  // A live reshard's copies, paged as copy_rows, of the rows `keep` accepts (those a new placement
  // gives to one shard): `copy_all` takes each one and clears its move mark, while the job trains;
  // otherwise only the rows marked since (changed or made after their copy, or never copied: a
  // removal may move a row behind the copy's position), under the hold. The two together are every
  // row in RAM as it stands at the hold; the rows that left RAM since the copy began (moved_out,
  // with track_moves) are then looked up as they stand: in storage, or gone for good.
  std::uint64_t copy_rows_to_move(std::uint64_t position, std::size_t max_rows, bool copy_all,
                                  const std::function<bool(std::uint64_t)>& keep, std::vector<std::uint64_t>& ids,
                                  std::vector<float>& rows);
  // Whether `id` was given up for good (a row TTL, a full table) and its stored copy not deleted
  // yet: a copy read from storage is no row.
  bool awaits_deletion(std::uint64_t id) const;
  // With a budget, a live reshard's copy is read from storage (which holds every row once the
  // changed ones are flushed): of the rows n ids name that a copy just read from storage, those in
  // RAM unchanged since the flush before it (storage holds them as they are) lose their move mark;
  // a changed one keeps it (the copy under the hold takes it). Returns how many lost it.
  std::size_t unmark_copied_if_clean(const std::uint64_t* ids, std::size_t n);
  // With a budget: starts (or stops, forgetting them) remembering the rows that leave RAM marked
  // for the move, whose marks leave with them, and every row given up for good (a row TTL, a full
  // table), which a copy may have carried already. Turned on, it marks every row for the move. Without
  // a budget, rows never leave RAM, and nothing is tracked.
  void track_moves(bool on);
  // The ids of rows that left RAM marked for the move, or for good, since tracking began, from
  // position on (an index into the table's list, which only grows while tracking; an id may be
  // there more than once); appends at most max_rows to `ids` and returns the next position, or 0
  // at the end.
  std::size_t moved_out(std::size_t position, std::size_t max_rows, std::vector<std::uint64_t>& ids) const;
  // The stripe that holds `id` (0 <= stripe < stripe_count).
  static std::size_t stripe_of(std::uint64_t id);

  // Sets a row to exactly `row` (row_floats() values), creating it if absent: checkpoint
  // restore. Returns false only when max_rows is reached.
  bool put(std::uint64_t id, const float* row);
  // Removes the row of `id` (a served model's update deletes it: its id reads as unseen again);
  // false when there is none. Its memory goes to the next new row. Only for a table without a
  // budget (whose rows leave RAM through eviction and drops instead).
  bool erase(std::uint64_t id);
  // A row that moved to another shard (the job took another shard count): gone from RAM if it is
  // there, not counted as an eviction or a drop, and not remembered for storage (the caller deletes
  // it there). Without a budget held_rows() drops with it; with one, the caller sets the count of
  // the rows left in both tiers afterwards (set_held). False when RAM did not hold it.
  bool forget_moved(std::uint64_t id);
  // With a budget: the rows the table holds in both tiers, counted by the caller (after rows moved).
  void set_held(std::uint64_t rows) { held_.store(rows, std::memory_order_relaxed); }

  // Rows in RAM (all the table's rows without a budget).
  std::size_t rows() const { return rows_.load(std::memory_order_relaxed); }
  // Rows in both tiers: those made here or put, plus count_stored()'s, less those dropped for good.
  std::uint64_t held_rows() const { return held_.load(std::memory_order_relaxed); }
  // A row that storage holds and RAM does not (a tiered shard's restart leaves most there):
  // counted in held_rows(), against max_rows.
  void count_stored() { held_.fetch_add(1, std::memory_order_relaxed); }
  // Drops the stored row of `id` for good if it is not in RAM (nor dropped already): storage
  // deletes it at the next flush, and until then a read of it counts as absent. Counted as a full
  // table's eviction, or with `expiring` as an expired row. Needs a budget.
  bool drop_if_cold(std::uint64_t id, bool expiring = false);
  // Row TTL: deletes the rows in RAM whose last touch is older than budget->ttl, for good (as
  // drop_if_cold); returns how many. The shard's background sweep, stripe by stripe.
  std::size_t expire_in_ram();
  // evict_when_full: drops up to `max` rows in RAM for good (CLOCK), stripe by stripe; returns how
  // many. What trimming a full table falls back on when storage holds no row that is out of RAM.
  std::size_t drop_from_ram(std::size_t max);
  // Bytes held: row storage plus index.
  std::size_t bytes() const;

  // Calls fn(id, const float* row) for every row, one stripe at a time under its lock. Rows
  // created during the walk may or may not be visited.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& s : stripes_) {
      std::lock_guard<std::mutex> lock(s.mu);
      for (const auto& entry : s.index.slots())
        if (entry.row != nullptr) fn(entry.key, static_cast<const float*>(entry.row));
    }
  }

 private:
  // One stripe: the parts a table composes, each for one concern, all behind the stripe's lock.
  // The columns (dirty, clock, flushes) run parallel to the index's slots and move with its rows.
  struct stripe {
    mutable std::mutex mu;
    row_index index;          // id -> row
    row_arena arena;          // the rows' memory, never moved
    dirty_marks dirty;        // changed since storage last took them
    // With a budget: the CLOCK passes each row survives and the hand (eviction), the flush that
    // last took each row, and the keys evicted last (tiering).
    clock_hand clock;
    flush_marks flushes;
    eviction_memory evicted;
    dropped_rows dropped;     // given up for good, their stored copies not deleted yet
    // Delta publishing (with a budget): ids that left RAM marked for the publisher, or for good,
    // since its last take (take_published).
    std::vector<std::uint64_t> gone_unpublished;
  };
  // With a budget and a reshard's copy under way: rows that left RAM marked for the move, or for
  // good, in the order they left (track_moves, moved_out). One list for the table: evictions are rare next to
  // lookups, and the list is read a page at a time by position.
  mutable std::mutex moved_out_mu_;
  std::vector<std::uint64_t> moved_out_;
  bool tracking_moves_ = false;  // this table's track_moves (behind moved_out_mu_)

  static std::size_t stripe_index(std::uint64_t hash) { return hash >> 58; }
  // Adds a row for `id` at slot `i`, growing the index if needed. Lock held. nullptr at max_rows
  // (unless evict_when_full made room). `stored`: a row storage holds, coming back to RAM, so
  // already one of held_rows(). `contents`: the row's row_floats() values; nullptr: its initial
  // ones (init_row, which costs more than a copy: a restore's rows are never initialized first).
  float* insert_locked(stripe& s, std::uint64_t id, std::size_t i, bool stored = false,
                       const float* contents = nullptr);
  // evict_when_full: drops one row of the stripe for good, the one the CLOCK hand picks whether
  // or not storage holds it as it is; false if the stripe has none in RAM. Lock held.
  bool drop_one_locked(stripe& s);
  // drop_one_locked on `s`, else on the first other stripe whose lock is free and that has a row.
  bool make_room_locked(stripe& s);
  // A full table goes over its limit and is trimmed from its cold rows later (a memory budget).
  bool trims_cold() const {
    return options_.evict_when_full && options_.budget->max_rows != row_budget::unlimited;
  }
  // Marks `id` dropped for good (storage deletes it at the next flush), when persisted, and counts
  // it (expired, or a full table's eviction). Lock held.
  void forget_locked(stripe& s, std::uint64_t id, bool expiring = false);
  // Removes slot i's row from RAM for good and forgets it (forget_locked). Lock held.
  void forget_row_locked(stripe& s, std::size_t i, bool expiring);
  // Removes the row of `id` from RAM (erase, forget_moved): without a budget it is gone from the
  // counts too; with one, remove_locked() and out of the resident count (held_ is the caller's).
  bool remove(std::uint64_t id);
  // Whether a stored copy of `id` was dropped for good and its deletion not stored yet. Lock held.
  bool dropped_locked(const stripe& s, std::uint64_t id) const {
    return !s.dropped.empty() && s.dropped.hides(id, options_.budget->flushed.load(std::memory_order_acquire));
  }
  // The slot of `id`, its row added when absent (*created): *row is the row, nullptr at max_rows.
  // An absent id that admits() refuses gets no row: *row nullptr and not_admitted returned. Lock
  // held.
  static constexpr std::size_t not_admitted = ~std::size_t{0};
  std::size_t find_or_insert_locked(stripe& s, std::uint64_t id, std::uint64_t hash, float** row, bool* created,
                                    bool sighting);
  // Whether a row may be made for absent `id` (options().admission): a lookup's attempt counts a
  // sighting, a push's only asks. True without admission.
  bool admits(std::uint64_t id, bool sighting);
  // Doubles the stripe's index; the columns follow. Lock held.
  static void grow_locked(stripe& s);
  // With a budget: frees the memory of one row of the stripe that storage holds as it is (CLOCK);
  // false if none qualifies. Lock held.
  bool evict_one_locked(stripe& s);
  // Removes slot i's row from RAM; the columns follow the index's shift. Lock held.
  void remove_locked(stripe& s, std::size_t i, bool for_good = false);
  // Sorts ids by stripe into scratch.order (counting sort), with their hashes.
  static void group_by_stripe(const std::uint64_t* ids, std::size_t n, batch_scratch& scratch);
  // Calls share(stripe, begin, end) for each stripe's ids, those at scratch.order[begin, end),
  // under the stripe's lock: one locking pass per batch instead of a lock per id.
  template <class Share>
  void for_each_stripe_share(const std::uint64_t* ids, std::size_t n, batch_scratch& scratch, Share&& share);
  // Fetches towards the cache the index slot of the id `ahead` places after k in the batch's
  // stripe order (in whichever stripe it falls: a trainer's batch gives a table a few ids per
  // stripe, so looking ahead only within a stripe's share would seldom reach a later id).
  void prefetch_probe(const batch_scratch& scratch, std::size_t k) const;
  // Calls visit(stripe, i) for every ids[i], a stripe's share at a time, prefetching the slots a
  // few probes ahead.
  template <class Visit>
  void for_each_by_stripe(const std::uint64_t* ids, std::size_t n, batch_scratch& scratch, Visit&& visit);

  table_options options_;
  row_touch touch_;  // where rows keep their last touch (row TTL)
  std::array<stripe, stripe_count> stripes_;
  std::atomic<std::size_t> rows_{0};
  std::atomic<std::uint64_t> held_{0};
  std::atomic<std::size_t> dirty_{0};
  std::atomic<std::size_t> untaken_drops_{0};
};

// Lets each row of copy_rows() pages through once: only the stripe a page ended in can be copied
// again (its index grew), so only that stripe's ids are remembered.
class copied_rows_filter {
 public:
  // True the first time (table, id) comes since the copy moved to its table and stripe.
  bool first_time(std::uint32_t table, std::uint64_t id);
  // Forget everything: a copy that starts over.
  void reset();

 private:
  std::uint32_t table_ = ~0u;
  std::size_t stripe_ = ~std::size_t{0};
  std::unordered_set<std::uint64_t> seen_;
};

}  // namespace ss::embedding
