// The shard's persister (changed rows to storage, checkpoints, the export from storage) and, for
// a shard without storage, its TTL sweeper.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <tuple>
#include <utility>

#include "parts.hpp"

namespace ss::actors::shard_parts {
namespace {


// Writes rows the store hands over, and deletes those it evicted for good (`take`: take_dirty's or
// write_back's, called with both sinks, a stripe or a table at a
// time) to storage; with a memory budget, then evicts down to it. Counted as a flush.
template <class Take>
status write_rows(persister_self self, Take&& take) {
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

// The key after (table, id) in storage's order: the next id, or the next table's first past the
// last id. Where a page of stored rows read up to (table, id) goes on.
std::pair<std::uint32_t, std::uint64_t> key_after(std::uint32_t table, std::uint64_t id) {
  return id == ~0ULL ? std::make_pair(table + 1, std::uint64_t{0}) : std::make_pair(table, id + 1);
}

// A row TTL's clock, stored with the rows so that a restarted shard goes on from it.
status store_clock(persister_state& st) {
  if (!st.store->options().ttl.enabled()) return status::ok();
  return st.options.storage->set_meta(ttl_clock_key, std::to_string(st.store->clock()));
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


// Writes every row changed since the last flush, and deletes those evicted for good; expired rows
// go first, and full tables of a tiered shard give up cold rows. The store hands them over a
// stripe at a time.
status flush(persister_self self) {
  sweep_expired(*self->state.store, self->state.options);
  if (auto trimmed = self->state.store->trim_full_tables(); !trimmed.is_ok())
    spdlog::warn("{}: {} (the tables stay over their limit until the next flush)", self->state.options.name,
                 trimmed.error().message());
  auto& st = self->state;
  SS_RETURN_IF_ERROR(write_rows(self, [self](const embedding::shard_store::dirty_sink& write,
                                             const embedding::shard_store::erase_sink& erase) {
    return self->state.store->take_dirty(write, erase);
  }));
  return store_clock(st);
}

// With a memory budget and RAM past it: writes back the rows eviction takes next, and evicts them.
status write_back(persister_self self) {
  return write_rows(self, [self](const embedding::shard_store::dirty_sink& write, const embedding::shard_store::erase_sink&) {
    auto written = self->state.store->write_back(write);
    return written.is_ok() ? status::ok() : written.error();
  });
}

body_ptr refusal(errc code, const std::string& why) { return make_body(wire::error_reply{code, why}); }

// A live reshard's rows changed since their copy, from a shard with a memory budget, under the
// hold (nothing changes; everything is flushed first): those in RAM marked for the move (tables
// 0..max_tables-1, as page_from_ram pages them), then those that left RAM since the copy began
// (page_left_rows), read from storage: there (left marked, or made anew after a drop), a row;
// not there (given up for good, its deletion stored by the flush), a tombstone.
body_ptr serve_stored_changes(persister_self self, const embedding::placement& to, const wire::dump_request& req) {
  auto& st = self->state;
  const std::uint32_t max_tables = st.store->options().max_tables;
  const std::size_t max_rows = std::clamp<std::size_t>(req.max_rows, 1, 1u << 20);
  const std::size_t floats = st.store->row_floats();
  wire::dump_reply reply;
  std::uint32_t t = req.table;
  std::uint64_t position = req.position;
  if (t < max_tables) std::tie(t, position) = page_from_ram(*st.store, &to, req, max_rows, reply);
  if (t >= max_tables && t < 2 * max_tables && reply.ids.empty()) {
    std::vector<std::uint32_t> tables;
    std::vector<float> rows;
    std::vector<std::uint8_t> present;
    const left_rows_standing as_stored = [&](std::uint32_t table, const std::vector<std::uint64_t>& ids,
                                             wire::dump_reply& page) -> status {
      tables.assign(ids.size(), table);
      rows.resize(ids.size() * floats);
      present.assign(ids.size(), 0);
      SS_RETURN_IF_ERROR(st.options.storage->read(tables.data(), ids.data(), ids.size(), rows.data(), present.data()));
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (present[i] == 0) {
          page.gone_tables.push_back(table);
          page.gone_ids.push_back(ids[i]);
          continue;
        }
        page.tables.push_back(table);
        page.ids.push_back(ids[i]);
        add_to_page(page, *st.store, true, rows.data() + i * floats);
      }
      return status::ok();
    };
    auto left = page_left_rows(*st.store, to, req, t, position, max_rows, reply, as_stored);
    if (!left.is_ok())
      return refusal(left.error().code(),
                     st.options.name + ": reading rows that left RAM since their copy: " + left.error().message());
    std::tie(t, position) = *left;
  }
  reply.next_table = t;
  reply.next_position = position;
  reply.done = t >= 2 * max_tables;
  return sealed_page(std::move(reply), floats, *st.counters);
}

// A page of rows from a shard with a memory budget (dump_request: the exported model's values, or
// the whole rows a placement gives to one shard): from storage, which holds every row once the
// changed ones are flushed (the rows in RAM are not all the rows). The position is the next key,
// (next_table, next_position = id), after the last row read, kept or not. A live reshard's copy
// while the job trains reads storage the same way, without a flush first, and the rows of the page
// that RAM holds unchanged since the last flush lose their move mark; the rows changed since come
// under the hold (serve_stored_changes).
body_ptr serve_stored_dump(persister_self self, const wire::dump_request& req) {
  auto& st = self->state;
  auto to = placement_of_dump(st.options, *st.paged, req);
  if (!to.is_ok()) return make_body(wire::error_reply{to.error().code(), to.error().message()});
  if (req.pass != wire::move_pass::whole) {
    if (auto why = live_copy_refusal(st.options, req); !why.is_ok()) return refusal(why.code(), why.message());
    if (req.pass == wire::move_pass::copy) st.store->track_moves(true);
  }
  // A copy while the job trains reads storage as the last flush left it: a row RAM holds changed
  // since keeps its mark and comes under the hold (a flush per page cost more than it saved).
  if (req.pass != wire::move_pass::copy) {
    if (auto f = flush(self); !f.is_ok())
      return make_body(wire::error_reply{f.code(), st.options.name + ": " + f.message()});
  }
  if (req.pass == wire::move_pass::changed) return serve_stored_changes(self, **to, req);
  const std::size_t keep = req.whole_rows ? st.store->row_floats() : st.store->options().dim;
  const std::size_t max_rows = std::clamp<std::size_t>(req.max_rows, 1, 1u << 20);
  wire::dump_reply reply;
  std::uint32_t last_table = 0;
  std::uint64_t last_id = 0;
  // A copy while the job trains skips a stored row given up for good whose deletion no flush stored
  // yet (one given up later is remembered, and goes as a tombstone under the hold).
  const bool copying = req.pass == wire::move_pass::copy;
  auto paged = st.options.storage->scan_from(req.table, req.position, max_rows,
                                             [&](std::uint32_t t, std::uint64_t id, const float* row) {
                                               last_table = t;
                                               last_id = id;
                                               if (*to && (*to)->shard_of(t, id) != req.placement_index) return;
                                               if (copying) {
                                                 const auto* tab = st.store->existing_table(t);
                                                 if (tab != nullptr && tab->awaits_deletion(id)) return;
                                               }
                                               reply.tables.push_back(t);
                                               reply.ids.push_back(id);
                                               add_to_page(reply, *st.store, req.whole_rows, row);
                                             });
  if (!paged.is_ok())
    return make_body(wire::error_reply{paged.error().code(), st.options.name + ": " + paged.error().message()});
  // The key after the last one read: the next id, or the next table's first past the last id.
  const std::uint32_t max_tables = st.store->options().max_tables;
  reply.next_table = max_tables;
  if (*paged == max_rows) std::tie(reply.next_table, reply.next_position) = key_after(last_table, last_id);
  reply.done = reply.next_table >= max_tables;
  if (req.pass == wire::move_pass::copy) {
    // Storage holds these rows as the last flush left them (only this actor flushes): those RAM
    // holds unchanged since are copied as they stand. The page is in key order, a table's rows
    // together.
    for (std::size_t i = 0, j = 0; i < reply.ids.size(); i = j) {
      while (j < reply.ids.size() && reply.tables[j] == reply.tables[i]) ++j;
      if (embedding::embedding_table* tab = st.store->existing_table(reply.tables[i]))
        tab->unmark_copied_if_clean(reply.ids.data() + i, j - i);
    }
  }
  return sealed_page(std::move(reply), keep, *st.counters);
}

body_ptr serve_snapshot(persister_self self, const wire::snapshot_request& req) {
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

// ---- rows that move (a job that takes another shard count) ----------------------------------

// Stores a page of rows that moved here (whole rows, pulled by the mover from the shard that held
// them): in storage, and without a memory budget in RAM too, where every row lives then. With one,
// the rows stay in storage until looked up. The same page stored again (the move redone) stores
// the same rows.
body_ptr store_moved_rows(persister_self self, const wire::dump_reply& page) {
  auto& st = self->state;
  const std::size_t floats = st.store->row_floats(), n = page.ids.size();
  if (page.row_floats != floats || page.tables.size() != n || page.values.size() != n * floats)
    return refusal(errc::invalid_argument,
                   st.options.name + ": a page of moved rows " + std::to_string(page.row_floats) +
                       " floats wide, where this shard's rows are " + std::to_string(floats) +
                       " (do all shards run one build, and one model?)");
  const std::size_t gone = page.gone_ids.size();
  if (n == 0 && gone == 0) return make_body(wire::ack{});
  if (n != 0) {
    if (auto w = st.options.storage->write(page.tables.data(), page.ids.data(), page.values.data(), n); !w.is_ok())
      return refusal(w.code(), st.options.name + ": storing moved rows: " + w.message());
    if (!st.store->tiered()) {
      for (std::size_t i = 0; i < n; ++i)
        if (auto put = st.store->put(page.tables[i], page.ids[i], page.values.data() + i * floats); !put.is_ok())
          return refusal(put.code(), st.options.name + ": a moved row: " + put.message());
    }
    st.store->catch_up_clock(page.values.data(), n);
    if (auto c = store_clock(st); !c.is_ok()) return refusal(c.code(), st.options.name + ": " + c.message());
  }
  // Rows the source gave up for good after their copy came here: gone here too. (A page never
  // holds one id as a row and as gone.)
  if (gone != 0) {
    if (auto e = st.options.storage->erase(page.gone_tables.data(), page.gone_ids.data(), gone); !e.is_ok())
      return refusal(e.code(), st.options.name + ": deleting rows given up since their copy: " + e.message());
    for (std::size_t i = 0; i < gone; ++i) st.store->forget_moved(page.gone_tables[i], page.gone_ids[i]);
  }
  st.counters->rows_taken.fetch_add(n, std::memory_order_relaxed);
  st.counters->tombstones_taken.fetch_add(gone, std::memory_order_relaxed);
  return make_body(wire::ack{});
}

// Every row that moves here is stored: the storage is this shard's of `shards` from now on, so
// that the snapshot of the new shape restores here, and a restart claims it so.
status claim_storage(persister_self self, std::uint32_t shards) {
  auto& st = self->state;
  return st.options.storage->set_meta("shard", shard_claim(st.options.index, shards));
}

body_ptr claim_shape(persister_self self, std::uint32_t shards) {
  if (auto c = claim_storage(self, shards); !c.is_ok())
    return refusal(c.code(), self->state.options.name + ": " + c.message());
  return make_body(wire::ack{});
}

// Storage's record of a reshard whose rows came here and are not settled yet: the shard count.
constexpr const char* taking_key = "taking";

// Records that rows the placement over `shards` gives this shard come here (0: settled, cleared).
status record_taking(persister_self self, std::uint32_t shards) {
  auto& st = self->state;
  if (st.taking == shards) return status::ok();
  SS_RETURN_IF_ERROR(st.options.storage->set_meta(taking_key, shards == 0 ? std::string() : std::to_string(shards)));
  st.taking = shards;
  return status::ok();
}

// Every row the placement over `shards` gives to another shard goes, from storage (a page at a
// time) and from RAM. Storage holds every row after the flush, so what it keeps is what the shard
// holds (a memory budget's counts are set from it).
result<wire::drop_rows_reply> drop_not_owned(persister_self self, const embedding::placement& to, const char* what) {
  auto& st = self->state;
  auto& storage = *st.options.storage;
  if (auto f = flush(self); !f.is_ok()) return f;
  const std::uint32_t me = st.options.index, max_tables = st.store->options().max_tables;
  constexpr std::size_t page_rows = 65536;
  std::vector<std::uint64_t> held(max_tables, 0);
  std::vector<std::uint32_t> tables;
  std::vector<std::uint64_t> ids;
  wire::drop_rows_reply reply;
  std::uint32_t table = 0, last_table = 0;
  std::uint64_t position = 0, last_id = 0;
  while (table < max_tables) {
    tables.clear();
    ids.clear();
    auto read = storage.scan_from(table, position, page_rows, [&](std::uint32_t t, std::uint64_t id, const float*) {
      last_table = t;
      last_id = id;
      if (to.shard_of(t, id) == me) {
        if (t < max_tables) ++held[t];
        ++reply.kept;
        return;
      }
      tables.push_back(t);
      ids.push_back(id);
    });
    if (!read.is_ok()) return read.error();
    if (!ids.empty()) {
      // Just read by this scan, and only this actor writes: each is stored, once.
      if (auto e = storage.erase_stored(tables.data(), ids.data(), ids.size()); !e.is_ok())
        return e.with_context(std::string("dropping ") + what);
      for (std::size_t i = 0; i < ids.size(); ++i) st.store->forget_moved(tables[i], ids[i]);
      reply.dropped += ids.size();
    }
    if (*read < page_rows) break;
    std::tie(table, position) = key_after(last_table, last_id);
  }
  st.store->set_held(held);
  return reply;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The snapshot of the job's new shape is written: every row the placement over placement_shards
// gives to another shard goes. A shard left without a place under the new count drops all, and
// leaves the job.
body_ptr serve_drop_rows(persister_self self, const wire::drop_rows_request& req) {
  auto& st = self->state;
  const auto start = std::chrono::steady_clock::now();
  auto placed = placement_for(st.options, *st.paged, req.placement_shards, "dropping rows");
  if (!placed.is_ok()) return refusal(placed.error().code(), placed.error().message());
  auto dropped = drop_not_owned(self, **placed, "rows that moved");
  if (!dropped.is_ok()) return refusal(dropped.error().code(), st.options.name + ": " + dropped.error().message());
  const wire::drop_rows_reply& reply = *dropped;
  const bool leaving = st.options.index >= req.placement_shards;
  if (!leaving) {
    if (auto c = claim_shape(self, req.placement_shards); std::holds_alternative<wire::error_reply>(*c)) return c;
  }
  // The rows that came here are this shard's for good.
  if (auto t = record_taking(self, 0); !t.is_ok()) return refusal(t.code(), st.options.name + ": " + t.message());
  st.counters->rows_given_away.fetch_add(reply.dropped, std::memory_order_relaxed);
  spdlog::info("{}: the job has {} shards now: dropped the {} rows that moved to others in {:.2f}s; {}", st.options.name,
               req.placement_shards, reply.dropped, seconds_since(start),
               leaving ? "this shard has no place among them and leaves the job (its data directory may go)"
                       : "it holds " + std::to_string(reply.kept) + " rows");
  if (leaving && st.options.on_left_job) st.options.on_left_job();
  return make_body(std::move(*dropped));
}

// A view with no reshard under way, while rows of a reshard to another count came here: that
// reshard did not happen (rolled back, or forgotten by a coordinator that restarted before its
// switch). The rows the count in force gives to others are copies their owners train on without
// this shard: they go, else exports and snapshots would hold those rows twice, one of them stale.
// A failure is logged and tried again on the next view.
result<wire::drop_rows_reply> settle_untaken(persister_self self) {
  auto& st = self->state;
  auto placed = placement_for(st.options, *st.paged, st.in_force, "dropping rows");
  if (!placed.is_ok()) return placed.error();
  auto dropped = drop_not_owned(self, **placed, "rows of a reshard that did not happen");
  if (!dropped.is_ok()) return dropped.error();
  // A move under the hold claimed the storage for the other count: this count's again.
  SS_RETURN_IF_ERROR(claim_storage(self, st.in_force));
  SS_RETURN_IF_ERROR(record_taking(self, 0));
  return dropped;
}

void drop_untaken(persister_self self) {
  auto& st = self->state;
  const auto start = std::chrono::steady_clock::now();
  const std::uint32_t was = st.taking;
  auto dropped = settle_untaken(self);
  if (!dropped.is_ok()) {
    spdlog::error("{}: dropping the rows of a reshard to {} shards that did not happen failed (tried again on the "
                  "next view): {}",
                  st.options.name, was, dropped.error().message());
    return;
  }
  st.counters->rows_untaken.fetch_add(dropped->dropped, std::memory_order_relaxed);
  spdlog::warn("{}: the reshard to {} shards whose rows came here did not happen: dropped the {} rows that the "
               "job's {} shards give to others in {:.2f}s; it holds {} rows",
               st.options.name, was, dropped->dropped, st.in_force, seconds_since(start), dropped->kept);
}

// The view names the shard count in force while a live reshard switched it (0 otherwise: the one
// known before).
void follow_view(persister_self self, const wire::cluster_view& view) {
  auto& st = self->state;
  if (view.placement_shards != 0) st.in_force = view.placement_shards;
  // No reshard copies rows from here any more (ended, rolled back or forgotten).
  if (!view.reshaping) st.store->track_moves(false);
  // A shard beyond the count in force is leaving (its data directory may go): nothing to settle.
  if (st.taking != 0 && st.taking != st.in_force && !view.reshaping && st.options.index < st.in_force)
    drop_untaken(self);
}

// The record of an unsettled reshard's rows a restarted shard finds in its storage.
std::uint32_t stored_taking(const shard_options& o) {
  auto v = o.storage->get_meta(taking_key);
  if (!v.is_ok() || v->empty()) return 0;
  try {
    return static_cast<std::uint32_t>(std::stoul(*v));
  } catch (const std::exception&) {
    spdlog::warn("{}: storage's record of a reshard's rows reads '{}', not a shard count: ignored", o.name, *v);
    return 0;
  }
}

// The flush interval as a timer's period (at least 10 ms; a shard that never flushes, flush
// interval 0, still sweeps every 5 s).
caf::timespan flush_period(const shard_options& o) {
  const double seconds = o.flush_interval > 0 ? o.flush_interval : 5.0;
  return std::chrono::duration_cast<caf::timespan>(std::chrono::duration<double>(std::max(0.01, seconds)));
}

// How often a persister with a memory budget looks whether RAM is past it (an atomic load).
constexpr auto pressure_check = std::chrono::milliseconds(20);


}  // namespace

shard_persister_actor::behavior_type persister(persister_self self, std::shared_ptr<embedding::shard_store> store,
                                               shard_options options, std::shared_ptr<shard_counters> counters,
                                               std::shared_ptr<embedding::placement_cache> paged) {
  auto& st = self->state;
  st.store = std::move(store);
  st.options = std::move(options);
  st.counters = std::move(counters);
  st.paged = std::move(paged);
  st.in_force = st.options.shards;
  st.taking = stored_taking(st.options);
  const auto every = flush_period(st.options);
  if (st.options.flush_interval > 0) self->delayed_send(self, every, tick_atom::value);
  if (st.store->tiered()) self->delayed_send(self, pressure_check, shard_pressure_atom::value);
  return {
      [self, every](tick_atom) {
        (void)flush(self);
        self->delayed_send(self, every, tick_atom::value);
      },
      // With a memory budget, the rows that may not be evicted are the ones changed since the last
      // flush: when they pile up past the budget, the next ones eviction would take are written
      // back now and go, instead of RAM growing by what a whole flush interval touches.
      [self](shard_pressure_atom) {
        auto& state = self->state;
        // Not after a failed flush: the shard is stopping with that error, and a full disk
        // would only fail again.
        if (state.store->under_pressure() && state.counters->flush_errors.load() == 0) {
          state.counters->pressure_flushes.fetch_add(1, std::memory_order_relaxed);
          (void)write_back(self);
        }
        self->delayed_send(self, pressure_check, shard_pressure_atom::value);
      },
      [self](flush_atom) -> bool { return flush(self).is_ok(); },
      [self](moved_rows_atom, const body_ptr& page) -> body_ptr {
        if (const auto* rows = std::get_if<wire::dump_reply>(page.get())) return store_moved_rows(self, *rows);
        return refusal(errc::internal, "moved rows that are not a page of rows");
      },
      [self](claim_atom, std::uint32_t shards) -> body_ptr { return claim_shape(self, shards); },
      [self](taking_atom, std::uint32_t shards) -> body_ptr {
        if (auto t = record_taking(self, shards); !t.is_ok())
          return refusal(t.code(), self->state.options.name + ": recording the rows that come: " + t.message());
        return make_body(wire::ack{});
      },
      [self](view_atom, const wire::cluster_view& view) { follow_view(self, view); },
      [](state_atom, wire::job_state) {},  // sent with the view; nothing to do with it
      [self](serve_atom, const envelope_ptr& env) -> body_ptr {
        if (const auto* req = std::get_if<wire::snapshot_request>(&env->message)) return serve_snapshot(self, *req);
        if (const auto* req = std::get_if<wire::drop_rows_request>(&env->message)) return serve_drop_rows(self, *req);
        if (const auto* req = std::get_if<wire::dump_request>(&env->message)) return serve_stored_dump(self, *req);
        return make_body(wire::error_reply{errc::invalid_argument, std::string("the persister does not serve ") +
                                                                       wire::message_name(env->message)});
      },
  };
}

// A row TTL's sweeps every flush interval, for a shard without storage (the persister sweeps
// before each flush otherwise).
shard_sweeper_actor::behavior_type sweeper(shard_sweeper_actor::pointer self, std::shared_ptr<embedding::shard_store> store,
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

}  // namespace ss::actors::shard_parts
