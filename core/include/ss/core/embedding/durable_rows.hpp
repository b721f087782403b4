// durable_rows: the port through which an embedding shard persists its rows. The shard keeps every
// row in memory (shard_store) and, from a background thread, writes the rows that changed here;
// a cluster snapshot turns what was written into a named, self-verifying checkpoint; a restarted
// shard scans the rows back (or restores a checkpoint first, for a full-cluster resume).
//
// Implementations: memory_rows (ss/core/embedding/memory_rows.hpp, for unit tests) and
// storage::rocksdb_rows (services/storage, the real one; its header documents the on-disk format).
// Core code depends only on this port. tests/storage runs one behavioural suite against both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ss/core/status.hpp"

namespace ss::embedding {

// What a storage did since it was opened: batched row reads (a tiered shard's misses), the rows
// and bytes they found, their latency, and the rows and bytes written.
struct storage_io {
  std::uint64_t reads = 0, rows_read = 0, bytes_read = 0;
  std::uint64_t rows_written = 0, bytes_written = 0;
  double read_p50_ms = 0, read_p99_ms = 0;
};

// One checkpoint as its manifest describes it.
struct checkpoint_info {
  std::uint64_t id = 0;        // the snapshot id it belongs to; ids grow over a job
  std::string path;            // where it lives (a directory for RocksDB; empty in memory)
  std::uint64_t rows = 0;      // rows it holds
  std::uint64_t bytes = 0;     // size on disk (0 in memory)
  std::uint64_t checksum = 0;  // order-independent hash of its content, as its manifest promises
};

// What a scan calls for each stored row: its table, its id and its row_floats() values.
using row_visitor = std::function<void(std::uint32_t table, std::uint64_t id, const float* row)>;

// How the rows of a checkpoint made at another row layout become rows of this store (a snapshot
// resumed at another --row-precision): `convert` turns one row of from_row_floats slots into one
// of the store's, or says false when it cannot (`refusal` says why, the row named before it). It
// is called from several threads at once.
struct row_conversion {
  std::string from_layout;  // the checkpoint's, as its storage keeps it (shard_row_layout)
  std::uint32_t from_row_floats = 0;
  std::function<bool(const float* from, float* to)> convert;
  std::string refusal;
};

// One shard's persisted rows. Each row is `row_floats` floats (values followed by optimizer state),
// fixed when the store is opened. Thread-safety: one writer thread (write/erase/checkpoint/restore/drop/
// set_meta/clear) and any number of concurrent readers of the const members and scan.
class durable_rows {
 public:
  virtual ~durable_rows() = default;

  virtual std::uint32_t row_floats() const = 0;

  // Stores n rows (tables[i], ids[i]) -> rows[i * row_floats ...], overwriting older versions.
  // Atomic per call: after a crash either every row of the call is stored or none is.
  virtual status write(const std::uint32_t* tables, const std::uint64_t* ids, const float* rows, std::size_t n) = 0;

  // Deletes the stored rows (tables[i], ids[i]) that exist; the others are ignored. Atomic per
  // call, like write. A shard deletes the rows it dropped for good (a full table's eviction).
  virtual status erase(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) = 0;
  // erase() of rows the caller knows are stored, each once (read by a scan of its own, nothing
  // written since): an implementation that counts its rows need not look each up first.
  virtual status erase_stored(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) {
    return erase(tables, ids, n);
  }

  // Calls fn for every stored row, in no particular order. A record that fails its checksum or has
  // the wrong size ends the scan with errc::corrupt naming the row.
  virtual status scan(const row_visitor& fn) = 0;
  // scan(), with fn called from several threads at once where the implementation reads ranges of
  // rows in parallel (a restart's load): fn must be safe to call concurrently.
  virtual status scan_concurrently(const row_visitor& fn) { return scan(fn); }

  // Rows currently stored: counted on write, exactly, unless the implementation says it was
  // opened to estimate them (storage::rocksdb_rows_options::exact_count).
  virtual std::uint64_t rows() const = 0;

  // Reads n rows (tables[i], ids[i]) in one batch: found[i] = 1 and the row in rows[i *
  // row_floats() ...] when it is stored; found[i] = 0 and that row untouched when it is not. A
  // record that fails its checksum or has the wrong size: errc::corrupt naming the row. May run
  // concurrently with write (a shard with a memory budget reads its misses while it flushes).
  virtual status read(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, float* rows,
                      std::uint8_t* found) const = 0;

  // Calls fn for the stored rows whose key is (table, id) or after it, in key order (by table,
  // then id), at most max_rows of them; returns how many. One page of a paged export.
  virtual result<std::size_t> scan_from(std::uint32_t table, std::uint64_t id, std::size_t max_rows,
                                        const row_visitor& fn) const = 0;

  // Why the live rows were found unusable when the storage was opened and set aside (a corrupt
  // database), or "" when they opened fine. The live rows are then empty: the owner restores a
  // checkpoint or refuses to serve, never takes the empty table for its rows.
  virtual std::string live_damage() const { return {}; }

  // Memory the storage engine holds now (write buffers, read cache), and the most its
  // configuration lets it hold: a shard's memory beyond its rows, reported so a soak can tell
  // bounded buffering from a leak. Thread-safe. Default: none.
  virtual std::uint64_t memory_bytes() const { return 0; }
  virtual std::uint64_t memory_bound_bytes() const { return 0; }
  // Its reads and writes so far (storage_io). Thread-safe. Default: none counted.
  virtual storage_io io() const { return {}; }

  // Makes a durable copy of everything written so far, named `id`. errc::invalid_argument if a
  // checkpoint with that id exists. A checkpoint interrupted by a crash is never listed.
  virtual result<checkpoint_info> checkpoint(std::uint64_t id) = 0;

  // Every complete checkpoint, oldest (smallest id) first.
  virtual result<std::vector<checkpoint_info>> checkpoints() const = 0;

  // Reads checkpoint `id` completely: every record's checksum, the row count and the content hash
  // its manifest promises. errc::not_found if it does not exist, errc::corrupt with the reason.
  virtual status verify(std::uint64_t id) const = 0;

  // Replaces the live rows (and metadata) with checkpoint `id`, verified first; if verification
  // fails the live rows are left exactly as they were.
  virtual status restore(std::uint64_t id) = 0;
  // restore(id), with every row of the checkpoint handed to `load` (possibly from several threads
  // at once, and possibly while it is verified: a resume that reads it once). When it fails, every
  // row `load` was given is handed to `unload`, and the live rows are left as they were. (This
  // default restores, then scans: a scan failing after the restore leaves the checkpoint's rows
  // live. rocksdb_rows checks and loads in one pass.)
  virtual status restore_loading(std::uint64_t id, const row_visitor& load, const row_visitor& unload) {
    SS_RETURN_IF_ERROR(restore(id));
    status loaded = scan_concurrently(load);
    if (!loaded.is_ok()) (void)scan(unload);
    return loaded;
  }

  // The row layout checkpoint `id` was made at ("" when it predates kept layouts, or the
  // implementation keeps none: then it is this store's).
  virtual result<std::string> checkpoint_row_layout(std::uint64_t /*id*/) const { return std::string(); }
  // restore_loading() of a checkpoint made at conversion.from_layout: every row is converted, handed
  // to `load` and written as the new live rows, with the checkpoint's metadata, at this store's
  // layout; the checkpoint stays as it was. On failure (a row that does not convert included) the
  // rows handed out go to `unload`, converted, and the live rows are left as they were.
  virtual status restore_converting(std::uint64_t id, const row_conversion& /*conversion*/,
                                    const row_visitor& /*load*/, const row_visitor& /*unload*/) {
    return {errc::invalid_argument, "checkpoint " + std::to_string(id) +
                                        " holds rows of another layout, and this storage does not convert rows"};
  }

  // Deletes checkpoint `id`; errc::not_found if absent.
  virtual status drop(std::uint64_t id) = 0;

  // Small string metadata stored with the rows and copied into checkpoints (the shard keeps its
  // job id there, to refuse rows of another job). get_meta: errc::not_found if absent.
  virtual status set_meta(const std::string& key, const std::string& value) = 0;
  virtual result<std::string> get_meta(const std::string& key) const = 0;

  // Deletes every live row and all metadata; checkpoints stay.
  virtual status clear() = 0;
};

}  // namespace ss::embedding
