// The shard's status, declared once (its table) and served.
#include "parts.hpp"
#include "ss/actors/status_metrics.hpp"
#include "ss/core/metrics/counter_set.hpp"
#include "ss/core/metrics/status_metrics.hpp"

namespace ss::actors::shard_parts {
namespace {

// What a shard's status reads its fields from.
struct shard_view {
  const embedding::shard_store& store;
  const shard_options& o;
  const shard_counters& c;
  const embedding::shard_store_stats& s;
  const embedding::storage_io& io;
};

// The shard's status, declared once: its JSON key, type and help on /metrics, and how it is read:
// who it is, its counters (shard_counters, declared with them), then its store's numbers.
const metrics::status_table<shard_view>& shard_fields() {
  using v = const shard_view&;
  using t = metrics::metric_type;
  static const metrics::status_table<shard_view> table = metrics::concat<shard_view>({
      {
        {"role", t::status_only, "The service's role.", [](v) { return "shard"; }},
        {"name", t::status_only, "The shard's name.", [](v x) { return x.o.name; }},
        {"index", t::status_only, "The shard's index.", [](v x) { return x.o.index; }},
        {"shards", t::status_only, "Shards in the job.", [](v x) { return x.o.shards; }},
      },
      metrics::counter_fields<shard_counters, shard_view>([](v x) -> const shard_counters& { return x.c; }),
      {
        {"rows", t::gauge, "Embedding rows held.", [](v x) { return x.s.rows; }},
        {"bytes", t::gauge, "Bytes of embedding rows held.", [](v x) { return x.s.bytes; }},
        {"tables", t::gauge, "Embedding tables with rows here.", [](v x) { return x.s.tables; }},
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
        {"persisted", t::gauge, "1 when rows are written to storage.", [](v x) { return x.o.storage != nullptr; }},
        {"storage_memory_bytes", t::gauge, "Memory the storage engine uses.",
         [](v x) { return x.o.storage ? x.o.storage->memory_bytes() : 0; }},
        {"storage_memory_bound_bytes", t::gauge, "The storage engine's memory bound.",
         [](v x) { return x.o.storage ? x.o.storage->memory_bound_bytes() : 0; }},
        {"dirty_rows", t::gauge, "Rows changed since they were last written.", [](v x) { return x.store.dirty_rows(); }},
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
        {"flush_waits", t::counter,
         "Lookups and pushes that waited for a flush: RAM held twice the memory budget.",
         [](v x) { return x.s.flush_waits; }},
        {"flush_wait_seconds", t::counter, "Seconds those lookups and pushes waited.",
         [](v x) { return x.s.flush_wait_seconds; }},
        {"peak_rows_in_memory", t::gauge, "The most rows RAM held at once (memory budget).",
         [](v x) { return x.s.peak_rows_in_memory; }},
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
      },
  });
  return table;
}


}  // namespace

body_ptr serve_status(embedding::shard_store& store, const shard_options& o, shard_counters& c) {
  const auto s = store.stats();
  const auto io = o.storage ? o.storage->io() : embedding::storage_io{};
  return make_body(wire::status_reply{metrics::to_json(shard_fields(), shard_view{store, o, c, s, io})});
}

}  // namespace ss::actors::shard_parts

namespace ss::actors {

metrics::field_list shard_field_list() { return metrics::describe(shard_parts::shard_fields()); }

}  // namespace ss::actors
