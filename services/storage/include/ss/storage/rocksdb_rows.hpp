// rocksdb_rows: the RocksDB implementation of the durable rows port (ss::embedding::durable_rows).
//
// ON-DISK FORMAT (format version 1)
//
//   <dir>/live/                       the live RocksDB database (default column family only)
//   <dir>/live.restore/               a restore in progress (removed on open)
//   <dir>/live.old/                   the previous live DB during a restore's swap (see open())
//   <dir>/live.other-layout/          a live DB of another row layout, set aside by a resume
//                                     (rocksdb_rows_options::set_aside_other_layout)
//   <dir>/checkpoints/<id>/           a complete checkpoint: a RocksDB database + the manifest
//   <dir>/checkpoints/<id>.tmp/       a checkpoint being made; never listed, removed on open
//
// Records (RocksDB key -> value), every value ending with a CRC32C (ss::crc32c, little endian)
// computed over the record's key bytes followed by the value bytes before the CRC, so a torn,
// truncated or bit-flipped record is detected by every reader (scan, verify, checkpoint):
//
//   'r' table:u32 BE  id:u64 BE   ->  row_floats x f32 LE, crc:u32 LE       (13-byte key)
//   'm' <user key bytes>          ->  <user value bytes>, crc:u32 LE         (set_meta / get_meta)
//   'f' "format"                  ->  decimal format version ("1"), crc      (written on create)
//   'f' "row_floats"              ->  decimal row size ("17"), crc           (written on create)
//
// Big-endian keys make a table's rows contiguous and ordered by id. A live DB whose 'f'
// "row_floats" differs from the one passed to open() is refused (errc::invalid_argument), and one
// with another "format" (errc::version_mismatch).
//
// Checkpoint manifest: <dir>/checkpoints/<id>/SHADOWSYNC-CHECKPOINT, the keyed text of every
// manifest (core/io/keyed_text.hpp: "key = value" lines, a last crc32c line over the rest):
//
//   # shadowsync shard checkpoint
//   format = 1                         (format version)
//   id = 12
//   rows = 1000000                     (row records in the checkpoint)
//   row_floats = 17
//   hash = 0123456789abcdef            (16 hex digits: sum mod 2^64 over every record of
//                                       format::record_hash(key, value), order-independent)
//   crc32c = 89abcdef                  (8 hex digits: crc32c of every byte before this line)
//
// A checkpoint is made in <id>.tmp (RocksDB Checkpoint: hard links to the live SST files + copies of
// the small files), scanned read-only to count its rows and hash its content (checking every
// record's CRC on the way), given its manifest (fsync'ed), then renamed to <id> and the parent
// directory fsync'ed. verify() re-reads everything and compares with the manifest.
//
// THREADING: one writer thread (write, erase, checkpoint, restore, drop, set_meta, clear) and any number of
// concurrent readers (rows, row_floats, scan, get_meta, checkpoints, verify). A write never blocks
// the shard's in-memory rows (it only touches RocksDB); scan reads a consistent RocksDB snapshot.
// restore and clear wait for running scans and make new ones wait (they swap the database).
// Reads of a whole database (a checkpoint's check, scan_concurrently, restore_loading) run on
// read_threads threads of their own, each over a range of keys (key_ranges.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "ss/core/embedding/durable_rows.hpp"
#include "ss/core/metrics/latency_histogram.hpp"
#include "ss/core/status.hpp"

namespace rocksdb {
class DB;
class WriteBatch;
}

namespace ss::storage {

enum class rocksdb_compression {
  none,  // embedding floats are close to random bits: compression saves little and costs CPU
  lz4,
  zstd,
};

struct rocksdb_rows_options {
  // Options whose RocksDB memory (memtables + block cache, memory_bound_bytes()) is `bytes`: two
  // memtables of a quarter each, half for the block cache. A shard rewrites its changed rows every
  // flush interval, so a memtable holds many versions of the same rows: small ones fill, flush and
  // reach their steady state within the first minutes of a job (soak: bench/soak/soak.sh).
  static rocksdb_rows_options with_memory_budget(std::size_t bytes);

  // Size of one RocksDB memtable. Larger batches more rows per flush to an SST file.
  // Default: 16 MiB (the 64 MiB budget of `shadowsync shard --storage-memory-mb`)
  std::size_t write_buffer_size = std::size_t{16} << 20;

  // Memtables that may exist at once (the active one and those being flushed).
  // Default: 2
  int max_write_buffers = 2;

  // fsync the WAL on every write() call. With false (the default) a write is in the OS page cache
  // when write() returns: a killed process loses nothing, a power loss or kernel crash may lose
  // the last writes (never part of one: a write is atomic). checkpoint() always makes durable
  // files regardless.
  // Default: false
  bool sync_writes = false;

  // What a row's slots hold (embedding::shard_row_layout: the values' count and precision, the
  // optimizer state, a TTL stamp): kept with the format settings when the store is made, and
  // checked at open, so that a store written at another precision (or by another model) is
  // refused with both layouts named instead of its bytes being read as rows of this one. A store
  // made before it was kept takes this one on (its row_floats matched). Empty: not checked.
  std::string row_layout;

  // A live DB of another layout (row_layout or row_floats) is moved aside to dir/live.other-layout
  // (replacing one an earlier open put there) and an empty one opened, live_damage() saying so,
  // instead of being refused: for a shard that resumes from a snapshot, whose checkpoint replaces
  // the live rows anyway (converted, when the snapshot's precision differs from the job's).
  // Default: false
  bool set_aside_other_layout = false;

  // Compression of SST files. Embedding rows are float bits that barely compress: snapshot_bench
  // (1M rows of 17 floats) measured 183.8 MB with lz4 against 183.9 MB without, at the same speed.
  // Default: rocksdb_compression::none
  rocksdb_compression compression = rocksdb_compression::none;

  // LRU block cache for reads (the overwrite check in write() and get_meta).
  // Default: 32 MiB
  std::size_t block_cache_bytes = std::size_t{32} << 20;

  // Keep rows() exact: write() tells new rows from overwrites with a batched MultiGet of the
  // call's keys, and erase() the stored keys from the absent ones. A shard with a memory budget
  // writes back rows all the time and measured that check at 7% of its CPU (perf, a 10% budget):
  // it opens its storage with false, and rows() is then RocksDB's estimate of its keys
  // (rocksdb.estimate-num-keys); the shard counts its rows itself (rows_held).
  // Default: true
  bool exact_count = true;

  // Bloom filter bits per key in SST files; makes the "is this row new?" check of write() cheap
  // for new rows. 0 disables the filter.
  // Default: 10
  int bloom_bits_per_key = 10;

  // Threads that read a whole database at once (a checkpoint's check, a restart's load): each
  // reads a range of keys of about equal size on disk. 0: one per CPU the process may use, at
  // most 16.
  // Default: 0
  std::size_t read_threads = 0;

  // RocksDB background flush + compaction threads.
  // Default: 2
  int background_jobs = 2;

  // Free space write() keeps on the file system that holds the store: it refuses a write
  // (errc::resource_exhausted, "no space left", the free and reserved MB named) rather than let
  // free space fall below this. RocksDB's memtable flushes and compactions need room of their own,
  // and a write that fails half-way on a full disk leaves RocksDB's files in an error state (the
  // Debian 12 build asserts, aborting the process, on the next write to such a file).
  // 0: the default, max_write_buffers x write_buffer_size + 8 MiB.
  std::size_t min_free_bytes = 0;
};

class rocksdb_rows final : public embedding::durable_rows {
 public:
  // Opens (creating if needed) the store in `dir`: the live DB in dir/live, checkpoints in
  // dir/checkpoints. Cleans up what a crash left: checkpoints/<id>.tmp, live.restore, live.old (and
  // if a crash hit a restore between its two renames, puts the old live DB back). Counts the rows
  // (one scan of the keys, by ranges on read_threads threads). errc::invalid_argument if the live DB holds rows of another size, or row_floats is 0.
  // A live DB that RocksDB cannot open as corrupt (a damaged CURRENT or MANIFEST) is moved to
  // dir/live.damaged-<unix seconds> and an empty one opened; live_damage() says why.
  static result<std::unique_ptr<rocksdb_rows>> open(const std::string& dir, std::uint32_t row_floats,
                                                    rocksdb_rows_options options);

  ~rocksdb_rows() override;
  rocksdb_rows(const rocksdb_rows&) = delete;
  rocksdb_rows& operator=(const rocksdb_rows&) = delete;

  std::uint32_t row_floats() const override { return row_floats_; }
  std::string live_damage() const override { return live_damage_; }

  // One WriteBatch (WAL on) per call. With exact_count, new rows are told from overwrites with one
  // batched MultiGet over the call's distinct keys (bloom filters make misses cheap), so rows()
  // stays exact; a key repeated within one call stores its last row.
  status write(const std::uint32_t* tables, const std::uint64_t* ids, const float* rows, std::size_t n) override;
  // One WriteBatch of deletions (WAL on); with exact_count, the keys that exist are found with one
  // MultiGet first, so that rows() stays exact.
  status erase(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) override;
  // The same batch without the MultiGet: every key is counted as stored (a reshard's drop of the
  // rows it just scanned lost 0.6 s per 134,000 rows to looking them up).
  status erase_stored(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) override;
  status scan(const embedding::row_visitor& fn) override;
  // scan() by ranges of keys on read_threads threads at once.
  status scan_concurrently(const embedding::row_visitor& fn) override;
  // Exact, or with exact_count off RocksDB's estimate.
  std::uint64_t rows() const override;
  // One MultiGet, checksums verified, read into the block cache (a shard's misses are its hot
  // set's next members).
  status read(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, float* rows,
              std::uint8_t* found) const override;
  result<std::size_t> scan_from(std::uint32_t table, std::uint64_t id, std::size_t max_rows,
                                const embedding::row_visitor& fn) const override;
  // Memtables (rocksdb.cur-size-all-mem-tables) plus the block cache's usage; bounded by
  // max_write_buffer_number x write_buffer_size + block_cache_bytes.
  std::uint64_t memory_bytes() const override;
  std::uint64_t memory_bound_bytes() const override;
  embedding::storage_io io() const override;

  result<embedding::checkpoint_info> checkpoint(std::uint64_t id) override;
  // Every directory checkpoints/<digits>, oldest first, with rows and checksum from its manifest
  // (left 0 when the manifest is missing or unreadable: verify() says why) and bytes on disk.
  result<std::vector<embedding::checkpoint_info>> checkpoints() const override;
  // errc::not_found, errc::corrupt ("checkpoint 12 is corrupt: row (3, 12345) fails its
  // checksum"), errc::invalid_argument (a checkpoint of another row size).
  status verify(std::uint64_t id) const override;
  status restore(std::uint64_t id) override;
  // One pass: the check of every record hands each row to `load` (from read_threads threads at
  // once), so a resume reads the checkpoint once, not once to check it and again to load it.
  status restore_loading(std::uint64_t id, const embedding::row_visitor& load, const embedding::row_visitor& unload) override;
  // Its format setting "row_layout" ("" when it predates kept layouts).
  result<std::string> checkpoint_row_layout(std::uint64_t id) const override;
  // Checked as verify() checks, converted row by row into a new database (dir/live.restore) at
  // this store's layout, its metadata copied, then swapped in as restore() swaps a checkpoint in.
  status restore_converting(std::uint64_t id, const embedding::row_conversion& conversion,
                            const embedding::row_visitor& load, const embedding::row_visitor& unload) override;
  status drop(std::uint64_t id) override;

  // Meta values are keys of their own in the live database, written with sync (rare and small);
  // clear() deletes them and every row in one batch.
  status set_meta(const std::string& key, const std::string& value) override;
  result<std::string> get_meta(const std::string& key) const override;
  status clear() override;

  // The newest checkpoint that verifies. For each newer one that does not, appends one message to
  // *skipped (may be null): "checkpoint 12 is corrupt: row (3, 12345) fails its checksum; using
  // checkpoint 11". errc::not_found when there is no checkpoint at all, errc::corrupt when none
  // verifies (skipped then ends each message with "; no valid checkpoint remains").
  result<embedding::checkpoint_info> latest_valid_checkpoint(std::vector<std::string>* skipped) const;

  const std::string& dir() const { return dir_; }
  // The threads that read a whole database at once (options.read_threads, or one per CPU).
  std::size_t read_threads() const;
  std::string checkpoint_path(std::uint64_t id) const;

 private:
  rocksdb_rows(std::string dir, std::uint32_t row_floats, rocksdb_rows_options options);

  // Opens dir/live, checks/writes the format settings, and counts the rows, unless they are known
  // (a restored checkpoint's, counted as it was verified).
  status open_live(std::optional<std::uint64_t> known_rows = std::nullopt);
  void close_live();
  // erase() and erase_stored(): with look_up (and exact_count), only the keys found are counted.
  status erase_keys(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, bool look_up);
  // The format settings a store is made with (its format version, row size and row layout).
  void put_store_settings(rocksdb::WriteBatch& batch) const;
  // verify(), handing each row to *load as it is checked and, when the check fails, the rows
  // handed out to *unload (both may be null). `row_floats`: the checkpoint's row size (0: this
  // store's); `rows`: where its verified row count goes (may be null).
  status check(std::uint64_t id, const embedding::row_visitor* load, const embedding::row_visitor* unload,
               std::uint32_t row_floats = 0, std::uint64_t* rows = nullptr) const;
  // restore() and restore_loading(): check(), then swap_in().
  status restore_with(std::uint64_t id, const embedding::row_visitor* load, const embedding::row_visitor* unload);
  // Checkpoint id, verified, becomes the live database.
  status swap_in(std::uint64_t id);
  // dir/live.restore, complete and closed, becomes the live database holding `rows` rows.
  status install_staging(std::uint64_t rows, const std::string& what);
  // The manifest of checkpoint `id`, whose rows must be `row_floats` slots (0: this store's).
  result<embedding::checkpoint_info> read_manifest(std::uint64_t id, std::uint32_t row_floats = 0) const;

  const std::string dir_;
  const std::uint32_t row_floats_;
  const rocksdb_rows_options options_;
  struct rocks_state;                    // RocksDB options, cache, filter (keeps rocksdb/ out of here)
  std::unique_ptr<rocks_state> state_;
  mutable std::shared_mutex db_mu_;      // shared: every use of db_; exclusive: swapping it
  rocksdb::DB* db_ = nullptr;
  std::atomic<std::uint64_t> rows_{0};
  std::string live_damage_;  // set by open() only
  // io(): read() and write() count what they did.
  mutable std::atomic<std::uint64_t> reads_{0}, rows_read_{0}, bytes_read_{0};
  std::atomic<std::uint64_t> rows_written_{0}, bytes_written_{0};
  mutable metrics::latency_histogram read_latency_;
  // The free-space check of write(): redone once a MiB was written since the last.
  std::atomic<std::uint64_t> written_since_check_{std::uint64_t{1} << 20};
  status check_free_space(std::uint64_t bytes);
};

}  // namespace ss::storage
