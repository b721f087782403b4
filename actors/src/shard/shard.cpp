#include "ss/actors/shard.hpp"

#include <caf/all.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>

#include "ss/actors/gateway.hpp"
#include "ss/actors/messages.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/embedding/push_ledger.hpp"
#include "ss/core/embedding/sharding.hpp"
#include "ss/core/job/membership_fence.hpp"
#include "ss/core/io/hex.hpp"
#include "ss/core/json.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors {
namespace {

struct shard_worker_state {
  static inline const char* name = "shard-worker";
};

// What the shard's workers share about the trainers that push: whose membership is over (the
// view's) and which pushes were applied lately (a resend is not applied twice).
struct push_guard {
  std::mutex mu;
  job::membership_fence fence;
  embedding::push_ledger ledger;

  void follow(const wire::cluster_view& view) {
    std::lock_guard<std::mutex> lock(mu);
    fence.follow(view.trainer_incarnations, view.trainer_memberships, view.dropped_trainers);
    std::vector<std::uint64_t> keep = view.trainer_incarnations;
    keep.insert(keep.end(), view.dropped_trainers.begin(), view.dropped_trainers.end());
    ledger.prune(keep);
  }
};

status check_ownership(const shard_options& o, const std::vector<std::uint32_t>& tables,
                       const std::vector<std::uint64_t>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto owner = embedding::shard_of(tables[i], ids[i], o.shards);
    if (owner != o.index)
      return {errc::invalid_argument, o.name + " owns no row (" + std::to_string(tables[i]) + ", " +
                                          std::to_string(ids[i]) + "): it belongs to shard " + std::to_string(owner) +
                                          " of " + std::to_string(o.shards) + " (do trainer and shard agree on --shards?)"};
  }
  return status::ok();
}

body_ptr refuse(shard_counters& c, const status& st) {
  c.refused.fetch_add(1, std::memory_order_relaxed);
  if (st.code() == errc::resource_exhausted) c.table_full.fetch_add(1, std::memory_order_relaxed);
  return make_body(wire::error_reply{st.code(), st.message()});
}

body_ptr serve_lookup(embedding::shard_store& store, const shard_options& o, shard_counters& c,
                      const wire::lookup_request& req) {
  if (auto st = check_ownership(o, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  // A training lookup's batch moves the clock of a row TTL in examples.
  if (req.create) store.count_examples(req.examples);
  wire::lookup_reply reply;
  reply.dim = store.options().dim;
  reply.values.resize(req.ids.size() * reply.dim);
  if (auto st = store.lookup(req.tables.data(), req.ids.data(), req.ids.size(), req.create, reply.values.data());
      !st.is_ok())
    return refuse(c, st);
  c.lookups.fetch_add(1, std::memory_order_relaxed);
  c.rows_looked_up.fetch_add(req.ids.size(), std::memory_order_relaxed);
  return make_body(std::move(reply));
}

// A push of a trainer whose membership is over is refused (fenced); one applied before (a resend)
// is answered as applied, without applying it again. Checked after the request's own checks, so
// that a malformed push is refused for what it is.
body_ptr serve_push(embedding::shard_store& store, const shard_options& o, shard_counters& c, push_guard& guard,
                    const wire::push_request& req) {
  if (auto st = check_ownership(o, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  const std::size_t dim = store.options().dim;
  if (req.grads.size() != req.ids.size() * dim)
    return refuse(c, status(errc::invalid_argument, "push of " + std::to_string(req.ids.size()) + " rows carries " +
                                                        std::to_string(req.grads.size()) + " gradient values, expected " +
                                                        std::to_string(req.ids.size() * dim)));
  if (req.trainer != 0) {
    std::unique_lock<std::mutex> lock(guard.mu);
    if (guard.fence.fenced(req.trainer, req.membership)) {
      const std::uint64_t now = guard.fence.membership_of(req.trainer);
      lock.unlock();
      c.pushes_fenced.fetch_add(1, std::memory_order_relaxed);
      return make_body(wire::error_reply{
          errc::fenced, o.name + ": push " + std::to_string(req.number) + " of trainer " + io::hex(req.trainer, 16) +
                            " under membership " + std::to_string(req.membership) + " not applied: " +
                            (now == 0 ? std::string("the trainer was dropped from the job")
                                      : "the trainer holds membership " + std::to_string(now) + " now") +
                            " and its batches went to others"});
    }
    if (!guard.ledger.record(req.trainer, req.number)) {
      lock.unlock();
      c.pushes_duplicate.fetch_add(1, std::memory_order_relaxed);
      return make_body(wire::push_reply{0, true});
    }
  }
  if (auto st = store.push(req.tables.data(), req.ids.data(), req.ids.size(), req.grads.data(), req.lr_scale);
      !st.is_ok()) {
    if (req.trainer != 0) {
      std::lock_guard<std::mutex> lock(guard.mu);
      guard.ledger.forget(req.trainer, req.number);  // not applied: a resend may be
    }
    return refuse(c, st);
  }
  c.pushes.fetch_add(1, std::memory_order_relaxed);
  c.rows_pushed.fetch_add(req.ids.size(), std::memory_order_relaxed);
  return make_body(wire::push_reply{req.ids.size()});
}

// A prefetch hint. Without a memory budget every row is in RAM: the answer says so, and the
// trainer sends no more.
body_ptr serve_warm(embedding::shard_store& store, const shard_options& o, shard_counters& c,
                    const wire::warm_request& req) {
  if (!store.tiered()) return make_body(wire::warm_reply{0, false});
  if (auto st = check_ownership(o, req.tables, req.ids); !st.is_ok()) return refuse(c, st);
  c.warm_requests.fetch_add(1, std::memory_order_relaxed);
  auto warmed = store.warm(req.tables.data(), req.ids.data(), req.ids.size());
  if (!warmed.is_ok()) {
    // The lookup that follows reads the rows itself and reports the error if it persists.
    c.warm_errors.fetch_add(1, std::memory_order_relaxed);
    return make_body(wire::error_reply{warmed.error().code(), o.name + ": " + warmed.error().message()});
  }
  return make_body(wire::warm_reply{*warmed, true});
}

// A page of rows for the exported model: values only (no optimizer state), table by table.
body_ptr serve_dump(embedding::shard_store& store, shard_counters& c, const wire::dump_request& req) {
  wire::dump_reply reply;
  const std::size_t dim = store.options().dim, floats = store.row_floats();
  const std::size_t max_rows = std::clamp<std::size_t>(req.max_rows, 1, 1u << 20);
  std::vector<std::uint64_t> ids;
  std::vector<float> rows;
  std::uint32_t t = req.table;
  std::uint64_t position = req.position;
  for (; t < store.options().max_tables && reply.ids.size() < max_rows; ++t, position = 0) {
    const embedding::embedding_table* tab = store.existing_table(t);
    if (tab == nullptr) continue;
    ids.clear();
    rows.clear();
    position = tab->copy_rows(position, max_rows - reply.ids.size(), ids, rows);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      reply.tables.push_back(t);
      reply.ids.push_back(ids[i]);
      reply.values.insert(reply.values.end(), rows.begin() + static_cast<std::ptrdiff_t>(i * floats),
                          rows.begin() + static_cast<std::ptrdiff_t>(i * floats + dim));
    }
    if (position != 0) break;  // the page is full inside this table
  }
  reply.done = t >= store.options().max_tables;
  reply.next_table = t;
  reply.next_position = position;
  c.rows_dumped.fetch_add(reply.ids.size(), std::memory_order_relaxed);
  return make_body(std::move(reply));
}

// What a shard's status reads its fields from.
struct shard_view {
  const embedding::shard_store& store;
  const shard_options& o;
  const shard_counters& c;
  const embedding::shard_store_stats& s;
  const embedding::storage_io& io;
};

double seconds_of(std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

// The shard's status, declared once: its JSON key, type and help on /metrics, and how it is read.
const metrics::status_table<shard_view>& shard_fields() {
  using v = const shard_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<shard_view> table = {
      {"role", t::status_only, "The service's role.", [](v) { return "shard"; }},
      {"name", t::status_only, "The shard's name.", [](v x) { return x.o.name; }},
      {"index", t::status_only, "The shard's index.", [](v x) { return x.o.index; }},
      {"shards", t::status_only, "Shards in the job.", [](v x) { return x.o.shards; }},
      {"rows", t::gauge, "Embedding rows held.", [](v x) { return x.s.rows; }},
      {"bytes", t::gauge, "Bytes of embedding rows held.", [](v x) { return x.s.bytes; }},
      {"tables", t::gauge, "Embedding tables with rows here.", [](v x) { return x.s.tables; }},
      {"lookups", t::counter, "Lookup requests served.", [](v x) { return x.c.lookups.load(); }},
      {"rows_looked_up", t::counter, "Rows looked up.", [](v x) { return x.c.rows_looked_up.load(); }},
      {"pushes", t::counter, "Gradient pushes applied.", [](v x) { return x.c.pushes.load(); }},
      {"rows_pushed", t::counter, "Rows updated by pushes.", [](v x) { return x.c.rows_pushed.load(); }},
      {"refused", t::counter, "Requests refused.", [](v x) { return x.c.refused.load(); }},
      {"pushes_fenced", t::counter,
       "Pushes refused: sent under a trainer membership that is over (dropped, its batches went to others).",
       [](v x) { return x.c.pushes_fenced.load(); }},
      {"pushes_duplicate", t::counter, "Pushes applied before (resends): answered, not applied again.",
       [](v x) { return x.c.pushes_duplicate.load(); }},
      {"table_full_refusals", t::counter, "New rows refused because a table is full and nothing could make room.",
       [](v x) { return x.c.table_full.load(); }},
      {"max_rows_per_table", t::status_only, "Rows a table may hold (--max-rows-per-table; 0: no bound).",
       [](v x) { return x.store.options().max_rows_per_table; }},
      {"table_evictions", t::counter, "Rows a full table (--max-rows-per-table) evicted for good to make room.",
       [](v x) { return x.s.table_evictions; }},
      {"rows_held", t::gauge, "Rows of every table, in RAM and storage together.", [](v x) { return x.s.rows_held; }},
      {"row_ttl", t::status_only, "The row TTL (--row-ttl).",
       [](v x) { return embedding::describe(x.store.options().ttl); }},
      {"rows_expired", t::counter, "Rows deleted for not being touched within --row-ttl.",
       [](v x) { return x.s.rows_expired; }},
      {"ttl_clock", t::gauge, "The row TTL's clock: examples served, or unix seconds (mod 2^32).",
       [](v x) { return x.s.ttl_clock_now; }},
      {"busy_seconds", t::counter, "Seconds the shard's workers were busy.",
       [](v x) { return seconds_of(x.c.busy_ns.load()); }},
      {"persisted", t::gauge, "1 when rows are written to storage.", [](v x) { return x.o.storage != nullptr; }},
      {"storage_memory_bytes", t::gauge, "Memory the storage engine uses.",
       [](v x) { return x.o.storage ? x.o.storage->memory_bytes() : 0; }},
      {"storage_memory_bound_bytes", t::gauge, "The storage engine's memory bound.",
       [](v x) { return x.o.storage ? x.o.storage->memory_bound_bytes() : 0; }},
      {"dirty_rows", t::gauge, "Rows changed since they were last written.", [](v x) { return x.store.dirty_rows(); }},
      {"flushes", t::counter, "Writes of changed rows to storage.", [](v x) { return x.c.flushes.load(); }},
      {"rows_flushed", t::counter, "Rows written to storage.", [](v x) { return x.c.rows_flushed.load(); }},
      {"flush_seconds", t::counter, "Seconds spent writing rows to storage.",
       [](v x) { return seconds_of(x.c.flush_ns.load()); }},
      {"flush_errors", t::counter, "Writes to storage that failed.", [](v x) { return x.c.flush_errors.load(); }},
      {"checkpoints", t::counter, "Storage checkpoints taken.", [](v x) { return x.c.checkpoints.load(); }},
      {"last_checkpoint", t::status_only, "Id of the newest storage checkpoint.",
       [](v x) { return x.c.last_checkpoint.load(); }},
      {"last_checkpoint_seconds", t::gauge, "Seconds the newest checkpoint took.",
       [](v x) { return seconds_of(x.c.last_checkpoint_ns.load()); }},
      {"rows_restored", t::gauge, "Rows restored from storage at start.", [](v x) { return x.c.rows_restored.load(); }},
      {"tiered", t::status_only, "Whether rows are tiered between RAM and storage (a memory budget).",
       [](v x) { return x.store.tiered(); }},
      {"max_rows_in_memory", t::gauge,
       "Rows the memory budget keeps in RAM (0: no budget; rows then counts those in RAM).",
       [](v x) { return x.s.max_rows_in_memory; }},
      {"rows_stored", t::gauge,
       "Rows in the shard's storage, with a memory budget (RocksDB's estimate; rows_held counts them).",
       [](v x) { return x.s.rows_stored; }},
      {"hits", t::counter, "Row lookups and pushes that found the row in RAM (memory budget).",
       [](v x) { return x.s.hits; }},
      {"misses", t::counter, "Row lookups and pushes that read the row from storage (memory budget).",
       [](v x) { return x.s.misses; }},
      {"hit_rate", t::gauge, "Hits over hits and misses since the shard started (memory budget).",
       [](v x) { return x.s.hit_rate(); }},
      {"rows_loaded", t::counter, "Rows read back from storage into RAM (memory budget).",
       [](v x) { return x.s.loaded; }},
      {"evictions", t::counter, "Rows evicted from RAM to stay within the memory budget.",
       [](v x) { return x.s.evictions; }},
      {"over_budget", t::counter, "New rows let in over the memory budget (nothing evictable yet).",
       [](v x) { return x.s.over_budget; }},
      {"peak_rows_in_memory", t::gauge, "The most rows RAM held at once (memory budget).",
       [](v x) { return x.s.peak_rows_in_memory; }},
      {"pressure_flushes", t::counter, "Flushes run early because RAM was past the memory budget.",
       [](v x) { return x.c.pressure_flushes.load(); }},
      {"warm_requests", t::counter, "Prefetch hints served (memory budget).",
       [](v x) { return x.c.warm_requests.load(); }},
      {"warm_errors", t::counter, "Prefetch hints whose read from storage failed.",
       [](v x) { return x.c.warm_errors.load(); }},
      {"rows_warmed", t::counter, "Rows read from storage into RAM ahead of their lookup by hints.",
       [](v x) { return x.s.warmed; }},
      {"warm_skipped", t::counter, "Hinted rows left in storage: RAM was full of rows that may not go yet.",
       [](v x) { return x.s.warm_skipped; }},
      {"admit_after", t::gauge, "Lookups an id needs before it gets a row (--admit-after; 1: no admission).",
       [](v x) { return x.s.admit_after; }},
      {"admission_bytes", t::gauge, "Bytes of the admission sketch.", [](v x) { return x.s.admission_bytes; }},
      {"admission_refused", t::counter, "Lookups served initial values: the id is not admitted yet.",
       [](v x) { return x.s.admission_refused; }},
      {"gradients_dropped", t::counter, "Row gradients dropped: the id is not admitted yet.",
       [](v x) { return x.s.gradients_dropped; }},
      {"admissions", t::counter, "Rows made for ids that passed admission.", [](v x) { return x.s.admissions; }},
      {"storage_reads", t::counter, "Batched row reads from storage (a memory budget's misses).",
       [](v x) { return x.io.reads; }},
      {"storage_rows_read", t::counter, "Rows those reads found in storage.", [](v x) { return x.io.rows_read; }},
      {"storage_bytes_read", t::counter, "Bytes those reads returned.", [](v x) { return x.io.bytes_read; }},
      {"storage_rows_written", t::counter, "Rows written to storage.", [](v x) { return x.io.rows_written; }},
      {"storage_bytes_written", t::counter, "Bytes of rows written to storage.",
       [](v x) { return x.io.bytes_written; }},
      {"storage_read_p50_ms", t::gauge, "Median latency of a batched read from storage.",
       [](v x) { return x.io.read_p50_ms; }},
      {"storage_read_p99_ms", t::gauge, "99th percentile latency of a batched read from storage.",
       [](v x) { return x.io.read_p99_ms; }},
  };
  return table;
}

body_ptr serve_status(embedding::shard_store& store, const shard_options& o, shard_counters& c) {
  const auto s = store.stats();
  const auto io = o.storage ? o.storage->io() : embedding::storage_io{};
  return make_body(wire::status_reply{metrics::to_json(shard_fields(), shard_view{store, o, c, s, io})});
}

caf::behavior shard_worker(caf::stateful_actor<shard_worker_state>* self,
                           std::shared_ptr<embedding::shard_store> store, shard_options options,
                           std::shared_ptr<shard_counters> counters, std::shared_ptr<push_guard> guard) {
  (void)self;
  return {
      // The trainers of the view: whose pushes are fenced (any worker of the pool takes it).
      [guard](view_atom, const wire::cluster_view& view) { guard->follow(view); },
      [](state_atom, wire::job_state) {},  // sent with the view; nothing to do with it
      [store, options, counters, guard](serve_atom, const envelope_ptr& env) -> body_ptr {
        const auto start = std::chrono::steady_clock::now();
        body_ptr out;
        if (const auto* req = std::get_if<wire::lookup_request>(&env->message)) {
          out = serve_lookup(*store, options, *counters, *req);
        } else if (const auto* push = std::get_if<wire::push_request>(&env->message)) {
          out = serve_push(*store, options, *counters, *guard, *push);
        } else if (const auto* dump = std::get_if<wire::dump_request>(&env->message)) {
          out = serve_dump(*store, *counters, *dump);
        } else if (const auto* warm = std::get_if<wire::warm_request>(&env->message)) {
          out = serve_warm(*store, options, *counters, *warm);
        } else if (std::holds_alternative<wire::status_request>(env->message)) {
          out = serve_status(*store, options, *counters);
        } else {
          out = refuse(*counters, status(errc::invalid_argument, std::string("a shard does not serve ") +
                                                                     wire::message_name(env->message)));
        }
        counters->busy_ns.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                   std::chrono::steady_clock::now() - start)
                                                                   .count()),
                                    std::memory_order_relaxed);
        return out;
      },
  };
}

// With a memory budget: serves the trainers' prefetch hints.
struct prefetcher_state {
  static inline const char* name = "shard-prefetcher";
};

caf::behavior prefetcher(caf::stateful_actor<prefetcher_state>* self, std::shared_ptr<embedding::shard_store> store,
                         shard_options options, std::shared_ptr<shard_counters> counters) {
  (void)self;
  return {
      [store, options, counters](serve_atom, const envelope_ptr& env) -> body_ptr {
        if (const auto* req = std::get_if<wire::warm_request>(&env->message))
          return serve_warm(*store, options, *counters, *req);
        return make_body(wire::error_reply{errc::invalid_argument, std::string("the prefetcher does not serve ") +
                                                                       wire::message_name(env->message)});
      },
  };
}

// ---- persistence ------------------------------------------------------------------------

struct persister_state {
  static inline const char* name = "shard-persister";
  std::shared_ptr<embedding::shard_store> store;
  shard_options options;
  std::shared_ptr<shard_counters> counters;
  std::vector<std::uint32_t> tables;  // scratch: the table of each row of a write
};
using persister_actor = caf::stateful_actor<persister_state>;

// Writes rows the store hands over, and deletes those it evicted for good (`take`: take_dirty's or
// write_back's, called with both sinks, a stripe or a table at a
// time) to storage; with a memory budget, then evicts down to it. Counted as a flush.
template <class Take>
status write_rows(persister_actor* self, Take&& take) {
  auto& st = self->state;
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t rows = 0;
  const embedding::shard_store::dirty_sink write = [&](std::uint32_t t, const std::uint64_t* ids, const float* values,
                                                       std::size_t n) {
    st.tables.assign(n, t);
    rows += n;
    return st.options.storage->write(st.tables.data(), ids, values, n);
  };
  const embedding::shard_store::erase_sink erase = [&](std::uint32_t t, const std::uint64_t* ids, std::size_t n) {
    st.tables.assign(n, t);
    return st.options.storage->erase(st.tables.data(), ids, n);
  };
  status written = take(write, erase);
  // The rows written may go now: RAM back to the budget, off the requests' path.
  if (written.is_ok()) st.store->shrink_to_budget();
  auto& c = *st.counters;
  c.flushes.fetch_add(1, std::memory_order_relaxed);
  c.rows_flushed.fetch_add(rows, std::memory_order_relaxed);
  c.flush_ns.fetch_add(static_cast<std::uint64_t>(
                           std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
                               .count()),
                       std::memory_order_relaxed);
  if (!written.is_ok()) {
    // The rows stay in memory (and are marked clean): the next snapshot's checkpoint lacks them,
    // which the error makes visible. Without a memory budget the shard goes on serving. With one,
    // storage is where the rows beyond the budget live and what an export reads: it now lacks
    // rows, so the job cannot end with a whole model. The shard stops serving the job, saying
    // why; nothing is evicted any more, and the checkpoints taken before stay as they were.
    c.flush_errors.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("{}: writing changed rows to storage failed: {}", st.options.name, written.message());
    if (st.store->tiered()) {
      std::lock_guard<std::mutex> lock(c.mu);
      if (c.error.empty())
        c.error = "writing rows back to storage failed (" + written.message() +
                  "); with --memory-budget-mb its storage must hold every row, so the shard cannot go on. "
                  "Make room and resume from the last snapshot";
    }
  }
  return written;
}

// With a row TTL: the clock (set from the wall clock when it counts seconds), then the rows that
// expired go (for the next flush to delete from storage). Stored rows: at most this many looked at
// per sweep, the next sweep going on from there.
constexpr std::size_t stored_rows_per_sweep = std::size_t{1} << 20;

void sweep_expired(embedding::shard_store& store, const shard_options& o) {
  if (!store.options().ttl.enabled()) return;
  store.read_wall_clock(o.unix_seconds());
  if (auto swept = store.sweep_expired(stored_rows_per_sweep); !swept.is_ok())
    spdlog::warn("{}: {} (expired rows stay until the next sweep)", o.name, swept.error().message());
}

// The clock of a row TTL in examples, kept with the rows so that a restarted shard goes on from it.
constexpr const char* ttl_clock_key = "ttl_clock";

// Writes every row changed since the last flush, and deletes those evicted for good; expired rows
// go first, and full tables of a tiered shard give up cold rows. The store hands them over a
// stripe at a time.
status flush(persister_actor* self) {
  sweep_expired(*self->state.store, self->state.options);
  if (auto trimmed = self->state.store->trim_full_tables(); !trimmed.is_ok())
    spdlog::warn("{}: {} (the tables stay over their limit until the next flush)", self->state.options.name,
                 trimmed.error().message());
  auto& st = self->state;
  SS_RETURN_IF_ERROR(write_rows(self, [self](const embedding::shard_store::dirty_sink& write,
                                             const embedding::shard_store::erase_sink& erase) {
    return self->state.store->take_dirty(write, erase);
  }));
  if (st.store->options().ttl.enabled())
    return st.options.storage->set_meta(ttl_clock_key, std::to_string(st.store->clock()));
  return status::ok();
}

// With a memory budget and RAM past it: writes back the rows eviction takes next, and evicts them.
status write_back(persister_actor* self) {
  return write_rows(self, [self](const embedding::shard_store::dirty_sink& write, const embedding::shard_store::erase_sink&) {
    auto written = self->state.store->write_back(write);
    return written.is_ok() ? status::ok() : written.error();
  });
}

// A page of the exported model from a shard with a memory budget: from storage, which holds every
// row once the changed ones are flushed (the rows in RAM are not all the rows). The position is
// the next key, (next_table, next_position = id).
body_ptr serve_stored_dump(persister_actor* self, const wire::dump_request& req) {
  auto& st = self->state;
  if (auto f = flush(self); !f.is_ok()) return make_body(wire::error_reply{f.code(), st.options.name + ": " + f.message()});
  const std::size_t dim = st.store->options().dim;
  const std::size_t max_rows = std::clamp<std::size_t>(req.max_rows, 1, 1u << 20);
  wire::dump_reply reply;
  auto paged = st.options.storage->scan_from(req.table, req.position, max_rows,
                                             [&](std::uint32_t t, std::uint64_t id, const float* row) {
                                               reply.tables.push_back(t);
                                               reply.ids.push_back(id);
                                               reply.values.insert(reply.values.end(), row, row + dim);
                                             });
  if (!paged.is_ok())
    return make_body(wire::error_reply{paged.error().code(), st.options.name + ": " + paged.error().message()});
  // The key after the page's last: the next id, or the next table's first past the last id.
  const std::uint32_t max_tables = st.store->options().max_tables;
  reply.next_table = max_tables;
  if (*paged == max_rows) {
    const bool last_id = reply.ids.back() == ~0ULL;
    reply.next_table = reply.tables.back() + (last_id ? 1 : 0);
    reply.next_position = last_id ? 0 : reply.ids.back() + 1;
  }
  reply.done = reply.next_table >= max_tables;
  st.counters->rows_dumped.fetch_add(reply.ids.size(), std::memory_order_relaxed);
  return make_body(std::move(reply));
}

body_ptr serve_snapshot(persister_actor* self, const wire::snapshot_request& req) {
  auto& st = self->state;
  const auto start = std::chrono::steady_clock::now();
  auto& storage = *st.options.storage;
  if (auto f = flush(self); !f.is_ok()) return make_body(wire::error_reply{f.code(), st.options.name + ": " + f.message()});
  // A checkpoint left by an abandoned attempt at this snapshot is replaced.
  if (auto existing = storage.checkpoints(); existing.is_ok()) {
    for (const auto& cp : *existing)
      if (cp.id == req.snapshot_id) (void)storage.drop(cp.id);
  }
  auto cp = storage.checkpoint(req.snapshot_id);
  if (!cp.is_ok())
    return make_body(wire::error_reply{cp.error().code(), st.options.name + ": checkpoint " +
                                                              std::to_string(req.snapshot_id) + ": " + cp.error().message()});
  // Retention: the coordinator names the other snapshots it keeps.
  if (auto existing = storage.checkpoints(); existing.is_ok()) {
    for (const auto& old : *existing) {
      if (old.id == req.snapshot_id || std::find(req.keep.begin(), req.keep.end(), old.id) != req.keep.end()) continue;
      if (auto d = storage.drop(old.id); !d.is_ok())
        spdlog::warn("{}: dropping checkpoint {}: {}", st.options.name, old.id, d.message());
    }
  }
  const auto took = std::chrono::steady_clock::now() - start;
  auto& c = *st.counters;
  c.checkpoints.fetch_add(1, std::memory_order_relaxed);
  c.last_checkpoint.store(req.snapshot_id, std::memory_order_relaxed);
  c.last_checkpoint_ns.store(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()),
      std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(took).count();
  spdlog::info("{}: checkpoint {} of {} rows ({:.1f} MB) in {:.2f}s", st.options.name, cp->id, cp->rows,
               static_cast<double>(cp->bytes) / 1e6, seconds);
  return make_body(wire::snapshot_reply{cp->id, cp->path, cp->rows, cp->bytes, cp->checksum, seconds});
}

// The flush interval as a timer's period (at least 10 ms; a shard that never flushes, flush
// interval 0, still sweeps every 5 s).
caf::timespan flush_period(const shard_options& o) {
  const double seconds = o.flush_interval > 0 ? o.flush_interval : 5.0;
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(std::max(0.01, seconds)));
}

// How often a persister with a memory budget looks whether RAM is past it (an atomic load).
constexpr auto pressure_check = std::chrono::milliseconds(20);
using pressure_atom = caf::atom_constant<caf::atom("pressure")>;

caf::behavior persister(persister_actor* self, std::shared_ptr<embedding::shard_store> store, shard_options options,
                        std::shared_ptr<shard_counters> counters) {
  auto& st = self->state;
  st.store = std::move(store);
  st.options = std::move(options);
  st.counters = std::move(counters);
  const auto every = flush_period(st.options);
  if (st.options.flush_interval > 0) self->delayed_send(self, every, tick_atom::value);
  if (st.store->tiered()) self->delayed_send(self, pressure_check, pressure_atom::value);
  return {
      [self, every](tick_atom) {
        (void)flush(self);
        self->delayed_send(self, every, tick_atom::value);
      },
      // With a memory budget, the rows that may not be evicted are the ones changed since the last
      // flush: when they pile up past the budget, the next ones eviction would take are written
      // back now and go, instead of RAM growing by what a whole flush interval touches.
      [self](pressure_atom) {
        auto& state = self->state;
        // Not after a failed flush: the shard is stopping with that error, and a full disk
        // would only fail again.
        if (state.store->under_pressure() && state.counters->flush_errors.load() == 0) {
          state.counters->pressure_flushes.fetch_add(1, std::memory_order_relaxed);
          (void)write_back(self);
        }
        self->delayed_send(self, pressure_check, pressure_atom::value);
      },
      [self](flush_atom) -> bool { return flush(self).is_ok(); },
      [self](serve_atom, const envelope_ptr& env) -> body_ptr {
        if (const auto* req = std::get_if<wire::snapshot_request>(&env->message)) return serve_snapshot(self, *req);
        if (const auto* req = std::get_if<wire::dump_request>(&env->message)) return serve_stored_dump(self, *req);
        return make_body(wire::error_reply{errc::invalid_argument, std::string("the persister does not serve ") +
                                                                       wire::message_name(env->message)});
      },
  };
}

// A row TTL's sweeps every flush interval, for a shard without storage (the persister sweeps
// before each flush otherwise).
caf::behavior sweeper(caf::event_based_actor* self, std::shared_ptr<embedding::shard_store> store,
                      shard_options options) {
  const auto every = flush_period(options);
  self->delayed_send(self, every, tick_atom::value);
  return {
      [self, store, options, every](tick_atom) {
        sweep_expired(*store, options);
        self->delayed_send(self, every, tick_atom::value);
      },
  };
}

// Reads every stored row (which verifies each record) into the store. With a memory budget,
// only the first rows that fit are kept in RAM: the others stay in storage until looked up.
status load(embedding::shard_store& store, embedding::durable_rows& storage, shard_counters& c) {
  std::uint64_t rows = 0;
  const std::uint64_t keep = store.tiered() ? store.options().max_rows_in_memory : ~0ULL;
  status bad = status::ok();
  auto scanned = storage.scan([&](std::uint32_t t, std::uint64_t id, const float* row) {
    if (!bad.is_ok()) return;
    bad = rows < keep ? store.put(t, id, row) : store.count_stored(t);
    ++rows;
  });
  SS_RETURN_IF_ERROR(scanned);
  SS_RETURN_IF_ERROR(bad);
  c.rows_restored.store(rows, std::memory_order_relaxed);
  // The clock the rows were touched at goes on from where it was (a row TTL in examples).
  if (auto clock = storage.get_meta(ttl_clock_key); clock.is_ok()) {
    char* end = nullptr;
    const unsigned long long now = std::strtoull(clock->c_str(), &end, 10);
    if (end == clock->c_str() || *end != '\0')
      return {errc::corrupt, "its stored row TTL clock \"" + *clock + "\" is not a number"};
    store.set_clock(static_cast<std::uint32_t>(now));
  }
  return status::ok();
}

// Which shard of the job the storage holds, "<index> of <shards>": recorded with the job id whenever
// a shard loads or claims the storage.
std::string shard_claim(const shard_options& o) {
  return std::to_string(o.index) + " of " + std::to_string(o.shards);
}

status claim(embedding::durable_rows& storage, const std::string& job_hex, const shard_options& o) {
  SS_RETURN_IF_ERROR(storage.set_meta("job_id", job_hex));
  return storage.set_meta("shard", shard_claim(o));
}

// Another shard's rows of this job (a data directory given to the wrong --index) would serve none
// of this shard's keys and lose that shard's: refused. Storage written before the claim existed
// passes.
status check_same_shard(const embedding::durable_rows& storage, const std::string& job_hex, const shard_options& o) {
  auto owner = storage.get_meta("shard");
  if (!owner.is_ok() || *owner == shard_claim(o)) return status::ok();
  return status(errc::not_found, "its storage holds the rows of shard " + *owner + " of this job " + job_hex +
                                     ", not of shard " + shard_claim(o) +
                                     " (is its data directory another shard's, or its --index wrong?); the shard "
                                     "does not serve them: give it its own data directory");
}

// Restores the newest checkpoint of job `job_hex` with an id <= `at_most` that verifies; logs each
// one skipped.
result<std::uint64_t> restore_checkpoint(embedding::shard_store& store, embedding::durable_rows& storage,
                                         std::uint64_t at_most, const std::string& job_hex, const shard_options& o,
                                         shard_counters& c) {
  auto list = storage.checkpoints();
  if (!list.is_ok()) return list.error();
  if (at_most != ~0ULL && std::none_of(list->begin(), list->end(), [at_most](const auto& cp) { return cp.id == at_most; }))
    spdlog::error("{}: checkpoint {} is missing; trying an older one", o.name, at_most);
  for (auto it = list->rbegin(); it != list->rend(); ++it) {
    if (it->id > at_most) continue;
    auto restored = storage.restore(it->id);
    if (restored.is_ok()) {
      // Checked before its rows are loaded: another job's checkpoint is not this job's rows.
      auto owner = storage.get_meta("job_id");
      if (owner.is_ok() && *owner != job_hex) restored = status(errc::not_found, "it holds rows of job " + *owner);
      if (restored.is_ok()) restored = check_same_shard(storage, job_hex, o);
    }
    if (restored.is_ok()) restored = load(store, storage, c);
    if (restored.is_ok()) return it->id;
    spdlog::error("{}: checkpoint {} is unusable: {}; trying an older one", o.name, it->id, restored.message());
  }
  return status(errc::not_found, "no checkpoint" + (at_most == ~0ULL ? std::string() : " up to " + std::to_string(at_most)) +
                                     " verifies");
}

// The live rows cannot serve (`why`, logged): loads the newest checkpoint that verifies and says
// so with `note`. When none does, `none_left` turns that error into the shard's reason not to start.
result<std::string> newest_checkpoint_instead(embedding::shard_store& store, embedding::durable_rows& storage,
                                              const std::string& job_hex, const std::string& why,
                                              const std::string& note,
                                              const std::function<status(const status&)>& none_left,
                                              const shard_options& o, shard_counters& c) {
  spdlog::error("{}: {}; falling back to the newest checkpoint", o.name, why);
  auto id = restore_checkpoint(store, storage, ~0ULL, job_hex, o, c);
  if (!id.is_ok()) return none_left(id.error());
  SS_RETURN_IF_ERROR(claim(storage, job_hex, o));
  return "rows of checkpoint " + std::to_string(*id) + " (" + note + "): " + std::to_string(c.rows_restored.load()) +
         " rows";
}

}  // namespace

metrics::field_list shard_field_list() { return metrics::describe(shard_fields()); }

result<std::string> restore_rows(embedding::shard_store& store, embedding::durable_rows& storage, std::uint64_t job_id,
                                 std::uint64_t restore_snapshot, bool job_was_running, const shard_options& o,
                                 shard_counters& c) {
  const std::string job_hex = io::hex(job_id, 16);
  auto stored_job = storage.get_meta("job_id");
  if (stored_job.is_ok() && *stored_job == job_hex) SS_RETURN_IF_ERROR(check_same_shard(storage, job_hex, o));
  if (!stored_job.is_ok() && job_was_running && restore_snapshot == 0 && storage.live_damage().empty()) {
    // A restart into the running job with storage that never saw it: the rows are gone.
    const std::string why = "its storage holds nothing of this job, which is running (was its data directory "
                            "deleted or replaced?)";
    return newest_checkpoint_instead(store, storage, job_hex, why, "its storage had lost them", [&why](const status&) {
      return status(errc::not_found, why + ", and no checkpoint can replace its rows: the shard does not serve an "
                                           "empty table; restore its data directory and resume the job, or run "
                                           "it again from the start");
    }, o, c);
  }
  if (stored_job.is_ok() && *stored_job != job_hex && (job_was_running || restore_snapshot > 0)) {
    // A job that has rows somewhere, and this storage is another job's (its data directory
    // replaced, or pointed at another job's): neither clear that job's rows nor serve none.
    return status(errc::not_found,
                  "its storage holds rows of job " + *stored_job + ", not of this job " + job_hex + ", which " +
                      (restore_snapshot > 0 ? "resumes from snapshot " + std::to_string(restore_snapshot)
                                            : std::string("is running")) +
                      (restore_snapshot > 0 ? " (are the snapshots, or its data directory, another job's?)"
                                            : " (is its data directory another job's?)") +
                      "; the shard neither clears them nor serves an empty "
                      "table: give it this job's data directory, or run the job again from the start");
  }
  if (stored_job.is_ok() && *stored_job != job_hex) {
    spdlog::warn("{}: the storage holds rows of job {}, not of this job {}: clearing it", o.name, *stored_job, job_hex);
    SS_RETURN_IF_ERROR(storage.clear());
    if (auto list = storage.checkpoints(); list.is_ok())
      for (const auto& cp : *list) (void)storage.drop(cp.id);
  }
  SS_RETURN_IF_ERROR(claim(storage, job_hex, o));
  if (restore_snapshot > 0) {
    auto id = restore_checkpoint(store, storage, restore_snapshot, job_hex, o, c);
    if (!id.is_ok() && stored_job.is_ok() && *stored_job == job_hex && storage.live_damage().empty()) {
      // No checkpoint of the snapshot is left, but the live rows are this job's, flushed after
      // the snapshot: newer, not lost. The examples since the snapshot are trained again.
      spdlog::error("{}: resuming from snapshot {}: {}; using its live rows instead (newer than the snapshot: the "
                    "examples since it are trained twice)", o.name, restore_snapshot, id.error().message());
      auto live = load(store, storage, c);
      if (live.is_ok())
        return "its live rows (no checkpoint of snapshot " + std::to_string(restore_snapshot) + " was left): " +
               std::to_string(c.rows_restored.load()) + " rows";
      return live.with_context("resuming from snapshot " + std::to_string(restore_snapshot) + ": " + id.error().message() +
                               ", and the live rows are unusable");
    }
    if (!id.is_ok()) return id.error().with_context("resuming from snapshot " + std::to_string(restore_snapshot));
    SS_RETURN_IF_ERROR(claim(storage, job_hex, o));
    if (*id != restore_snapshot)
      return "rows of checkpoint " + std::to_string(*id) + " (checkpoint " + std::to_string(restore_snapshot) +
             " was missing or corrupt): " + std::to_string(c.rows_restored.load()) + " rows";
    return "rows of snapshot " + std::to_string(*id) + ": " + std::to_string(c.rows_restored.load()) + " rows";
  }
  if (const std::string damage = storage.live_damage(); !damage.empty()) {
    // Its rows are gone with the damaged database: an empty table is not the job's.
    return newest_checkpoint_instead(
        store, storage, job_hex, "its stored rows are unusable: " + damage, "the stored rows were unusable",
        [&damage](const status& none) {
          return none.with_context("its stored rows are unusable (" + damage +
                                   ") and no checkpoint can replace them; the shard does not serve an empty table");
        },
        o, c);
  }
  auto live = load(store, storage, c);
  if (live.is_ok()) return "its stored rows: " + std::to_string(c.rows_restored.load()) + " rows";
  return newest_checkpoint_instead(
      store, storage, job_hex, "the stored rows are unusable: " + live.message(), "the stored rows were unusable",
      [&live](const status& none) { return none.with_context("the stored rows are unusable (" + live.message() + ")"); },
      o, c);
}

shard_actors spawn_shard(caf::actor_system& sys, const caf::actor& gateway,
                         std::shared_ptr<embedding::shard_store> store, const shard_options& options,
                         std::shared_ptr<shard_counters> counters) {
  auto guard = std::make_shared<push_guard>();
  auto factory = [&sys, store, options, counters, guard] {
    return sys.spawn(shard_worker, store, options, counters, guard);
  };
  shard_actors out;
  out.pool = caf::actor_pool::make(sys.dummy_execution_unit(), static_cast<std::size_t>(std::max(1, options.workers)),
                                   factory, caf::actor_pool::round_robin());
  // With a memory budget the export reads storage, which only the persister writes: its pages go
  // there, after a flush.
  const bool stored_dump = store->tiered() && options.storage;
  for (std::size_t kind : {kind_of<wire::lookup_request>(), kind_of<wire::push_request>(),
                           kind_of<wire::dump_request>(), kind_of<wire::status_request>()})
    if (!(stored_dump && kind == kind_of<wire::dump_request>())) caf::anon_send(gateway, route_atom::value, kind, out.pool);
  if (stored_dump) {
    // Hints read storage: a thread of their own (detached), so that a burst of them never holds
    // up a lookup in the pool; a hint that waits its turn only finds its rows there already.
    out.prefetcher = sys.spawn<caf::detached>(prefetcher, store, options, counters);
    caf::anon_send(gateway, route_atom::value, kind_of<wire::warm_request>(), out.prefetcher);
  } else {
    caf::anon_send(gateway, route_atom::value, kind_of<wire::warm_request>(), out.pool);
  }
  store->read_wall_clock(options.unix_seconds());  // a row TTL in seconds: before the first touch
  if (!options.storage && store->options().ttl.enabled()) {
    // Without storage nothing flushes: a sweeper of its own, on its own thread (a sweep walks
    // every row in RAM).
    out.sweeper = sys.spawn<caf::detached>(sweeper, store, options);
  }
  if (options.storage) {
    // Detached: writing to storage blocks on disk, never a scheduler thread.
    out.persister = sys.spawn<caf::detached>(persister, store, options, counters);
    caf::anon_send(gateway, route_atom::value, kind_of<wire::snapshot_request>(), out.persister);
    if (stored_dump) caf::anon_send(gateway, route_atom::value, kind_of<wire::dump_request>(), out.persister);
  }
  return out;
}

}  // namespace ss::actors
