// rocksdb_rows, the live database: options, opening (and setting aside a damaged one), writes,
// scans and metadata. Checkpoints, their manifests and restore are in rocksdb_checkpoints.cpp.
#include "ss/storage/rocksdb_rows.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

#include <sched.h>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include "rocks_status.hpp"
#include "row_scan.hpp"
#include "ss/storage/record_format.hpp"

namespace ss::storage {
namespace fs = std::filesystem;

namespace {

std::string meta_key(const std::string& key) { return std::string(1, format::kMetaPrefix) + key; }

}  // namespace

rocksdb_rows_options rocksdb_rows_options::with_memory_budget(std::size_t bytes) {
  rocksdb_rows_options o;
  o.max_write_buffers = 2;
  o.write_buffer_size = std::max<std::size_t>(bytes / 4, std::size_t{1} << 20);
  o.block_cache_bytes = std::max<std::size_t>(bytes / 2, std::size_t{1} << 20);
  return o;
}

struct rocksdb_rows::rocks_state {
  rocksdb::Options options;
  std::shared_ptr<rocksdb::Cache> cache;
};

rocksdb_rows::rocksdb_rows(std::string dir, std::uint32_t row_floats, rocksdb_rows_options options)
    : dir_(std::move(dir)), row_floats_(row_floats), options_(options), state_(std::make_unique<rocks_state>()) {
  rocksdb::Options& o = state_->options;
  o.create_if_missing = true;
  o.paranoid_checks = true;
  o.write_buffer_size = options_.write_buffer_size;
  o.max_write_buffer_number = std::max(2, options_.max_write_buffers);
  o.max_background_jobs = std::max(1, options_.background_jobs);
  o.keep_log_file_num = 4;
  o.max_manifest_file_size = std::uint64_t{64} << 20;
  switch (options_.compression) {
    case rocksdb_compression::none: o.compression = rocksdb::kNoCompression; break;
    case rocksdb_compression::lz4: o.compression = rocksdb::kLZ4Compression; break;
    case rocksdb_compression::zstd: o.compression = rocksdb::kZSTD; break;
  }
  // Row keys are written in sorted runs by the flusher; the memtable bloom makes the overwrite
  // check of new keys cheap before they reach an SST.
  o.memtable_whole_key_filtering = options_.bloom_bits_per_key > 0;
  o.memtable_prefix_bloom_size_ratio = options_.bloom_bits_per_key > 0 ? 0.05 : 0.0;
  rocksdb::BlockBasedTableOptions t;
  state_->cache = rocksdb::NewLRUCache(options_.block_cache_bytes);
  t.block_cache = state_->cache;
  t.block_size = 16 * 1024;
  if (options_.bloom_bits_per_key > 0) {
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(options_.bloom_bits_per_key, false));
    t.whole_key_filtering = true;
  }
  t.cache_index_and_filter_blocks = false;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
}

rocksdb_rows::~rocksdb_rows() { close_live(); }

std::uint64_t rocksdb_rows::memory_bytes() const {
  std::uint64_t memtables = 0;
  {
    std::shared_lock<std::shared_mutex> lock(db_mu_);
    if (db_ != nullptr) db_->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtables);
  }
  return memtables + state_->cache->GetUsage();
}

std::uint64_t rocksdb_rows::memory_bound_bytes() const {
  const auto& o = state_->options;
  return static_cast<std::uint64_t>(o.max_write_buffer_number) * o.write_buffer_size + options_.block_cache_bytes;
}

std::string rocksdb_rows::checkpoint_path(std::uint64_t id) const {
  return (fs::path(dir_) / "checkpoints" / std::to_string(id)).string();
}

result<std::unique_ptr<rocksdb_rows>> rocksdb_rows::open(const std::string& dir, std::uint32_t row_floats,
                                                          rocksdb_rows_options options) {
  if (row_floats == 0) return {errc::invalid_argument, "rocksdb_rows: row_floats must be positive"};
  if (dir.empty()) return {errc::invalid_argument, "rocksdb_rows: empty directory"};
  const fs::path root(dir);
  const fs::path live = root / "live", staging = root / "live.restore", old = root / "live.old";
  std::error_code ec;
  fs::create_directories(root / "checkpoints", ec);  // RocksDB creates only the leaf directory
  if (ec) return {errc::io_error, "create " + (root / "checkpoints").string() + ": " + ec.message()};
  // A crash between a restore's two renames leaves live.old and no live: put it back.
  if (!fs::exists(live) && fs::exists(old)) {
    fs::rename(old, live, ec);
    if (ec) return {errc::io_error, "rename " + old.string() + ": " + ec.message()};
  }
  fs::remove_all(staging, ec);
  fs::remove_all(old, ec);
  for (fs::directory_iterator it(root / "checkpoints", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      std::error_code rec;
      fs::remove_all(it->path(), rec);  // a checkpoint interrupted by a crash
    }
  }
  std::unique_ptr<rocksdb_rows> store(new rocksdb_rows(dir, row_floats, options));
  auto opened = store->open_live();
  if (opened.code() == errc::corrupt) {
    // Kept for a post-mortem, out of the way: the shard falls back to its newest checkpoint.
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
    const fs::path aside = root / ("live.damaged-" + std::to_string(seconds));
    fs::rename(live, aside, ec);
    if (ec) return {errc::io_error, opened.message() + "; cannot move it aside: " + ec.message()};
    store->live_damage_ = opened.message() + " (moved to " + aside.string() + ")";
    opened = store->open_live();
  } else if (opened.code() == errc::invalid_argument && options.set_aside_other_layout) {
    // Rows of another layout: the checkpoint the shard resumes from replaces them.
    const fs::path aside = root / "live.other-layout";
    fs::remove_all(aside, ec);
    fs::rename(live, aside, ec);
    if (ec) return {errc::io_error, opened.message() + "; cannot move it aside: " + ec.message()};
    store->live_damage_ = opened.message() + " (moved to " + aside.string() + ")";
    opened = store->open_live();
  }
  SS_RETURN_IF_ERROR(opened);
  return store;
}

void rocksdb_rows::put_store_settings(rocksdb::WriteBatch& batch) const {
  put_format_setting(batch, "format", std::to_string(format::kFormatVersion));
  put_format_setting(batch, "row_floats", std::to_string(row_floats_));
  if (!options_.row_layout.empty()) put_format_setting(batch, "row_layout", options_.row_layout);
}

status rocksdb_rows::open_live(std::optional<std::uint64_t> known_rows) {
  const std::string path = (fs::path(dir_) / "live").string();
  rocksdb::DB* raw = nullptr;
  SS_RETURN_IF_ERROR(from_rocks(rocksdb::DB::Open(state_->options, path, &raw), "opening " + path));
  std::unique_ptr<rocksdb::DB> db(raw);
  auto version = read_format_setting(db.get(), "format", path);
  if (!version) return version.error();
  auto floats = read_format_setting(db.get(), "row_floats", path);
  if (!floats) return floats.error();
  if (*version && **version != std::to_string(format::kFormatVersion)) {
    return {errc::version_mismatch, path + " has format version " + **version + ", this build reads " +
                                        std::to_string(format::kFormatVersion)};
  }
  auto layout = read_format_setting(db.get(), "row_layout", path);
  if (!layout) return layout.error();
  if (*layout && !options_.row_layout.empty() && **layout != options_.row_layout) {
    return {errc::invalid_argument, path + " holds rows of " + **layout + ", opened for rows of " +
                                        options_.row_layout +
                                        " (was --row-precision or the model changed? a shard's storage keeps the "
                                        "layout it was made with)"};
  }
  if (*floats && **floats != std::to_string(row_floats_)) {
    return {errc::invalid_argument, path + " holds rows of " + **floats + " floats, opened for rows of " +
                                        std::to_string(row_floats_) + " floats (another model or optimizer?)"};
  }
  // Count the rows (keys only; scan() and verify() check the records).
  std::uint64_t count = known_rows.value_or(0);
  if (!known_rows) {
    std::atomic<std::uint64_t> counted{0};
    SS_RETURN_IF_ERROR(for_each_row_range(db.get(), split_keys(db.get(), read_threads()), read_threads(),
                                          [&](std::size_t, row_scan& rows) -> status {
      std::uint64_t n = 0;
      for (; rows.it->Valid(); rows.it->Next()) ++n;
      counted += n;
      return from_rocks(rows.it->status(), "counting the rows of " + path);
    }));
    count = counted.load();
  }
  // The settings a new store lacks, in one durable write: all of them; a store made before the row
  // layout was kept gets that one.
  rocksdb::WriteBatch settings;
  if (!*version || !*floats) {
    if (count != 0) return {errc::corrupt, path + " holds rows but no format settings"};
    put_store_settings(settings);
  } else if (!*layout && !options_.row_layout.empty()) {
    put_format_setting(settings, "row_layout", options_.row_layout);
  }
  if (settings.Count() > 0) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    SS_RETURN_IF_ERROR(from_rocks(db->Write(wo, &settings), "writing the format settings of " + path));
  }
  db_ = db.release();
  rows_.store(count, std::memory_order_relaxed);
  return status::ok();
}

void rocksdb_rows::close_live() {
  if (db_ == nullptr) return;
  // Close() reports an error only for background errors that a reopen will report again.
  const rocksdb::Status s = db_->Close();
  (void)s;
  delete db_;
  db_ = nullptr;
}

namespace {

// The row keys of a write or erase call, each once, in key order: for a key given twice, the
// position of its last occurrence (the row that wins).
struct distinct_keys {
  distinct_keys(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) : bytes(n * K, '\0'), order(n) {
    for (std::size_t i = 0; i < n; ++i) format::encode_row_key(tables[i], ids[i], &bytes[i * K]);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
    const char* kb = bytes.data();
    std::stable_sort(order.begin(), order.end(),
                     [kb](std::uint32_t a, std::uint32_t b) { return std::memcmp(kb + a * K, kb + b * K, K) < 0; });
    std::size_t m = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i + 1 < n && std::memcmp(kb + order[i] * K, kb + order[i + 1] * K, K) == 0) continue;  // a later one follows
      order[m++] = order[i];
    }
    order.resize(m);
    slices.resize(m);
    for (std::size_t j = 0; j < m; ++j) slices[j] = rocksdb::Slice(kb + std::size_t{order[j]} * K, K);
  }

  static constexpr std::size_t K = format::kRowKeySize;
  std::string bytes;
  std::vector<std::uint32_t> order;
  std::vector<rocksdb::Slice> slices;
};

// Which of the keys are stored (one batched MultiGet; bloom filters make absent keys cheap):
// exists[j] for slices[j]. `what` names the caller in an error.
status find_stored(rocksdb::DB* db, const distinct_keys& keys, std::vector<std::uint8_t>& exists, const char* what) {
  const std::size_t m = keys.slices.size();
  exists.assign(m, 0);
  std::vector<rocksdb::PinnableSlice> values(m);
  std::vector<rocksdb::Status> statuses(m);
  rocksdb::ReadOptions ro;
  ro.fill_cache = true;
  db->MultiGet(ro, db->DefaultColumnFamily(), m, keys.slices.data(), values.data(), statuses.data(), true);
  for (std::size_t j = 0; j < m; ++j) {
    if (statuses[j].ok()) {
      exists[j] = 1;
    } else if (!statuses[j].IsNotFound()) {
      return from_rocks(statuses[j], std::string(what) + ": checking " +
                                         format::describe_key(keys.slices[j].data(), keys.slices[j].size()));
    }
  }
  return status::ok();
}

}  // namespace

status rocksdb_rows::write(const std::uint32_t* tables, const std::uint64_t* ids, const float* rows, std::size_t n) {
  if (n == 0) return status::ok();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  constexpr std::size_t K = format::kRowKeySize;
  const distinct_keys keys(tables, ids, n);
  const std::size_t m = keys.slices.size();

  // Which keys are new? Skipped when the store is empty (every key is new then), or not counted.
  std::uint64_t fresh = m;
  if (options_.exact_count && rows_.load(std::memory_order_relaxed) != 0) {
    std::vector<std::uint8_t> exists;
    SS_RETURN_IF_ERROR(find_stored(db_, keys, exists, "rocksdb_rows::write"));
    fresh = m - static_cast<std::uint64_t>(std::count(exists.begin(), exists.end(), 1));
  }

  const std::size_t vsize = format::row_value_size(row_floats_);
  SS_RETURN_IF_ERROR(check_free_space(m * (K + vsize)));
  rocksdb::WriteBatch batch(m * (K + vsize + 8) + 64);
  std::string value(vsize, '\0');
  for (std::size_t j = 0; j < m; ++j) {
    const std::uint32_t i = keys.order[j];
    format::encode_row_value(keys.slices[j].data(), K, rows + std::size_t{i} * row_floats_, row_floats_, value.data());
    SS_RETURN_IF_ERROR(from_rocks(batch.Put(keys.slices[j], value), "rocksdb_rows::write"));
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_writes;
  SS_RETURN_IF_ERROR(from_rocks(db_->Write(wo, &batch), "rocksdb_rows::write"));
  rows_.fetch_add(fresh, std::memory_order_relaxed);
  rows_written_.fetch_add(m, std::memory_order_relaxed);
  bytes_written_.fetch_add(m * (K + vsize), std::memory_order_relaxed);
  return status::ok();
}

status rocksdb_rows::erase(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) {
  return erase_keys(tables, ids, n, true);
}

status rocksdb_rows::erase_stored(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n) {
  return erase_keys(tables, ids, n, false);
}

status rocksdb_rows::erase_keys(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, bool look_up) {
  if (n == 0 || (options_.exact_count && rows_.load(std::memory_order_relaxed) == 0)) return status::ok();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  const distinct_keys keys(tables, ids, n);
  std::vector<std::uint8_t> exists(keys.slices.size(), 1);  // not counted, or known: delete them all
  if (options_.exact_count && look_up) SS_RETURN_IF_ERROR(find_stored(db_, keys, exists, "rocksdb_rows::erase"));
  rocksdb::WriteBatch batch;
  std::uint64_t gone = 0;
  for (std::size_t j = 0; j < keys.slices.size(); ++j) {
    if (exists[j] == 0) continue;
    SS_RETURN_IF_ERROR(from_rocks(batch.Delete(keys.slices[j]), "rocksdb_rows::erase"));
    ++gone;
  }
  if (gone == 0) return status::ok();
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_writes;
  SS_RETURN_IF_ERROR(from_rocks(db_->Write(wo, &batch), "rocksdb_rows::erase"));
  rows_.fetch_sub(gone, std::memory_order_relaxed);
  return status::ok();
}

std::uint64_t rocksdb_rows::rows() const {
  if (options_.exact_count) return rows_.load(std::memory_order_relaxed);
  std::shared_lock lock(db_mu_);
  std::uint64_t keys = 0;
  if (db_ == nullptr || !db_->GetIntProperty("rocksdb.estimate-num-keys", &keys)) return 0;
  return keys;
}

status rocksdb_rows::check_free_space(std::uint64_t bytes) {
  // Checked once a MiB was written since the last check: the reserve is larger than that.
  if (written_since_check_.fetch_add(bytes, std::memory_order_relaxed) + bytes < (std::uint64_t{1} << 20))
    return status::ok();
  written_since_check_.store(0, std::memory_order_relaxed);
  std::error_code ec;
  const auto space = std::filesystem::space(dir_, ec);
  if (ec) return status::ok();  // unknown: RocksDB reports a real failure itself
  const std::uint64_t reserve =
      options_.min_free_bytes > 0
          ? options_.min_free_bytes
          : static_cast<std::uint64_t>(std::max(2, options_.max_write_buffers)) * options_.write_buffer_size +
                (std::uint64_t{8} << 20);
  if (space.available >= reserve + bytes) return status::ok();
  written_since_check_.store(std::uint64_t{1} << 20, std::memory_order_relaxed);  // check again next time
  char what[160];
  std::snprintf(what, sizeof what, "%.1f MB free, under the %.1f MB reserve plus this write's %.1f MB",
                static_cast<double>(space.available) / 1e6, static_cast<double>(reserve) / 1e6,
                static_cast<double>(bytes) / 1e6);
  return {errc::resource_exhausted, "rocksdb_rows::write: no space left on the device of " + dir_ + ": " + what +
                                        " (RocksDB's flushes and compactions need room of their own)"};
}

embedding::storage_io rocksdb_rows::io() const {
  embedding::storage_io io;
  io.reads = reads_.load(std::memory_order_relaxed);
  io.rows_read = rows_read_.load(std::memory_order_relaxed);
  io.bytes_read = bytes_read_.load(std::memory_order_relaxed);
  io.rows_written = rows_written_.load(std::memory_order_relaxed);
  io.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  io.read_p50_ms = read_latency_.quantile_ms(0.5);
  io.read_p99_ms = read_latency_.quantile_ms(0.99);
  return io;
}

status rocksdb_rows::read(const std::uint32_t* tables, const std::uint64_t* ids, std::size_t n, float* rows,
                          std::uint8_t* found) const {
  if (n == 0) return status::ok();
  const auto start = std::chrono::steady_clock::now();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  constexpr std::size_t K = format::kRowKeySize;
  std::string keys(n * K, '\0');
  std::vector<rocksdb::Slice> slices(n);
  for (std::size_t i = 0; i < n; ++i) {
    format::encode_row_key(tables[i], ids[i], &keys[i * K]);
    slices[i] = rocksdb::Slice(keys.data() + i * K, K);
  }
  std::vector<rocksdb::PinnableSlice> values(n);
  std::vector<rocksdb::Status> statuses(n);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  db_->MultiGet(ro, db_->DefaultColumnFamily(), n, slices.data(), values.data(), statuses.data(), false);
  std::uint32_t table = 0;
  std::uint64_t id = 0;
  std::uint64_t found_rows = 0, found_bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    found[i] = 0;
    if (statuses[i].IsNotFound()) continue;
    SS_RETURN_IF_ERROR(from_rocks(statuses[i], "reading " + format::describe_key(slices[i].data(), K)));
    status s = format::check_row(slices[i].data(), K, values[i].data(), values[i].size(), row_floats_, &table, &id,
                                 rows + i * row_floats_);
    if (!s) return s.with_context(dir_ + "/live");
    found[i] = 1;
    ++found_rows;
    found_bytes += K + values[i].size();
  }
  reads_.fetch_add(1, std::memory_order_relaxed);
  rows_read_.fetch_add(found_rows, std::memory_order_relaxed);
  bytes_read_.fetch_add(found_bytes, std::memory_order_relaxed);
  read_latency_.record(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return status::ok();
}

result<std::size_t> rocksdb_rows::scan_from(std::uint32_t table, std::uint64_t id, std::size_t max_rows,
                                            const embedding::row_visitor& fn) const {
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return status(errc::unavailable, "rocksdb_rows: the live database is closed");
  std::string from(format::kRowKeySize, '\0');
  format::encode_row_key(table, id, from.data());
  row_scan rows(db_, from);
  return rows.visit(max_rows, row_floats_, dir_ + "/live", fn);
}

status rocksdb_rows::scan(const embedding::row_visitor& fn) {
  // Every row: a page from the first possible key, (0, 0), with no bound.
  auto scanned = scan_from(0, 0, std::numeric_limits<std::size_t>::max(), fn);
  return scanned.is_ok() ? status::ok() : scanned.error();
}

status rocksdb_rows::scan_concurrently(const embedding::row_visitor& fn) {
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return status(errc::unavailable, "rocksdb_rows: the live database is closed");
  return for_each_row_range(db_, split_keys(db_, read_threads()), read_threads(), [&](std::size_t, row_scan& rows) -> status {
    auto visited = rows.visit(std::numeric_limits<std::uint64_t>::max(), row_floats_, dir_ + "/live", fn);
    return visited.is_ok() ? status::ok() : visited.error();
  });
}

std::size_t rocksdb_rows::read_threads() const {
  if (options_.read_threads > 0) return options_.read_threads;
  // The CPUs this process may run on (a container's cpuset), not the machine's.
  cpu_set_t set;
  CPU_ZERO(&set);
  const std::size_t cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<std::size_t>(CPU_COUNT(&set))
                                                                      : std::thread::hardware_concurrency();
  return std::clamp<std::size_t>(cpus, 1, 16);
}

status rocksdb_rows::set_meta(const std::string& key, const std::string& value) {
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  const std::string k = meta_key(key);
  rocksdb::WriteOptions wo;
  wo.sync = true;  // rare and small: make it durable now
  return from_rocks(db_->Put(wo, k, format::encode_small_value(k, value)), "set_meta \"" + key + "\"");
}

result<std::string> rocksdb_rows::get_meta(const std::string& key) const {
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  const std::string k = meta_key(key);
  std::string v;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), k, &v);
  if (s.IsNotFound()) return {errc::not_found, "metadata \"" + key + "\" is not set"};
  SS_RETURN_IF_ERROR(from_rocks(s, "get_meta \"" + key + "\""));
  return format::decode_small_value(k, v.data(), v.size(), dir_ + "/live: metadata \"" + key + "\"");
}

status rocksdb_rows::clear() {
  std::unique_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  const std::string m0(1, format::kMetaPrefix), m1(1, static_cast<char>(format::kMetaPrefix + 1));
  const std::string r0(1, format::kRowPrefix), r1(1, static_cast<char>(format::kRowPrefix + 1));
  rocksdb::WriteBatch b;
  SS_RETURN_IF_ERROR(from_rocks(b.DeleteRange(m0, m1), "clear"));
  SS_RETURN_IF_ERROR(from_rocks(b.DeleteRange(r0, r1), "clear"));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  SS_RETURN_IF_ERROR(from_rocks(db_->Write(wo, &b), "clear"));
  rows_.store(0, std::memory_order_relaxed);
  // Drop the deleted data now, so later scans do not walk over it.
  const rocksdb::Slice lo(m0), hi(r1);
  SS_RETURN_IF_ERROR(from_rocks(db_->CompactRange(rocksdb::CompactRangeOptions(), &lo, &hi), "clear"));
  return status::ok();
}

}  // namespace ss::storage
