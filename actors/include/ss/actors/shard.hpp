// The embedding shard server's actors: a pool of workers serving lookup_request, push_request,
// dump_request and status_request against one shared shard_store (thread-safe), and, when the
// shard has storage, a persister that writes the rows pushes changed to it every flush interval
// (and, with a memory budget, as soon as RAM is past the budget) and checkpoints them on
// snapshot_request. With a memory budget, a prefetcher of its own serves the trainers' hints
// (warm_request), reading rows from storage off the lookups' path; without one, the workers
// answer a hint at once that none are wanted. Without a budget, lookups never wait for storage:
// rows live in memory and the persister copies a stripe of rows at a time. Their messages:
// shard_actor and the shard_*_actor interfaces in actors.hpp.
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ss/actors/actors.hpp"
#include "ss/core/embedding/durable_rows.hpp"
#include "ss/core/embedding/shard_store.hpp"
#include "ss/core/metrics/counter_set.hpp"
#include "ss/core/status.hpp"

namespace ss::actors {

struct shard_options {
  std::string name = "shard";
  std::uint32_t index = 0;   // this shard's index
  std::uint32_t shards = 1;  // shards in the job: keys are checked against embedding::placement
  int workers = 1;           // actors serving requests concurrently
  // Where rows persist (null: memory only) and how often changed rows are written there.
  std::shared_ptr<embedding::durable_rows> storage;
  double flush_interval = 5;  // seconds; a kill -9 loses at most this much of the shard's updates
  // Rows per page pulled from another shard while the job takes another shard count: the memory
  // that moving rows in takes is one page.
  std::uint32_t move_page_rows = 8192;
  // The wall clock, in unix seconds: a row TTL in seconds touches rows at it. Injected for tests.
  std::function<std::uint64_t()> unix_seconds = [] {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  };
  // The job took fewer shards and this one's rows all went to the others (drop_rows_request): the
  // shard has nothing left to serve, and its service ends (exit 0). Called once, after the reply.
  std::function<void()> on_left_job;
};

// The shard's counters, each declared once: its status key, help and type (status JSON, /metrics
// and the dashboard follow; see ss/core/metrics/counter_set.hpp).
struct shard_counters : metrics::counter_set {
  using counter = metrics::counter;
  using type = metrics::metric_type;
  static constexpr auto ns = metrics::counter_unit::nanoseconds;
  counter lookups{*this, "lookups", "Lookup requests served."};
  counter rows_looked_up{*this, "rows_looked_up", "Rows looked up."};
  counter pushes{*this, "pushes", "Gradient pushes applied."};
  counter rows_pushed{*this, "rows_pushed", "Rows updated by pushes."};
  counter refused{*this, "refused", "Requests refused."};  // misrouted keys, bad sizes, full tables
  // Pushes of a trainer whose membership is over (refused), and resends of pushes applied before
  // (answered, not applied again): see job/membership_fence.hpp and embedding/push_ledger.hpp.
  counter pushes_fenced{*this, "pushes_fenced",
                        "Pushes refused: sent under a trainer membership that is over (dropped, its batches went to others)."};
  counter pushes_duplicate{*this, "pushes_duplicate", "Pushes applied before (resends): answered, not applied again."};
  counter table_full{*this, "table_full_refusals",
                     "New rows refused because a table is full and nothing could make room."};  // of refused
  counter rows_dumped{*this, "rows_dumped", "Rows sent in pages: for model exports, and to shards that take them over."};
  counter rows_taken{*this, "rows_taken", "Rows taken from other shards when the job took another shard count."};
  counter tombstones_taken{*this, "tombstones_taken",
                           "Tombstones applied in a live reshard: rows the shard they come from gave up for good (a "
                           "row TTL, a full table) since its copy began, deleted here if they came."};
  counter rows_given_away{*this, "rows_given_away",
                          "Rows dropped once the shards they moved to held them (the job took another shard count)."};
  counter rows_untaken{*this, "rows_untaken",
                       "Rows taken for a reshard that did not happen (rolled back, or forgotten by a restarted "
                       "coordinator), dropped again."};
  counter publications_started{*this, "publications_started", "Publications (bases and deltas) this shard began."};
  counter rows_published{*this, "rows_published", "Changed rows sent for published deltas."};
  counter tombstones_published{*this, "tombstones_published",
                               "Rows sent as gone for published deltas (dropped for a row limit, expired)."};
  counter busy_ns{*this, "busy_seconds", "Seconds the shard's workers were busy.", ns};
  // Persistence.
  counter flushes{*this, "flushes", "Writes of changed rows to storage."};
  counter rows_flushed{*this, "rows_flushed", "Rows written to storage."};
  counter flush_ns{*this, "flush_seconds", "Seconds spent writing rows to storage.", ns};
  counter flush_errors{*this, "flush_errors", "Writes to storage that failed."};
  counter checkpoints{*this, "checkpoints", "Storage checkpoints taken."};
  counter last_checkpoint{*this, "last_checkpoint", "Id of the newest storage checkpoint.", type::status_only};
  counter last_checkpoint_ns{*this, "last_checkpoint_seconds", "Seconds the newest checkpoint took.", type::gauge, ns};
  counter rows_restored{*this, "rows_restored", "Rows restored from storage at start.", type::gauge};
  counter rows_converted{*this, "rows_converted",
                         "Rows restored from a checkpoint of another row precision, converted to the job's.", type::gauge};
  // With a memory budget: flushes run early because RAM was past the budget (row_budget).
  counter pressure_flushes{*this, "pressure_flushes", "Flushes run early because RAM was past the memory budget."};
  // Prefetch hints (warm_request) served, and those whose read from storage failed.
  counter warm_requests{*this, "warm_requests", "Prefetch hints served (memory budget)."};
  counter warm_errors{*this, "warm_errors", "Prefetch hints whose read from storage failed."};
  // Why the shard cannot go on serving the job ("" while it can: rows it could not load, or a
  // failed write-back with a memory budget): reported with its heartbeats, the coordinator then
  // fails the job with it.
  std::mutex mu;
  std::atomic<std::uint64_t> view_epoch{0};  // the newest view the shard's workers applied
  std::string error;
};

// Loads the shard's rows from storage into `store` at start-up, after checking that the storage
// belongs to job `job_id`. Rows of another job are cleared, with a warning, when the job starts
// afresh; when it resumes a snapshot or is running (a restart), they are an error (errc::not_found)
// and stay as they are. A checkpoint of another job is never restored.
//   restore_snapshot > 0 (the job resumes from that snapshot): its checkpoint; when it is missing
//     or corrupt, the newest older checkpoint that verifies (each skipped one is logged); with
//     none left, the live rows when they are this job's (newer than the snapshot), else an error;
//   otherwise: the live rows (the latest flush); when they are corrupt, the newest checkpoint
//     that verifies.
// A shard that joins a job already running (`job_was_running`: its index served the job before, so
// this is a restart) and finds storage holding nothing of the job (no job id: the state directory
// was deleted or replaced) restores the newest checkpoint that verifies; with none, it is an
// error (errc::not_found): an empty table is not the job's rows.
// A job resuming on another shard count (`snapshot_shards`: the snapshot's, when it differs from
// options.shards) restores each checkpoint under the snapshot's shape; a shard the snapshot did not
// have starts empty (its storage's rows of this job cleared), and rows move in before training.
// Returns a one-line description of what was loaded, or an error when nothing usable is left.
result<std::string> restore_rows(embedding::shard_store& store, embedding::durable_rows& storage, std::uint64_t job_id,
                                 std::uint64_t restore_snapshot, std::uint32_t snapshot_shards, bool job_was_running,
                                 const shard_options& options, shard_counters& counters);

// Spawns the workers and routes the shard's message types to them through `gateway`; with
// storage, also the persister (snapshot_request goes to it; flush_atom drains it before exit).
struct shard_actors {
  shard_actor pool;                   // lookups, pushes, status
  shard_actor bulk;                   // pages of many rows: publications, and exports held in RAM
  shard_persister_actor persister;    // null without storage
  shard_prefetcher_actor prefetcher;  // null without a memory budget
  shard_sweeper_actor sweeper;        // a row TTL's sweeper without storage (with storage the persister sweeps); else null
  shard_mover_actor mover;            // pulls rows that move here (a job taking another shard count)
};
shard_actors spawn_shard(caf::actor_system& sys, const gateway_actor& gateway,
                         std::shared_ptr<embedding::shard_store> store, const shard_options& options,
                         std::shared_ptr<shard_counters> counters);

}  // namespace ss::actors
