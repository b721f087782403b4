#include "ss/core/embedding/embedding_table.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "ss/core/hash.hpp"
#include "ss/core/random.hpp"

namespace ss::embedding {

void init_row(const table_options& options, std::uint64_t id, float* row) {
  const std::uint32_t slots = value_slots(options.dim, options.precision);
  // The same FP32 values at every precision, rounded to the nearest: a bf16 job's new row is its
  // FP32 twin's, rounded.
  thread_local std::vector<float> values;
  values.resize(options.dim);
  for (std::uint32_t d = 0; d < options.dim; ++d)
    values[d] = counter_uniform(options.seed, options.table, id, d, -options.init_scale, options.init_scale);
  encode_values(values.data(), options.dim, options.precision, row);
  for (std::uint32_t s = 0; s < options.state_floats; ++s) row[slots + s] = 0.0f;
  if (options.touch_slot) set_touch(row + slots + options.state_floats, 0);  // row_touch's slot
}

embedding_table::embedding_table(const table_options& options) : options_(options) {
  assert(!options_.evict_when_full || options_.budget);
  assert(!options_.touch_slot || options_.budget);
  touch_.at = value_slots(options_.dim, options_.precision) + options_.state_floats;
  touch_.kept = options_.touch_slot;
  for (auto& s : stripes_) {
    s.arena.set_row_floats(row_floats());
    s.dirty.assign(s.index.size());
    if (options_.budget) {
      s.clock.assign(s.index.size());
      s.flushes.assign(s.index.size());
    }
  }
}

void embedding_table::grow_locked(stripe& s) {
  const std::vector<std::uint32_t> moved_to = s.index.grow();
  s.dirty.follow(moved_to);
  s.clock.follow(moved_to);
  s.flushes.follow(moved_to);
}

void embedding_table::remove_locked(stripe& s, std::size_t i, bool for_good) {
  // Only rows of a table with a budget leave RAM: its columns are all kept.
  if (s.dirty.marked_for_publisher(i) && options_.budget->publishing.load(std::memory_order_relaxed))
    s.gone_unpublished.push_back(s.index.key(i));
  // (A row that goes for good is remembered by forget_locked, marked or not.)
  if (!for_good && s.dirty.marked_for_move(i) && options_.budget->tracking_moves.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(moved_out_mu_);
    moved_out_.push_back(s.index.key(i));
  }
  s.arena.release(s.index.row(i));
  s.evicted.remember(s.index.key(i));
  rows_.fetch_sub(1, std::memory_order_relaxed);
  const std::size_t hole = s.index.erase(i, [&s](std::size_t from, std::size_t to) {
    s.dirty.move(from, to);
    s.clock.move(from, to);
    s.flushes.move(from, to);
  });
  s.dirty.vacate(hole);
  s.clock.vacate(hole);
  s.flushes.vacate(hole);
}

bool embedding_table::evict_one_locked(stripe& s) {
  row_budget& b = *options_.budget;
  if (s.index.used() == 0 || b.flush_failed.load(std::memory_order_acquire)) return false;
  // Only a row storage holds as it is may go; a stored flush is what makes more of them.
  const std::uint32_t flushed = b.flushed.load(std::memory_order_acquire);
  const std::size_t i = s.clock.find_victim(
      s.index, flushed, [&](std::size_t k) { return !s.dirty.marked(k) && s.flushes.stored(k, flushed); });
  if (i == clock_hand::none) return false;
  remove_locked(s, i);
  b.resident.fetch_sub(1, std::memory_order_relaxed);
  b.evictions.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool embedding_table::drop_one_locked(stripe& s) {
  const std::size_t i = s.clock.pick_any(s.index);
  if (i == clock_hand::none) return false;
  forget_row_locked(s, i, false);
  return true;
}

void embedding_table::forget_row_locked(stripe& s, std::size_t i, bool expiring) {
  const std::uint64_t id = s.index.key(i);
  if (s.dirty.marked(i)) dirty_.fetch_sub(1, std::memory_order_relaxed);
  remove_locked(s, i, true);
  options_.budget->resident.fetch_sub(1, std::memory_order_relaxed);
  forget_locked(s, id, expiring);
}

void embedding_table::forget_locked(stripe& s, std::uint64_t id, bool expiring) {
  if (options_.persisted && s.dropped.drop(id))  // storage may hold it: deleted by the next flush
    untaken_drops_.fetch_add(1, std::memory_order_relaxed);
  // A published row may be among them: the next publication says it is gone.
  if (options_.budget->publishing.load(std::memory_order_relaxed)) s.gone_unpublished.push_back(id);
  // A reshard's copy may have carried it already: the move under the hold says it is gone.
  if (options_.budget->tracking_moves.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(moved_out_mu_);
    moved_out_.push_back(id);
  }
  held_.fetch_sub(1, std::memory_order_relaxed);
  (expiring ? options_.budget->expired : options_.budget->table_evictions).fetch_add(1, std::memory_order_relaxed);
}

bool embedding_table::drop_if_cold(std::uint64_t id, bool expiring) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripes_[stripe_index(h)];
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.index.occupied(s.index.probe(id, h)) || dropped_locked(s, id)) return false;
  forget_locked(s, id, expiring);
  s.evicted.remember(id);  // a read of its stored copy under way reads again
  return true;
}

std::size_t embedding_table::expire_in_ram() {
  row_budget& b = *options_.budget;
  if (!touch_.kept || b.ttl == 0) return 0;
  std::size_t expired_rows = 0;
  for (auto& s : stripes_) {
    std::lock_guard<std::mutex> lock(s.mu);
    const std::uint32_t now = b.now.load(std::memory_order_relaxed);
    // A removal shifts a later row of the run into slot i: slot i is looked at again.
    for (std::size_t i = 0; i < s.index.size();) {
      const float* row = s.index.row(i);
      if (row == nullptr || !touch_.expired_at(row, now, b.ttl)) {
        ++i;
        continue;
      }
      forget_row_locked(s, i, true);
      ++expired_rows;
    }
  }
  return expired_rows;
}

std::size_t embedding_table::drop_from_ram(std::size_t max) {
  std::size_t dropped = 0;
  // Passes over the stripes, each giving its share of what is left, so that no stripe is emptied
  // first; a stripe with fewer rows than its share leaves the rest to the next pass.
  for (std::size_t before = ~std::size_t{0}; dropped < max && dropped != before;) {
    before = dropped;
    const std::size_t share = (max - dropped + stripe_count - 1) / stripe_count;
    for (std::size_t si = 0; si < stripe_count && dropped < max; ++si) {
      stripe& s = stripes_[si];
      std::lock_guard<std::mutex> lock(s.mu);
      for (std::size_t k = 0; k < share && dropped < max && drop_one_locked(s); ++k) ++dropped;
    }
  }
  return dropped;
}

bool embedding_table::make_room_locked(stripe& s) {
  if (drop_one_locked(s)) return true;
  // None here (a small table has empty stripes): another stripe's, if its lock is free. Never
  // waiting for a second lock while holding one keeps lock order out of it.
  const auto self = static_cast<std::size_t>(&s - stripes_.data());
  for (std::size_t k = 1; k < stripe_count; ++k) {
    stripe& other = stripes_[(self + k) % stripe_count];
    std::unique_lock<std::mutex> lock(other.mu, std::try_to_lock);
    if (lock.owns_lock() && drop_one_locked(other)) return true;
  }
  return false;
}

float* embedding_table::insert_locked(stripe& s, std::uint64_t id, std::size_t i, bool stored, const float* contents) {
  if (row_budget* b = options_.budget.get()) {
    // Over the budget (rows came in while nothing could go), a few go per new row, so that RAM
    // comes back to the budget once the flusher made rows evictable; a few, to bound the wait.
    int evicted = 0;
    while (evicted < 4 && b->full() && evict_one_locked(s)) ++evicted;
    if (evicted > 0) i = s.index.probe(id);  // the deletions may have moved the free slot
    if (b->full() && evicted == 0) b->over_budget.fetch_add(1, std::memory_order_relaxed);
  }
  bool counted = false;  // held_ already counts the new row
  if (options_.max_rows != 0 && !stored) {
    if (options_.budget) {
      // Reserved first, so that two stripes making a row at once never both find room. With a
      // memory budget the table's rows are in both tiers: the persister trims it back to the
      // limit by dropping cold rows (trim_cold); without, a row in RAM makes room now.
      counted = true;
      if (held_.fetch_add(1, std::memory_order_relaxed) >= options_.max_rows && !trims_cold()) {
        if (!options_.evict_when_full || !make_room_locked(s)) {
          held_.fetch_sub(1, std::memory_order_relaxed);
          return nullptr;
        }
        i = s.index.probe(id);  // the deletion may have moved the free slot
      }
    } else if (rows_.load(std::memory_order_relaxed) >= options_.max_rows) {
      return nullptr;
    }
  }
  if (s.dropped.revive(id)) untaken_drops_.fetch_sub(1, std::memory_order_relaxed);  // its stored copy gets overwritten
  float* row = s.arena.allocate();
  if (contents != nullptr) std::memcpy(row, contents, sizeof(float) * row_floats());
  else init_row(options_, id, row);
  const bool full = s.index.place(i, id, row);
  if (options_.budget) {
    s.clock.came_in(i);
    s.flushes.taken_by(i, 0);
    options_.budget->came_in();
  }
  rows_.fetch_add(1, std::memory_order_relaxed);
  if (!stored && !counted) held_.fetch_add(1, std::memory_order_relaxed);
  if (full) grow_locked(s);
  return row;
}

bool embedding_table::admits(std::uint64_t id, bool sighting) {
  admission_filter* a = options_.admission.get();
  return a == nullptr || (sighting ? a->see(options_.table, id) : a->admitted(options_.table, id));
}

std::size_t embedding_table::find_or_insert_locked(stripe& s, std::uint64_t id, std::uint64_t hash, float** row,
                                                   bool* created, bool sighting) {
  std::size_t at = s.index.probe(id, hash);
  *row = s.index.row(at);
  *created = false;
  if (*row != nullptr) return at;
  if (!admits(id, sighting)) return not_admitted;
  *row = insert_locked(s, id, at);
  if (*row == nullptr) return at;
  *created = true;
  return s.index.probe(id, hash);  // the insert may have grown the index
}

float* embedding_table::find_or_create(std::uint64_t id) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripes_[stripe_index(h)];
  std::lock_guard<std::mutex> lock(s.mu);
  const std::size_t i = s.index.probe(id, h);
  if (s.index.occupied(i)) return s.index.row(i);
  return insert_locked(s, id, i);
}

float* embedding_table::find(std::uint64_t id) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripes_[stripe_index(h)];
  std::lock_guard<std::mutex> lock(s.mu);
  return s.index.row(s.index.probe(id, h));
}

const float* embedding_table::find(std::uint64_t id) const {
  return const_cast<embedding_table*>(this)->find(id);
}

void embedding_table::group_by_stripe(const std::uint64_t* ids, std::size_t n, batch_scratch& scratch) {
  scratch.hashes.resize(n);
  scratch.order.resize(n);
  auto& starts = scratch.starts;
  starts.fill(0);
  for (std::size_t i = 0; i < n; ++i) {
    scratch.hashes[i] = mix64(ids[i]);
    ++starts[stripe_index(scratch.hashes[i]) + 1];
  }
  for (std::size_t s = 1; s <= stripe_count; ++s) starts[s] += starts[s - 1];
  std::array<std::uint32_t, stripe_count> fill{};
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t s = stripe_index(scratch.hashes[i]);
    scratch.order[starts[s] + fill[s]++] = static_cast<std::uint32_t>(i);
  }
}

// Far enough ahead for a miss to DRAM to land while the probes between are done.
constexpr std::size_t probe_prefetch_distance = 16;

template <class Share>
void embedding_table::for_each_stripe_share(const std::uint64_t* ids, std::size_t n, batch_scratch& scratch,
                                            Share&& share) {
  group_by_stripe(ids, n, scratch);
  for (std::size_t k = 0; k < probe_prefetch_distance; ++k) prefetch_probe(scratch, k);
  for (std::size_t si = 0; si < stripe_count; ++si) {
    const std::uint32_t begin = scratch.starts[si], end = scratch.starts[si + 1];
    if (begin == end) continue;
    stripe& s = stripes_[si];
    std::lock_guard<std::mutex> lock(s.mu);
    share(s, begin, end);
  }
}

void embedding_table::prefetch_probe(const batch_scratch& scratch, std::size_t k) const {
  if (k >= scratch.order.size()) return;
  const std::uint64_t h = scratch.hashes[scratch.order[k]];
  stripes_[stripe_index(h)].index.prefetch_home(h);
}

template <class Visit>
void embedding_table::for_each_by_stripe(const std::uint64_t* ids, std::size_t n, batch_scratch& scratch, Visit&& visit) {
  for_each_stripe_share(ids, n, scratch, [&](stripe& s, std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t k = begin; k < end; ++k) {
      prefetch_probe(scratch, k + probe_prefetch_distance);
      visit(s, scratch.order[k]);
    }
  });
}

std::size_t embedding_table::find_or_create_batch(const std::uint64_t* ids, std::size_t n, float** rows,
                                                  batch_scratch& scratch) {
  std::size_t missing = 0, marked = 0, refused = 0;
  admission_filter* admission = options_.admission.get();
  for_each_by_stripe(ids, n, scratch, [&](stripe& s, std::uint32_t i) {
    bool created = false;
    const std::size_t at = find_or_insert_locked(s, ids[i], scratch.hashes[i], &rows[i], &created, true);
    if (at == not_admitted) {
      ++refused;
    } else if (rows[i] == nullptr) {
      ++missing;
    } else if (created) {
      // A new row is a change too: storage holds every row the table holds once flushed.
      s.dirty.mark(at);
      ++marked;
    }
  });
  dirty_.fetch_add(marked, std::memory_order_relaxed);
  if (admission != nullptr) {
    admission->refused.fetch_add(refused, std::memory_order_relaxed);
    admission->admissions.fetch_add(marked, std::memory_order_relaxed);
  }
  return missing;
}

void embedding_table::find_batch(const std::uint64_t* ids, std::size_t n, float** rows, batch_scratch& scratch) {
  for_each_by_stripe(ids, n, scratch,
                     [&](stripe& s, std::uint32_t i) { rows[i] = s.index.row(s.index.probe(ids[i], scratch.hashes[i])); });
}

std::size_t embedding_table::update_batch(const std::uint64_t* ids, std::size_t n, row_update update, void* context,
                                          batch_scratch& scratch) {
  std::size_t missing = 0, marked = 0, dropped = 0;
  admission_filter* admission = options_.admission.get();
  scratch.rows.resize(n);
  scratch.slots.resize(n);
  const std::size_t row_bytes = static_cast<std::size_t>(row_floats()) * sizeof(float);
  for_each_stripe_share(ids, n, scratch, [&](stripe& s, std::uint32_t begin, std::uint32_t end) {
    // First every row of the stripe's share is found (or made), and its row and dirty mark
    // fetched towards the cache, so that their misses overlap instead of each update waiting on
    // its own. Rows do not move while the lock is held; an insert may grow the index, which moves
    // slots (hence the second probe below).
    const std::size_t index_size = s.index.size();
    for (std::uint32_t k = begin; k < end; ++k) {
      prefetch_probe(scratch, k + probe_prefetch_distance);
      const std::uint32_t i = scratch.order[k];
      bool created = false;
      scratch.slots[i] = find_or_insert_locked(s, ids[i], scratch.hashes[i], &scratch.rows[i], &created, false);
      if (scratch.slots[i] == not_admitted) {
        scratch.rows[i] = nullptr;
        ++dropped;
        continue;
      }
      if (scratch.rows[i] == nullptr) {
        ++missing;
        continue;
      }
      prefetch_row(scratch.rows[i], row_bytes, true);
      s.dirty.prefetch(scratch.slots[i]);
    }
    const bool grown = s.index.size() != index_size;
    for (std::uint32_t k = begin; k < end; ++k) {
      const std::uint32_t i = scratch.order[k];
      if (scratch.rows[i] == nullptr) continue;
      update(context, scratch.rows[i], i);
      const std::size_t at = grown ? s.index.probe(ids[i], scratch.hashes[i]) : scratch.slots[i];
      if (s.dirty.mark(at)) ++marked;
    }
  });
  dirty_.fetch_add(marked, std::memory_order_relaxed);
  if (admission != nullptr) admission->dropped.fetch_add(dropped, std::memory_order_relaxed);
  return missing;
}

result<std::size_t> embedding_table::visit_tiered(const std::uint64_t* ids, std::size_t n, bool create, bool changes,
                                                 const row_loader& load, row_update visit, void* context,
                                                 batch_scratch& scratch) {
  row_budget& budget = *options_.budget;
  const std::size_t floats = row_floats();
  std::size_t missing = 0, marked = 0, created = 0, refused = 0, dropped = 0;
  admission_filter* admission = options_.admission.get();
  // The positions still to visit, their ids, their stripe's evictions when they were last seen
  // out of RAM, and whether their row must be read from the cold tier (slot in scratch.loaded).
  auto& pending = scratch.pending;
  auto& pending_ids = scratch.pending_ids;
  auto& evictions_then = scratch.evictions_then;
  auto& slot_of = scratch.slot_of;  // per pending position: its row in scratch.loaded, none, or absent
  constexpr std::uint32_t none = ~0u;  // in RAM when seen: nothing to read
  constexpr std::uint32_t absent = none - 1;  // dropped for good when seen: storage's copy is no row
  // Whether a row out of RAM is read from storage. One dropped for good whose deletion is not
  // stored yet is not: its stored copy is no row, and the deletion may be stored before the read
  // is looked at. A row dropped after this is remembered among the stripe's evictions.
  auto read_or_absent = [&](const stripe& s, std::uint64_t id) { return dropped_locked(s, id) ? absent : 0u; };
  pending.clear();
  pending_ids.clear();
  evictions_then.clear();
  slot_of.clear();
  // Training's lookups and pushes touch a row (row TTL); an evaluation's lookups do not. A touch
  // alone does not mark the row for writing: the push that follows a training lookup does.
  const bool touches = create || changes;
  if (touches && options_.touch_slot) budget.touching_batches.fetch_add(1, std::memory_order_relaxed);
  auto touched = [&](stripe& s, std::size_t at, std::uint32_t i) {
    if (changes) s.clock.pushed(at);
    else s.clock.looked_up(at);
    float* row = s.index.row(at);
    if (touches && touch_.kept) touch_.touch(row, budget.now.load(std::memory_order_relaxed));
    visit(context, row, i);
    if (changes && s.dirty.mark(at)) ++marked;
  };
  // First pass: which rows are in RAM. A lookup copies those now; a push changes nothing until
  // the misses are read, so that a failed read leaves the whole push undone.
  std::size_t misses = 0;
  for_each_by_stripe(ids, n, scratch, [&](stripe& s, std::uint32_t i) {
    const std::size_t at = s.index.probe(ids[i], scratch.hashes[i]);
    const bool in_ram = s.index.occupied(at);
    if (in_ram && !changes) return touched(s, at, i);
    misses += in_ram ? 0 : 1;
    pending.push_back(i);
    pending_ids.push_back(ids[i]);
    evictions_then.push_back(s.evicted.count());
    slot_of.push_back(in_ram ? none : read_or_absent(s, ids[i]));
  });
  budget.hits.fetch_add(n - misses, std::memory_order_relaxed);
  budget.misses.fetch_add(misses, std::memory_order_relaxed);
  std::vector<std::uint64_t> load_ids;
  std::vector<std::uint32_t> next;
  scratch.fresh_row.resize(floats);
  // Then the rest, a round at a time: the misses read from the cold tier outside the locks, then
  // every pending row visited under its lock. A row evicted after it was seen (so written since:
  // what was read may predate that write) goes to the next round and is read again.
  while (!pending.empty()) {
    load_ids.clear();
    for (std::size_t j = 0; j < pending.size(); ++j)
      if (slot_of[j] != none && slot_of[j] != absent) {
        slot_of[j] = static_cast<std::uint32_t>(load_ids.size());
        load_ids.push_back(pending_ids[j]);
      }
    scratch.loaded.resize(load_ids.size() * floats);
    scratch.found.assign(load_ids.size(), 0);
    if (load && !load_ids.empty())
      SS_RETURN_IF_ERROR(load(load_ids.data(), load_ids.size(), scratch.loaded.data(), scratch.found.data()));
    next.clear();
    for_each_by_stripe(pending_ids.data(), pending_ids.size(), scratch, [&](stripe& s, std::uint32_t j) {
      const std::uint32_t i = pending[j];
      const std::uint64_t id = pending_ids[j];
      const std::uint64_t hash = scratch.hashes[j];
      std::size_t at = s.index.probe(id, hash);
      if (s.index.occupied(at)) return touched(s, at, i);  // in RAM, or placed meanwhile by another call
      if (slot_of[j] == none || s.evicted.evicted_since(id, evictions_then[j])) {
        evictions_then[j] = s.evicted.count();
        slot_of[j] = read_or_absent(s, id);  // read it (again)
        next.push_back(j);
        return;
      }
      // A row dropped for good whose deletion is not stored yet is no more.
      const bool read = slot_of[j] != absent;
      float* values = read ? scratch.loaded.data() + static_cast<std::size_t>(slot_of[j]) * floats : scratch.fresh_row.data();
      const bool stored = read && scratch.found[slot_of[j]] != 0 && !dropped_locked(s, id);
      if (!stored) init_row(options_, id, values);
      if (!stored && create && !admits(id, !changes)) {
        if (changes) return void(++dropped);  // a gradient for a row that does not exist yet
        ++refused;
        return visit(context, values, i);
      }
      if (!create) return visit(context, values, i);
      if (stored) budget.loaded.fetch_add(1, std::memory_order_relaxed);
      float* row = insert_locked(s, id, at, stored, values);
      if (row == nullptr) {
        ++missing;
        return;
      }
      at = s.index.probe(id, hash);  // the insert may have grown the index
      if (!stored) {  // a new row: storage holds every row once flushed
        s.dirty.mark(at);
        ++marked;
        ++created;
      } else if (!changes) {
        s.clock.rows_may_go();  // a row as storage holds it came in
      }
      touched(s, at, i);
    });
    // Compacted in place: in increasing order, each entry moves only down.
    std::sort(next.begin(), next.end());
    std::size_t k = 0;
    for (const std::uint32_t j : next) {
      pending[k] = pending[j];
      pending_ids[k] = pending_ids[j];
      evictions_then[k] = evictions_then[j];
      slot_of[k] = slot_of[j];
      ++k;
    }
    pending.resize(k);
    pending_ids.resize(k);
    evictions_then.resize(k);
    slot_of.resize(k);
  }
  dirty_.fetch_add(marked, std::memory_order_relaxed);
  if (admission != nullptr) {
    admission->refused.fetch_add(refused, std::memory_order_relaxed);
    admission->dropped.fetch_add(dropped, std::memory_order_relaxed);
    admission->admissions.fetch_add(created, std::memory_order_relaxed);
  }
  return missing;
}

result<std::size_t> embedding_table::warm_tiered(const std::uint64_t* ids, std::size_t n, const row_loader& load,
                                                batch_scratch& scratch) {
  row_budget& budget = *options_.budget;
  const std::size_t floats = row_floats();
  auto& wanted = scratch.pending_ids;
  auto& evictions_then = scratch.evictions_then;
  wanted.clear();
  evictions_then.clear();
  for_each_by_stripe(ids, n, scratch, [&](stripe& s, std::uint32_t i) {
    // A row dropped for good is not read: its deletion may be stored before the read is looked at.
    if (s.index.occupied(s.index.probe(ids[i], scratch.hashes[i])) || dropped_locked(s, ids[i])) return;
    wanted.push_back(ids[i]);
    evictions_then.push_back(s.evicted.count());
  });
  if (wanted.empty() || !load) return std::size_t{0};
  scratch.loaded.resize(wanted.size() * floats);
  scratch.found.assign(wanted.size(), 0);
  SS_RETURN_IF_ERROR(load(wanted.data(), wanted.size(), scratch.loaded.data(), scratch.found.data()));
  std::size_t placed = 0, skipped = 0;
  for_each_by_stripe(wanted.data(), wanted.size(), scratch, [&](stripe& s, std::uint32_t j) {
    if (scratch.found[j] == 0) return;  // no stored row: the lookup makes it (or not: admission)
    const std::uint64_t id = wanted[j];
    const std::uint64_t hash = scratch.hashes[j];
    if (s.index.occupied(s.index.probe(id, hash)) || s.evicted.evicted_since(id, evictions_then[j]) ||
        dropped_locked(s, id))
      return;
    if (budget.full() && !evict_one_locked(s)) {
      ++skipped;  // a hint never takes RAM past the budget
      return;
    }
    // The eviction may have moved the free slot.
    float* row = insert_locked(s, id, s.index.probe(id, hash), true,
                               scratch.loaded.data() + static_cast<std::size_t>(j) * floats);
    if (row == nullptr) return;  // max_rows
    // Read for a batch still a few batches away: chances enough to outlast the hand's passes
    // until its lookup comes (which takes it back to one).
    s.clock.warmed(s.index.probe(id, hash));
    s.clock.rows_may_go();
    ++placed;
  });
  budget.warmed.fetch_add(placed, std::memory_order_relaxed);
  budget.warm_skipped.fetch_add(skipped, std::memory_order_relaxed);
  return placed;
}

std::size_t embedding_table::take_dirty(std::size_t stripe_index, std::vector<std::uint64_t>& ids,
                                        std::vector<float>& rows, std::uint32_t flush,
                                        std::vector<std::uint64_t>* erased) {
  stripe& s = stripes_[stripe_index];
  const std::size_t floats = row_floats();
  std::size_t taken = 0;
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.dropped.empty()) {
    assert(erased != nullptr);
    const std::size_t handed =
        s.dropped.take(flush, options_.budget->flushed.load(std::memory_order_acquire), *erased);
    untaken_drops_.fetch_sub(handed, std::memory_order_relaxed);
  }
  const bool tiered = s.flushes.kept();
  for (std::size_t i = 0; i < s.index.size(); ++i) {
    if (!s.dirty.unmark(i)) continue;
    if (tiered) s.flushes.taken_by(i, flush);
    ids.push_back(s.index.key(i));
    rows.insert(rows.end(), s.index.row(i), s.index.row(i) + floats);
    ++taken;
  }
  dirty_.fetch_sub(taken, std::memory_order_relaxed);
  return taken;
}

std::size_t embedding_table::take_published(std::size_t stripe_index, std::vector<std::uint64_t>& ids) {
  stripe& s = stripes_[stripe_index];
  std::size_t taken = 0;
  std::lock_guard<std::mutex> lock(s.mu);
  for (std::size_t i = 0; i < s.index.size(); ++i) {
    if (!s.dirty.unmark_for_publisher(i)) continue;
    ids.push_back(s.index.key(i));
    ++taken;
  }
  ids.insert(ids.end(), s.gone_unpublished.begin(), s.gone_unpublished.end());
  taken += s.gone_unpublished.size();
  s.gone_unpublished.clear();
  s.gone_unpublished.shrink_to_fit();  // a burst of evictions leaves no lasting allocation
  return taken;
}

void embedding_table::clear_published() {
  for (auto& s : stripes_) {
    std::lock_guard<std::mutex> lock(s.mu);
    for (std::size_t i = 0; i < s.index.size(); ++i) s.dirty.unmark_for_publisher(i);
    s.gone_unpublished.clear();
    s.gone_unpublished.shrink_to_fit();
  }
}

status embedding_table::read_published(const std::uint64_t* ids, std::size_t n, const row_loader& load, float* values,
                                       std::uint8_t* present) const {
  const std::size_t dim = options_.dim, floats = row_floats();
  // Copies id's row values into out[0, dim) if it is in RAM. Lock held.
  auto from_ram = [&](const stripe& s, std::uint64_t id, std::uint64_t hash, float* out) {
    const std::size_t at = s.index.probe(id, hash);
    if (!s.index.occupied(at)) return false;
    decode_values(s.index.row(at), options_.dim, options_.precision, out);
    return true;
  };
  // The positions not in RAM, with their stripe's evictions when they were seen there.
  std::vector<std::size_t> pending;
  std::vector<std::uint64_t> evictions_then;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = mix64(ids[i]);
    const stripe& s = stripes_[stripe_index(h)];
    std::lock_guard<std::mutex> lock(s.mu);
    present[i] = from_ram(s, ids[i], h, values + i * dim) ? 1 : 0;
    // A row dropped for good is absent, whatever storage holds until its deletion is stored (which
    // may be before the read below is looked at).
    if (present[i] == 0 && !dropped_locked(s, ids[i])) {
      pending.push_back(i);
      evictions_then.push_back(s.evicted.count());
    }
  }
  if (!load) return status::ok();  // no cold tier: RAM holds every row there is
  // Read from storage outside the locks; a row evicted meanwhile (written since) is read again,
  // as visit_tiered does.
  std::vector<std::uint64_t> load_ids;
  std::vector<float> loaded;
  std::vector<std::uint8_t> found;
  while (!pending.empty()) {
    load_ids.clear();
    for (std::size_t i : pending) load_ids.push_back(ids[i]);
    loaded.resize(load_ids.size() * floats);
    found.assign(load_ids.size(), 0);
    SS_RETURN_IF_ERROR(load(load_ids.data(), load_ids.size(), loaded.data(), found.data()));
    std::size_t kept = 0;
    for (std::size_t j = 0; j < pending.size(); ++j) {
      const std::size_t i = pending[j];
      const std::uint64_t h = mix64(ids[i]);
      const stripe& s = stripes_[stripe_index(h)];
      std::lock_guard<std::mutex> lock(s.mu);
      if (from_ram(s, ids[i], h, values + i * dim)) {
        present[i] = 1;
      } else if (dropped_locked(s, ids[i])) {
        // dropped for good since it was seen: absent
      } else if (s.evicted.evicted_since(ids[i], evictions_then[j])) {
        pending[kept] = i;
        evictions_then[kept] = s.evicted.count();
        ++kept;
      } else if (found[j] != 0) {
        present[i] = 1;
        decode_values(loaded.data() + j * floats, options_.dim, options_.precision, values + i * dim);
      }
    }
    pending.resize(kept);
    evictions_then.resize(kept);
  }
  return status::ok();
}

namespace {

// copy_rows' paging over `stripes` (const or not): take(stripe, slot) copies the slot's row and
// says whether it did; at most max_rows are taken per call.
// position = stripe << 40 | log2(the stripe's index size) << 32 | slot. Rows are never removed,
// so a slot keeps its row while the index keeps its size; once it grew, the rows are elsewhere
// and the stripe starts over.
template <class Stripes, class Take>
std::uint64_t page_rows(Stripes& stripes, std::uint64_t position, std::size_t max_rows, Take take) {
  std::size_t si = static_cast<std::size_t>(position >> 40);
  const std::size_t size_then = std::size_t{1} << ((position >> 32) & 0xff);
  std::size_t slot_at = static_cast<std::size_t>(position & 0xffffffffu);
  std::size_t copied = 0;
  for (; si < stripes.size(); ++si, slot_at = 0) {
    auto& s = stripes[si];
    std::lock_guard<std::mutex> lock(s.mu);
    if (slot_at != 0 && s.index.size() != size_then) slot_at = 0;
    for (; slot_at < s.index.size(); ++slot_at) {
      if (copied == max_rows) {
        const auto size_log2 = static_cast<std::uint64_t>(__builtin_ctzll(s.index.size()));
        return (static_cast<std::uint64_t>(si) << 40) | (size_log2 << 32) | slot_at;
      }
      if (s.index[slot_at].row != nullptr && take(s, slot_at)) ++copied;
    }
  }
  return 0;
}

}  // namespace

std::uint64_t embedding_table::copy_rows(std::uint64_t position, std::size_t max_rows, std::vector<std::uint64_t>& ids,
                                         std::vector<float>& rows) const {
  const std::size_t floats = row_floats();
  return page_rows(stripes_, position, max_rows, [&](const stripe& s, std::size_t i) {
    const row_index::slot& e = s.index[i];
    ids.push_back(e.key);
    rows.insert(rows.end(), e.row, e.row + floats);
    return true;
  });
}

std::uint64_t embedding_table::copy_rows_to_move(std::uint64_t position, std::size_t max_rows, bool copy_all,
                                                 const std::function<bool(std::uint64_t)>& keep,
                                                 std::vector<std::uint64_t>& ids, std::vector<float>& rows) {
  const std::size_t floats = row_floats();
  return page_rows(stripes_, position, max_rows, [&](stripe& s, std::size_t i) {
    const row_index::slot& e = s.index[i];
    if (!copy_all && !s.dirty.marked_for_move(i)) return false;
    if (!keep(e.key)) return false;
    // Cleared under the stripe's lock with the copy: a change after it marks the row again.
    if (copy_all) s.dirty.unmark_for_move(i);
    ids.push_back(e.key);
    rows.insert(rows.end(), e.row, e.row + floats);
    return true;
  });
}

bool embedding_table::awaits_deletion(std::uint64_t id) const {
  if (!options_.budget) return false;
  const std::uint64_t h = mix64(id);
  const stripe& s = stripes_[stripe_index(h)];
  std::lock_guard<std::mutex> lock(s.mu);
  return dropped_locked(s, id);
}

std::size_t embedding_table::unmark_copied_if_clean(const std::uint64_t* ids, std::size_t n) {
  std::size_t cleared = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t h = mix64(ids[k]);
    stripe& s = stripes_[stripe_index(h)];
    std::lock_guard<std::mutex> lock(s.mu);
    const std::size_t i = s.index.probe(ids[k], h);
    if (!s.index.occupied(i) || s.dirty.marked(i) || !s.dirty.marked_for_move(i)) continue;
    s.dirty.unmark_for_move(i);
    ++cleared;
  }
  return cleared;
}

void embedding_table::track_moves(bool on) {
  if (!options_.budget) return;
  {
    // Not held while the stripes are marked below: a removal takes a stripe's lock, then this one.
    std::lock_guard<std::mutex> lock(moved_out_mu_);
    options_.budget->tracking_moves.store(on, std::memory_order_relaxed);
    const bool was = tracking_moves_;
    tracking_moves_ = on;
    if (!on) {
      moved_out_.clear();
      moved_out_.shrink_to_fit();
      return;
    }
    if (was) return;
  }
  // A copy begins: every row is marked, so that one a removal moves behind the copy's position
  // before the copy reached it (and so never copied) is still taken under the hold. A row removed
  // before its stripe is marked here was not marked: nothing of it is remembered, as before.
  for (auto& s : stripes_) {
    std::lock_guard<std::mutex> stripe_lock(s.mu);
    for (std::size_t i = 0; i < s.index.size(); ++i)
      if (s.index.occupied(i)) s.dirty.mark_for_move(i);
  }
}

std::size_t embedding_table::moved_out(std::size_t position, std::size_t max_rows,
                                       std::vector<std::uint64_t>& ids) const {
  std::lock_guard<std::mutex> lock(moved_out_mu_);
  const std::size_t end = std::min(moved_out_.size(), position + max_rows);
  for (std::size_t k = position; k < end; ++k) ids.push_back(moved_out_[k]);
  return end < moved_out_.size() ? end : 0;
}

std::size_t embedding_table::take_victims(std::size_t stripe_index, std::size_t want, std::vector<std::uint64_t>& ids,
                                          std::vector<float>& rows, std::uint32_t flush) {
  stripe& s = stripes_[stripe_index];
  const std::size_t floats = row_floats();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.flushes.kept()) return 0;
  const std::uint32_t flushed = options_.budget->flushed.load(std::memory_order_acquire);
  std::size_t taken = 0;
  s.clock.sweep(s.index, want, [&](std::size_t i) {
    if (s.dirty.unmark(i)) {
      s.flushes.taken_by(i, flush);
      ids.push_back(s.index.key(i));
      rows.insert(rows.end(), s.index.row(i), s.index.row(i) + floats);
      ++taken;
      return true;
    }
    return s.flushes.stored(i, flushed);  // stored as it is: may go now
  });
  dirty_.fetch_sub(taken, std::memory_order_relaxed);
  return taken;
}

std::size_t embedding_table::evict(std::size_t stripe_index, std::size_t max) {
  stripe& s = stripes_[stripe_index];
  std::lock_guard<std::mutex> lock(s.mu);
  std::size_t evicted = 0;
  while (evicted < max && evict_one_locked(s)) ++evicted;
  return evicted;
}

std::size_t embedding_table::stripe_of(std::uint64_t id) { return stripe_index(mix64(id)); }

bool copied_rows_filter::first_time(std::uint32_t table, std::uint64_t id) {
  const std::size_t stripe = embedding_table::stripe_of(id);
  if (table != table_ || stripe != stripe_) {
    table_ = table;
    stripe_ = stripe;
    seen_.clear();
  }
  return seen_.insert(id).second;
}

void copied_rows_filter::reset() {
  table_ = ~0u;
  stripe_ = ~std::size_t{0};
  seen_.clear();
}

bool embedding_table::put(std::uint64_t id, const float* row) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripes_[stripe_index(h)];
  std::lock_guard<std::mutex> lock(s.mu);
  const std::size_t i = s.index.probe(id, h);
  if (!s.index.occupied(i)) return insert_locked(s, id, i, false, row) != nullptr;
  std::memcpy(s.index.row(i), row, sizeof(float) * row_floats());
  return true;
}

bool embedding_table::erase(std::uint64_t id) {
  assert(!options_.budget);
  return remove(id);
}

bool embedding_table::forget_moved(std::uint64_t id) { return remove(id); }

bool embedding_table::remove(std::uint64_t id) {
  const std::uint64_t h = mix64(id);
  stripe& s = stripes_[stripe_index(h)];
  std::lock_guard<std::mutex> lock(s.mu);
  const std::size_t i = s.index.probe(id, h);
  if (!s.index.occupied(i)) return false;
  if (s.dirty.marked(i)) dirty_.fetch_sub(1, std::memory_order_relaxed);
  if (options_.budget) {
    remove_locked(s, i);
    options_.budget->resident.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  // remove_locked() less the columns only a budget keeps (CLOCK, flushes).
  s.arena.release(s.index.row(i));
  const std::size_t hole = s.index.erase(i, [&s](std::size_t from, std::size_t to) { s.dirty.move(from, to); });
  s.dirty.vacate(hole);
  rows_.fetch_sub(1, std::memory_order_relaxed);
  held_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

std::size_t embedding_table::bytes() const {
  std::size_t total = 0;
  for (const auto& s : stripes_) {
    std::lock_guard<std::mutex> lock(s.mu);
    total += s.arena.allocated_floats() * sizeof(float) + s.index.size() * sizeof(row_index::slot);
  }
  return total;
}

}  // namespace ss::embedding
