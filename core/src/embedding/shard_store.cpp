#include "ss/core/embedding/shard_store.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

namespace ss::embedding {
namespace {

// What a full table's error tells the operator to do about it.
constexpr const char* kFullHint =
    " rows, --max-rows-per-table, and none of its rows in RAM could make room; raise it, or fold ids into fixed rows "
    "with --buckets)";

// Reusable per-thread scratch for grouping one request's rows by table.
struct grouping {
  std::vector<std::uint32_t> order;     // request positions sorted by table
  std::vector<std::uint64_t> ids;       // ids in that order
  std::vector<float*> rows;             // found rows in that order
  std::vector<std::size_t> starts;      // per table, into order
  embedding_table::batch_scratch scratch;
};
thread_local grouping tls;

void group(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, std::uint32_t max_table) {
  tls.starts.assign(max_table + 2, 0);
  for (std::size_t i = 0; i < n; ++i) ++tls.starts[tables[i] + 1];
  for (std::size_t t = 1; t < tls.starts.size(); ++t) tls.starts[t] += tls.starts[t - 1];
  tls.order.resize(n);
  tls.ids.resize(n);
  tls.rows.resize(n);
  std::vector<std::size_t> fill(tls.starts.begin(), tls.starts.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = fill[tables[i]]++;
    tls.order[at] = static_cast<std::uint32_t>(i);
    tls.ids[at] = ids[i];
  }
}

status beyond_tables(std::uint32_t t, std::uint32_t max_tables) {
  return {errc::out_of_range, "table " + std::to_string(t) + " is beyond the shard's limit of " +
                                  std::to_string(max_tables) + " tables"};
}

// What one push asks of each of its rows.
struct push_context {
  const optim::sparse_optimizer* optimizer;
  const float* grads;
  const std::uint32_t* order;
  const std::uint64_t* ids;
  std::uint32_t dim;
  row_precision precision;
  float lr_scale;
  std::uint64_t update_stream;  // stochastic_update() of this push and table (16-bit rows)
};

// The update of row i of a push by the sparse optimizer: in place at FP32; at 16 bits on FP32
// copies of its values, written back rounded stochastically (the draws named by the seed, the
// row and the push's number). The state is FP32.
void update_row(const push_context& c, float* row, std::size_t i) {
  const float* grad = c.grads + static_cast<std::size_t>(c.order[i]) * c.dim;
  if (c.precision == row_precision::fp32) {
    c.optimizer->apply(row, grad, c.dim, c.lr_scale);
    return;
  }
  // On the stack for the usual dims (a thread_local vector cost a tenth of a 16-bit row's update).
  constexpr std::uint32_t on_stack = 256;
  float local[on_stack];
  thread_local std::vector<float> large;
  float* values = local;
  if (c.dim > on_stack) {
    large.resize(c.dim);
    values = large.data();
  }
  decode_values(row, c.dim, c.precision, values);
  c.optimizer->apply(values, row + value_slots(c.dim, c.precision), grad, c.dim, c.lr_scale);
  encode_values_stochastic(values, c.dim, c.precision, stochastic_stream(c.update_stream, c.ids[i]), row);
}

status table_full(std::uint32_t t, std::uint64_t max_rows) {
  return {errc::resource_exhausted, "table " + std::to_string(t) + " is full (" + std::to_string(max_rows) + kFullHint};
}

}  // namespace

row_layout shard_row_layout_of(const shard_store_options& o) {
  return row_layout{o.dim, o.precision, o.optimizer.state_floats(), o.ttl.enabled()};
}

std::string shard_row_layout(const shard_store_options& o) { return describe(shard_row_layout_of(o)); }

shard_store::shard_store(const shard_store_options& options)
    : options_(options), tables_(options.max_tables), fast_(options.max_tables) {
  for (auto& f : fast_) f.store(nullptr, std::memory_order_relaxed);
  tiered_ = options_.max_rows_in_memory > 0 && options_.cold;
  assert(!tiered_ || options_.cold->row_floats() == row_floats());
  if (tiered_ || options_.max_rows_per_table > 0 || options_.ttl.enabled()) {
    budget_ = std::make_shared<row_budget>();
    budget_->max_rows = tiered_ ? options_.max_rows_in_memory : row_budget::unlimited;
    budget_->ttl = options_.ttl.ticks;
  }
  if (options_.admit_after > 1)
    admission_ = std::make_shared<admission_filter>(options_.admit_after, options_.admission_counters);
}

row_loader shard_store::loader(std::uint32_t t) const {
  if (!tiered_) return {};  // every row is in RAM: a miss is a new row
  durable_rows* cold = options_.cold.get();
  return [cold, t](const std::uint64_t* ids, std::size_t n, float* rows, std::uint8_t* found) {
    thread_local std::vector<std::uint32_t> tables;
    tables.assign(n, t);
    return cold->read(tables.data(), ids, n, rows, found);
  };
}

void shard_store::clear_published() {
  // Remembering first: a row that leaves between the two is forgotten by the clear, and gone
  // before the base reads the rows.
  if (budget_) budget_->publishing.store(true, std::memory_order_relaxed);
  for (const auto& [t, tab] : live_tables()) tab->clear_published();
}

status shard_store::read_published(std::uint32_t t, const std::uint64_t* ids, std::size_t n, float* values,
                                   std::uint8_t* present) const {
  const embedding_table* tab = existing_table(t);
  if (tab == nullptr) {
    std::fill(present, present + n, std::uint8_t{0});
    return status::ok();
  }
  return tab->read_published(ids, n, loader(t), values, present);
}

embedding_table* shard_store::table(std::uint32_t t) {
  if (t >= options_.max_tables) return nullptr;
  if (auto* p = fast_[t].load(std::memory_order_acquire)) return p;
  std::lock_guard<std::mutex> lock(tables_mu_);
  if (!tables_[t]) {
    table_options o = options_of_table(options_, t);
    o.budget = budget_;
    o.evict_when_full = budget_ != nullptr && options_.max_rows_per_table > 0;
    o.persisted = options_.persisted || tiered_;
    o.touch_slot = options_.ttl.enabled();
    o.admission = admission_;
    tables_[t] = std::make_unique<embedding_table>(o);
    fast_[t].store(tables_[t].get(), std::memory_order_release);
  }
  return tables_[t].get();
}

status shard_store::check_tables(const std::uint32_t* tables, std::size_t n) const {
  for (std::size_t i = 0; i < n; ++i)
    if (tables[i] >= options_.max_tables) return beyond_tables(tables[i], options_.max_tables);
  return status::ok();
}

template <class Fn>
status shard_store::by_table(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, Fn&& fn) {
  SS_RETURN_IF_ERROR(check_tables(tables, n));
  if (n == 0) return status::ok();
  std::uint32_t max_table = 0;
  for (std::size_t i = 0; i < n; ++i) max_table = std::max(max_table, tables[i]);
  group(tables, ids, n, max_table);
  for (std::uint32_t t = 0; t <= max_table; ++t) {
    const std::size_t begin = tls.starts[t], count = tls.starts[t + 1] - begin;
    if (count > 0) SS_RETURN_IF_ERROR(fn(t, begin, count));
  }
  return status::ok();
}

std::vector<std::pair<std::uint32_t, embedding_table*>> shard_store::live_tables() const {
  std::vector<std::pair<std::uint32_t, embedding_table*>> live;
  for (std::uint32_t t = 0; t < options_.max_tables; ++t)
    if (embedding_table* tab = fast_[t].load(std::memory_order_acquire)) live.emplace_back(t, tab);
  return live;
}

void shard_store::wait_below_ceiling() {
  if (tiered_ && options_.ceiling_wait.count() > 0 && budget_->past_ceiling())
    budget_->wait_for_flush(options_.ceiling_wait);
}

status shard_store::lookup(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, bool create,
                           float* values) {
  const std::size_t dim = options_.dim;
  wait_below_ceiling();
  std::vector<float> fresh;
  return by_table(tables, ids, n, [&](std::uint32_t t, std::size_t begin, std::size_t count) -> status {
    embedding_table* tab = table(t);
    if (budget_) {
      // Copied under each row's lock: a row's memory may be another's once its lock is released.
      struct context {
        float* values;
        const std::uint32_t* order;
        std::uint32_t dim;
        row_precision precision;
      } c{values, tls.order.data() + begin, options_.dim, options_.precision};
      auto copy = [](void* ctx, float* row, std::size_t i) {
        auto* cx = static_cast<context*>(ctx);
        decode_values(row, cx->dim, cx->precision, cx->values + static_cast<std::size_t>(cx->order[i]) * cx->dim);
      };
      auto missing = tab->visit_tiered(tls.ids.data() + begin, count, create, false, loader(t), copy, &c, tls.scratch);
      if (!missing.is_ok()) return missing.error().with_context("table " + std::to_string(t) + ": reading a row back");
      if (*missing > 0) return table_full(t, options_.max_rows_per_table);
      return status::ok();
    }
    if (create) {
      if (tab->find_or_create_batch(tls.ids.data() + begin, count, tls.rows.data() + begin, tls.scratch) > 0)
        return table_full(t, options_.max_rows_per_table);
    } else {
      tab->find_batch(tls.ids.data() + begin, count, tls.rows.data() + begin, tls.scratch);
    }
    // The row a few ahead is fetched while this one is copied.
    const std::size_t row_bytes = value_slots(options_.dim, options_.precision) * sizeof(float);
    constexpr std::size_t ahead = 24;
    for (std::size_t k = begin; k < begin + count; ++k) {
      if (k + ahead < begin + count && tls.rows[k + ahead] != nullptr)
        prefetch_row(tls.rows[k + ahead], row_bytes, false);
      float* dst = values + static_cast<std::size_t>(tls.order[k]) * dim;
      if (tls.rows[k] != nullptr) {
        decode_values(tls.rows[k], options_.dim, options_.precision, dst);
      } else {
        fresh.resize(tab->row_floats());
        init_row(tab->options(), tls.ids[k], fresh.data());
        decode_values(fresh.data(), options_.dim, options_.precision, dst);
      }
    }
    return status::ok();
  });
}

status shard_store::push(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, const float* grads,
                         float lr_scale) {
  // 16-bit rows round each update stochastically; the push's number makes every push draw anew.
  const std::uint64_t update = pushes_.fetch_add(1, std::memory_order_relaxed);
  wait_below_ceiling();
  return by_table(tables, ids, n, [&](std::uint32_t t, std::size_t begin, std::size_t count) -> status {
    embedding_table* tab = table(t);
    push_context c{&options_.optimizer, grads,       tls.order.data() + begin, tls.ids.data() + begin, options_.dim,
                   options_.precision,  lr_scale,    stochastic_update(options_.seed, t, update)};
    // The optimizer runs under the row's stripe lock, so a concurrent take_dirty() sees either
    // none or all of this update.
    auto apply = [](void* ctx, float* row, std::size_t i) { update_row(*static_cast<push_context*>(ctx), row, i); };
    if (budget_) {
      auto missing = tab->visit_tiered(tls.ids.data() + begin, count, true, true, loader(t), apply, &c, tls.scratch);
      if (!missing.is_ok()) return missing.error().with_context("table " + std::to_string(t) + ": reading a row back");
      if (*missing > 0) return table_full(t, options_.max_rows_per_table);
      return status::ok();
    }
    if (tab->update_batch(tls.ids.data() + begin, count, apply, &c, tls.scratch) > 0)
      return table_full(t, options_.max_rows_per_table);
    return status::ok();
  });
}

result<std::size_t> shard_store::warm(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) {
  if (!tiered()) return std::size_t{0};
  std::size_t placed = 0;
  SS_RETURN_IF_ERROR(by_table(tables, ids, n, [&](std::uint32_t t, std::size_t begin, std::size_t count) -> status {
    auto warmed = table(t)->warm_tiered(tls.ids.data() + begin, count, loader(t), tls.scratch);
    if (!warmed.is_ok()) return warmed.error().with_context("table " + std::to_string(t) + ": reading rows ahead");
    placed += *warmed;
    return status::ok();
  }));
  return placed;
}

result<std::uint64_t> shard_store::write_back(const dirty_sink& fn) {
  if (!tiered()) return std::uint64_t{0};
  const auto live = live_tables();
  const std::uint64_t resident = budget_->resident.load(std::memory_order_relaxed);
  const std::uint64_t target = budget_->max_rows - budget_->max_rows / 16;
  if (live.empty() || resident <= target) return std::uint64_t{0};
  const std::uint64_t stripes = live.size() * embedding_table::stripe_count;
  const std::uint32_t flush = budget_->taking.fetch_add(1, std::memory_order_acq_rel) + 1;
  std::vector<std::uint64_t> ids;
  std::vector<float> rows;
  std::uint64_t written = 0;
  // Each stripe gives its share of what is over; a stripe with fewer rows than its share leaves
  // the rest to the others in the next pass.
  std::uint64_t over = resident - target;
  for (int pass = 0; pass < 4 && over > 0; ++pass) {
    const std::size_t want = static_cast<std::size_t>((over + stripes - 1) / stripes);
    std::uint64_t this_pass = 0;
    for (const auto& [t, tab] : live) {
      ids.clear();
      rows.clear();
      for (std::size_t s = 0; s < embedding_table::stripe_count; ++s) tab->take_victims(s, want, ids, rows, flush);
      if (ids.empty()) continue;
      if (status st = fn(t, ids.data(), rows.data(), ids.size()); !st.is_ok()) {
        budget_->flush_stored(flush, true);
        return st;
      }
      this_pass += ids.size();
    }
    written += this_pass;
    if (this_pass == 0) break;
    over = this_pass >= over ? 0 : over - this_pass;
  }
  budget_->flush_stored(flush);
  shrink_to_budget();
  return written;
}

result<std::uint64_t> shard_store::trim_full_tables() {
  if (!tiered_ || options_.max_rows_per_table == 0) return std::uint64_t{0};
  const std::uint64_t limit = options_.max_rows_per_table;
  constexpr std::size_t page = 4096;
  trim_from_.resize(options_.max_tables, 0);
  std::uint64_t dropped = 0;
  std::vector<std::uint64_t> ids;
  for (const auto& [t, tab] : live_tables()) {
    // One lap of the table's stored rows at most: from where the last trim stopped, to its end,
    // then from its start.
    bool wrapped = trim_from_[t] == 0;
    while (tab->held_rows() > limit) {
      ids.clear();
      const std::uint32_t table = t;
      auto paged = options_.cold->scan_from(t, trim_from_[t], page, [&](std::uint32_t at, std::uint64_t id, const float*) {
        if (at == table) ids.push_back(id);
      });
      if (!paged.is_ok()) return paged.error().with_context("table " + std::to_string(t) + ": trimming it to its limit");
      for (const std::uint64_t id : ids) {
        if (tab->held_rows() <= limit) break;
        if (tab->drop_if_cold(id)) ++dropped;
        trim_from_[t] = id + 1;
      }
      if (ids.size() < page && tab->held_rows() > limit) {  // the table's end
        trim_from_[t] = 0;
        if (wrapped) break;
        wrapped = true;
      }
    }
    // Storage had too few rows out of RAM (they are all hot, or not flushed yet).
    if (tab->held_rows() > limit) dropped += tab->drop_from_ram(static_cast<std::size_t>(tab->held_rows() - limit));
  }
  return dropped;
}

void shard_store::advance_clock(std::uint32_t ticks) {
  if (budget_) budget_->now.fetch_add(ticks, std::memory_order_relaxed);
}

void shard_store::set_clock(std::uint32_t now) {
  if (budget_) budget_->now.store(now, std::memory_order_relaxed);
}

void shard_store::count_examples(std::uint32_t examples) {
  if (options_.ttl.enabled() && options_.ttl.clock == ttl_clock::examples) advance_clock(examples);
}

void shard_store::read_wall_clock(std::uint64_t unix_seconds) {
  if (options_.ttl.enabled() && options_.ttl.clock == ttl_clock::seconds) set_clock(static_cast<std::uint32_t>(unix_seconds));
}

void shard_store::catch_up_clock(const float* rows, std::size_t n) {
  if (!options_.ttl.enabled() || options_.ttl.clock != ttl_clock::examples || !budget_) return;
  const std::size_t floats = row_floats();
  std::uint32_t now = clock();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t touched = touch_of(rows + i * floats + floats - 1);  // the touch slot is last
    // Ahead of the clock: within half the tick space above it (ages are taken modulo 2^32).
    const std::uint32_t ahead = touched - now;
    if (ahead != 0 && ahead < (std::uint32_t{1} << 31)) now = touched;
  }
  set_clock(now);
}

std::uint32_t shard_store::clock() const { return budget_ ? budget_->now.load(std::memory_order_relaxed) : 0; }

result<std::uint64_t> shard_store::sweep_expired(std::size_t max_stored) {
  if (!options_.ttl.enabled()) return std::uint64_t{0};
  const std::uint64_t batches = budget_->touching_batches.load(std::memory_order_relaxed);
  if (batches == swept_after_) return std::uint64_t{0};
  swept_after_ = batches;
  std::uint64_t expired_rows = 0;
  const auto live = live_tables();
  for (const auto& [t, tab] : live) expired_rows += tab->expire_in_ram();
  if (!tiered_ || live.empty()) return expired_rows;
  // The stored rows, a page at a time from where the last sweep stopped, round the whole store.
  const std::uint32_t now = clock(), ttl = options_.ttl.ticks;
  const std::size_t touch_at = row_floats() - 1;
  constexpr std::size_t page = 4096;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> old;
  std::size_t scanned = 0;
  while (scanned < max_stored) {
    old.clear();
    std::uint32_t last_table = sweep_table_;
    std::uint64_t last_id = sweep_id_;
    auto paged = options_.cold->scan_from(sweep_table_, sweep_id_, page,
                                          [&](std::uint32_t t, std::uint64_t id, const float* row) {
                                            if (expired(touch_of(row + touch_at), now, ttl)) old.emplace_back(t, id);
                                            last_table = t;
                                            last_id = id;
                                          });
    if (!paged.is_ok()) return paged.error().with_context("sweeping expired rows");
    for (const auto& [t, id] : old)
      if (embedding_table* tab = table(t); tab != nullptr && tab->drop_if_cold(id, true)) ++expired_rows;
    scanned += *paged;
    if (*paged < page) {  // the end: the next sweep starts over
      sweep_table_ = 0;
      sweep_id_ = 0;
      break;
    }
    sweep_table_ = last_table;
    sweep_id_ = last_id + 1;
    if (sweep_id_ == 0) ++sweep_table_;  // the table's last possible id
  }
  return expired_rows;
}

std::uint64_t shard_store::shrink_to_budget() {
  if (!tiered()) return 0;
  const auto live = live_tables();
  if (live.empty()) return 0;
  std::uint64_t evicted = 0;
  // A few passes over every stripe, each taking a share of what is over: the stripes that cannot
  // give (every row changed since the flush) leave theirs to the next pass's others.
  for (int pass = 0; pass < 4; ++pass) {
    const std::uint64_t resident = budget_->resident.load(std::memory_order_relaxed);
    if (resident <= budget_->max_rows) break;
    const std::uint64_t stripes = live.size() * embedding_table::stripe_count;
    const std::size_t share = static_cast<std::size_t>((resident - budget_->max_rows + stripes - 1) / stripes);
    std::uint64_t this_pass = 0;
    for (const auto& [t, tab] : live)
      for (std::size_t s = 0; s < embedding_table::stripe_count; ++s) this_pass += tab->evict(s, share);
    evicted += this_pass;
    if (this_pass == 0) break;
  }
  return evicted;
}

const embedding_table* shard_store::existing_table(std::uint32_t t) const {
  return t < options_.max_tables ? fast_[t].load(std::memory_order_acquire) : nullptr;
}

embedding_table* shard_store::existing_table(std::uint32_t t) {
  return t < options_.max_tables ? fast_[t].load(std::memory_order_acquire) : nullptr;
}

status shard_store::take_dirty(const dirty_sink& fn, const erase_sink& erase) {
  std::vector<std::uint64_t> ids, erased;
  std::vector<float> rows;
  const std::uint32_t flush = budget_ ? budget_->taking.fetch_add(1, std::memory_order_acq_rel) + 1 : 0;
  for (std::uint32_t t = 0; t < options_.max_tables; ++t) {
    embedding_table* tab = fast_[t].load(std::memory_order_acquire);
    if (tab == nullptr || (tab->dirty_rows() == 0 && tab->untaken_drops() == 0)) continue;
    for (std::size_t s = 0; s < embedding_table::stripe_count; ++s) {
      ids.clear();
      rows.clear();
      erased.clear();
      const std::size_t n = tab->take_dirty(s, ids, rows, flush, &erased);
      status written = n > 0 ? fn(t, ids.data(), rows.data(), n) : status::ok();
      if (written.is_ok() && !erased.empty()) written = erase(t, erased.data(), erased.size());
      if (!written.is_ok()) {
        if (budget_) budget_->flush_stored(flush, true);
        return written;
      }
    }
  }
  if (budget_) budget_->flush_stored(flush);  // all of them are stored now
  return status::ok();
}

std::uint64_t shard_store::dirty_rows() const {
  std::uint64_t n = 0;
  for (const auto& f : fast_)
    if (const embedding_table* t = f.load(std::memory_order_acquire)) n += t->dirty_rows();
  return n;
}

status shard_store::put(std::uint32_t t, std::uint64_t id, const float* row) {
  embedding_table* tab = table(t);
  if (tab == nullptr) return beyond_tables(t, options_.max_tables);
  if (!tab->put(id, row)) return table_full(t, options_.max_rows_per_table);
  return status::ok();
}

status shard_store::count_stored(std::uint32_t t) {
  embedding_table* tab = table(t);
  if (tab == nullptr) return beyond_tables(t, options_.max_tables);
  tab->count_stored();
  return status::ok();
}

void shard_store::forget_moved(std::uint32_t t, std::uint64_t id) {
  if (embedding_table* tab = existing_table(t)) tab->forget_moved(id);
}

void shard_store::track_moves(bool on) {
  for (std::uint32_t t = 0; t < options_.max_tables; ++t)
    if (embedding_table* tab = existing_table(t)) tab->track_moves(on);
}

void shard_store::set_held(const std::vector<std::uint64_t>& held) {
  if (!budget_) return;  // without one, RAM holds every row and counts them itself
  for (std::uint32_t t = 0; t < held.size(); ++t)
    if (embedding_table* tab = existing_table(t)) tab->set_held(held[t]);
}

shard_store_stats shard_store::stats() const {
  shard_store_stats s;
  for (const auto& f : fast_) {
    const embedding_table* t = f.load(std::memory_order_acquire);
    if (t == nullptr) continue;
    ++s.tables;
    s.rows += t->rows();
    s.rows_held += t->held_rows();
    s.bytes += t->bytes();
  }
  if (budget_) {
    s.table_evictions = budget_->table_evictions.load(std::memory_order_relaxed);
    s.rows_expired = budget_->expired.load(std::memory_order_relaxed);
    s.ttl_clock_now = budget_->now.load(std::memory_order_relaxed);
  }
  if (tiered_) {
    s.max_rows_in_memory = budget_->max_rows;
    s.rows_stored = options_.cold->rows();
    s.hits = budget_->hits.load(std::memory_order_relaxed);
    s.misses = budget_->misses.load(std::memory_order_relaxed);
    s.loaded = budget_->loaded.load(std::memory_order_relaxed);
    s.evictions = budget_->evictions.load(std::memory_order_relaxed);
    s.over_budget = budget_->over_budget.load(std::memory_order_relaxed);
    s.flush_waits = budget_->flush_waits.load(std::memory_order_relaxed);
    s.flush_wait_seconds = static_cast<double>(budget_->flush_wait_us.load(std::memory_order_relaxed)) / 1e6;
    s.peak_rows_in_memory = budget_->peak_resident.load(std::memory_order_relaxed);
    s.warmed = budget_->warmed.load(std::memory_order_relaxed);
    s.warm_skipped = budget_->warm_skipped.load(std::memory_order_relaxed);
  }
  if (admission_) {
    s.admit_after = admission_->k();
    s.admission_bytes = admission_->bytes();
    s.admission_refused = admission_->refused.load(std::memory_order_relaxed);
    s.gradients_dropped = admission_->dropped.load(std::memory_order_relaxed);
    s.admissions = admission_->admissions.load(std::memory_order_relaxed);
  }
  return s;
}

}  // namespace ss::embedding
