#include "ss/storage/rocksdb_rows.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "ss/core/io/durable_file.hpp"
#include "ss/core/io/keyed_text.hpp"
#include "ss/storage/record_format.hpp"

namespace ss::storage {
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestName = "SHADOWSYNC-CHECKPOINT";
// The first word of the manifest syntax before keyed text.
constexpr const char* kOldManifestMagic = "shadowsync-checkpoint ";

// Keeps RocksDB from writing LOG files into checkpoints it only reads.
class null_logger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

status from_rocks(const rocksdb::Status& s, const std::string& context) {
  if (s.ok()) return status::ok();
  errc code = errc::internal;
  if (s.IsNotFound()) {
    code = errc::not_found;
  } else if (s.IsCorruption()) {
    code = errc::corrupt;
  } else if (s.IsIOError()) {
    code = errc::io_error;
  } else if (s.IsInvalidArgument()) {
    code = errc::invalid_argument;
  }
  return {code, context + ": " + s.ToString()};
}

std::string meta_key(const std::string& key) { return std::string(1, format::kMetaPrefix) + key; }
std::string format_key(const std::string& name) { return std::string(1, format::kFormatPrefix) + name; }

std::uint64_t dir_bytes(const fs::path& p) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) {
      const auto sz = it->file_size(ec2);
      if (!ec2) total += sz;
    }
  }
  return total;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 20 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What a full scan of a database found.
struct scan_totals {
  std::uint64_t rows = 0;
  std::uint64_t hash = 0;  // sum of format::record_hash over every record
};

// Reads every record of `db`, checking each one's CRC and shape; counts rows and sums hashes.
status scan_all_records(rocksdb::DB* db, std::uint32_t row_floats, scan_totals* totals) {
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  ro.readahead_size = std::size_t{2} << 20;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  std::uint32_t table = 0;
  std::uint64_t id = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    const rocksdb::Slice v = it->value();
    const char kind = k.size() > 0 ? k[0] : '\0';
    if (kind == format::kRowPrefix) {
      SS_RETURN_IF_ERROR(format::check_row(k.data(), k.size(), v.data(), v.size(), row_floats, &table, &id, nullptr));
      ++totals->rows;
    } else if (kind == format::kMetaPrefix || kind == format::kFormatPrefix) {
      const std::string key = k.ToString();
      auto d = format::decode_small_value(key, v.data(), v.size(), format::describe_key(k.data(), k.size()));
      if (!d) return d.error();
    } else {
      return {errc::corrupt, format::describe_key(k.data(), k.size())};
    }
    totals->hash += format::record_hash(k.data(), k.size(), v.data(), v.size());
  }
  return from_rocks(it->status(), "reading its database");
}

rocksdb::Options reader_options() {
  rocksdb::Options o;
  o.create_if_missing = false;
  o.paranoid_checks = true;
  o.info_log = std::make_shared<null_logger>();
  o.max_open_files = 64;
  return o;
}

// A checkpoint database opened read-only.
result<std::unique_ptr<rocksdb::DB>> open_read_only(const std::string& path) {
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s = rocksdb::DB::OpenForReadOnly(reader_options(), path, &raw);
  if (!s.ok()) return {errc::corrupt, "cannot open its database: " + s.ToString()};
  return std::unique_ptr<rocksdb::DB>(raw);
}

struct manifest {
  std::uint32_t version = 0;
  std::uint64_t id = 0;
  std::uint64_t rows = 0;
  std::uint32_t row_floats = 0;
  std::uint64_t hash = 0;
};

// A checkpoint's manifest is a keyed text (core/io/keyed_text.hpp), as a snapshot's MANIFEST is.
std::string render_manifest(const manifest& m) {
  io::keyed_text_writer out("shadowsync shard checkpoint");
  out.add("format", std::to_string(m.version));
  out.add("id", std::to_string(m.id));
  out.add("rows", std::to_string(m.rows));
  out.add("row_floats", std::to_string(m.row_floats));
  out.add("hash", io::hex(m.hash, 16));
  return out.finish();
}

// Parses a manifest; errc::corrupt with the reason (without the "checkpoint N is corrupt" prefix).
result<manifest> parse_manifest(const std::string& text) {
  if (text.rfind(kOldManifestMagic, 0) == 0) {
    return {errc::version_mismatch, "its manifest " + std::string(kManifestName) +
                                        " is in the line syntax of shadowsync builds before 2026-11-25; this build "
                                        "reads 'key = value' manifests (restore it with the build that wrote it)"};
  }
  auto kv = io::keyed_text::parse(text, "its manifest " + std::string(kManifestName));
  if (!kv) return kv.error();
  manifest m;
  SS_RETURN_IF_ERROR(kv->one("format", m.version));
  if (m.version != format::kFormatVersion) {
    return {errc::version_mismatch, "its manifest has format version " + std::to_string(m.version) +
                                        ", this build reads " + std::to_string(format::kFormatVersion)};
  }
  SS_RETURN_IF_ERROR(kv->one("id", m.id));
  SS_RETURN_IF_ERROR(kv->one("rows", m.rows));
  SS_RETURN_IF_ERROR(kv->one("row_floats", m.row_floats));
  SS_RETURN_IF_ERROR(kv->one_hex("hash", m.hash));
  return m;
}

status copy_db_dir(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) return {errc::io_error, "create " + to.string() + ": " + ec.message()};
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == kManifestName || name.rfind("LOG", 0) == 0 || name == "LOCK") continue;
    if (!it->is_regular_file()) continue;
    const fs::path dst = to / name;
    std::error_code lec;
    const bool sst = it->path().extension() == ".sst";
    if (sst) fs::create_hard_link(it->path(), dst, lec);  // SST files are immutable: share them
    if (!sst || lec) {
      fs::copy_file(it->path(), dst, fs::copy_options::overwrite_existing, lec);
      if (lec) return {errc::io_error, "copy " + it->path().string() + ": " + lec.message()};
      SS_RETURN_IF_ERROR(io::sync_file(dst));
    }
  }
  if (ec) return {errc::io_error, "list " + from.string() + ": " + ec.message()};
  return io::sync_directory(to);
}

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
  }
  SS_RETURN_IF_ERROR(opened);
  return store;
}

status rocksdb_rows::open_live() {
  const std::string path = (fs::path(dir_) / "live").string();
  rocksdb::DB* raw = nullptr;
  SS_RETURN_IF_ERROR(from_rocks(rocksdb::DB::Open(state_->options, path, &raw), "opening " + path));
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ReadOptions ro;
  auto read_setting = [&](const std::string& name, std::string* out, bool* found) -> status {
    const std::string key = format_key(name);
    std::string v;
    const rocksdb::Status s = db->Get(ro, key, &v);
    *found = s.ok();
    if (s.IsNotFound()) return status::ok();
    SS_RETURN_IF_ERROR(from_rocks(s, "reading " + path));
    auto d = format::decode_small_value(key, v.data(), v.size(), path + ": format setting \"" + name + "\"");
    if (!d) return d.error();
    *out = *d;
    return status::ok();
  };
  std::string version, floats;
  bool has_version = false, has_floats = false;
  SS_RETURN_IF_ERROR(read_setting("format", &version, &has_version));
  SS_RETURN_IF_ERROR(read_setting("row_floats", &floats, &has_floats));
  if (has_version && version != std::to_string(format::kFormatVersion)) {
    return {errc::version_mismatch, path + " has format version " + version + ", this build reads " +
                                        std::to_string(format::kFormatVersion)};
  }
  if (has_floats && floats != std::to_string(row_floats_)) {
    return {errc::invalid_argument, path + " holds rows of " + floats + " floats, opened for rows of " +
                                        std::to_string(row_floats_) + " floats (another model or optimizer?)"};
  }
  // Count the rows (keys only; scan() and verify() check the records).
  std::uint64_t count = 0;
  {
    rocksdb::ReadOptions cro;
    cro.fill_cache = false;
    cro.readahead_size = std::size_t{2} << 20;
    const std::string lo(1, format::kRowPrefix), hi(1, static_cast<char>(format::kRowPrefix + 1));
    rocksdb::Slice upper(hi);
    cro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(cro));
    for (it->Seek(lo); it->Valid(); it->Next()) ++count;
    SS_RETURN_IF_ERROR(from_rocks(it->status(), "counting the rows of " + path));
  }
  if (!has_version || !has_floats) {
    if (count != 0) return {errc::corrupt, path + " holds rows but no format settings"};
    rocksdb::WriteBatch b;
    const std::string kv = format_key("format"), kf = format_key("row_floats");
    b.Put(kv, format::encode_small_value(kv, std::to_string(format::kFormatVersion)));
    b.Put(kf, format::encode_small_value(kf, std::to_string(row_floats_)));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    SS_RETURN_IF_ERROR(from_rocks(db->Write(wo, &b), "writing the format settings of " + path));
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

status rocksdb_rows::write(const std::uint32_t* tables, const std::uint64_t* ids, const float* rows, std::size_t n) {
  if (n == 0) return status::ok();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  constexpr std::size_t K = format::kRowKeySize;
  std::string keys(n * K, '\0');
  for (std::size_t i = 0; i < n; ++i) format::encode_row_key(tables[i], ids[i], &keys[i * K]);
  // Distinct keys in key order; for a key given twice, the last row wins.
  std::vector<std::uint32_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
  const char* kb = keys.data();
  std::stable_sort(order.begin(), order.end(),
                   [kb](std::uint32_t a, std::uint32_t b) { return std::memcmp(kb + a * K, kb + b * K, K) < 0; });
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 1 < n && std::memcmp(kb + order[i] * K, kb + order[i + 1] * K, K) == 0) continue;  // a later one follows
    order[m++] = order[i];
  }
  order.resize(m);
  std::vector<rocksdb::Slice> slices(m);
  for (std::size_t j = 0; j < m; ++j) slices[j] = rocksdb::Slice(kb + std::size_t{order[j]} * K, K);

  // Which keys are new? Skipped when the store is empty (every key is new then).
  std::uint64_t fresh = m;
  if (rows_.load(std::memory_order_relaxed) != 0) {
    std::vector<rocksdb::PinnableSlice> values(m);
    std::vector<rocksdb::Status> statuses(m);
    rocksdb::ReadOptions ro;
    ro.fill_cache = true;
    db_->MultiGet(ro, db_->DefaultColumnFamily(), m, slices.data(), values.data(), statuses.data(), true);
    fresh = 0;
    for (std::size_t j = 0; j < m; ++j) {
      if (statuses[j].IsNotFound()) {
        ++fresh;
      } else if (!statuses[j].ok()) {
        return from_rocks(statuses[j], "rocksdb_rows::write: checking " +
                                           format::describe_key(slices[j].data(), slices[j].size()));
      }
    }
  }

  const std::size_t vsize = format::row_value_size(row_floats_);
  rocksdb::WriteBatch batch(m * (K + vsize + 8) + 64);
  std::string value(vsize, '\0');
  for (std::size_t j = 0; j < m; ++j) {
    const std::uint32_t i = order[j];
    format::encode_row_value(slices[j].data(), K, rows + std::size_t{i} * row_floats_, row_floats_, value.data());
    SS_RETURN_IF_ERROR(from_rocks(batch.Put(slices[j], value), "rocksdb_rows::write"));
  }
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_writes;
  SS_RETURN_IF_ERROR(from_rocks(db_->Write(wo, &batch), "rocksdb_rows::write"));
  rows_.fetch_add(fresh, std::memory_order_relaxed);
  return status::ok();
}

status rocksdb_rows::scan(const std::function<void(std::uint32_t, std::uint64_t, const float*)>& fn) {
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  ro.fill_cache = false;
  ro.readahead_size = std::size_t{2} << 20;
  const std::string lo(1, format::kRowPrefix), hi(1, static_cast<char>(format::kRowPrefix + 1));
  rocksdb::Slice upper(hi);
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  std::vector<float> row(row_floats_);
  std::uint32_t table = 0;
  std::uint64_t id = 0;
  for (it->Seek(lo); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key(), v = it->value();
    status s = format::check_row(k.data(), k.size(), v.data(), v.size(), row_floats_, &table, &id, row.data());
    if (!s) return s.with_context(dir_ + "/live");
    fn(table, id, row.data());
  }
  return from_rocks(it->status(), "scanning " + dir_ + "/live");
}

result<embedding::checkpoint_info> rocksdb_rows::checkpoint(std::uint64_t id) {
  const fs::path final_dir = checkpoint_path(id);
  const fs::path tmp = final_dir.string() + ".tmp";
  std::error_code ec;
  if (fs::exists(final_dir, ec)) {
    return {errc::invalid_argument, "checkpoint " + std::to_string(id) + " already exists (" + final_dir.string() + ")"};
  }
  fs::remove_all(tmp, ec);
  fs::create_directories(final_dir.parent_path(), ec);
  {
    std::shared_lock lock(db_mu_);
    if (db_ == nullptr) return {errc::unavailable, "rocksdb_rows: the live database is closed"};
    rocksdb::Checkpoint* raw = nullptr;
    SS_RETURN_IF_ERROR(from_rocks(rocksdb::Checkpoint::Create(db_, &raw), "checkpoint " + std::to_string(id)));
    std::unique_ptr<rocksdb::Checkpoint> cp(raw);
    // log_size_for_flush = 0: always flush the memtables first, so the checkpoint is SST files only.
    SS_RETURN_IF_ERROR(from_rocks(cp->CreateCheckpoint(tmp.string(), 0), "checkpoint " + std::to_string(id)));
  }
  // Count and hash what the checkpoint holds, checking every record on the way.
  scan_totals totals;
  {
    auto db = open_read_only(tmp.string());
    status s = db ? scan_all_records(db->get(), row_floats_, &totals) : db.error();
    if (!s) {
      db = result<std::unique_ptr<rocksdb::DB>>(status(errc::internal, "closed"));
      fs::remove_all(tmp, ec);
      return s.with_context("checkpoint " + std::to_string(id) + " not made: the live rows are corrupt");
    }
  }
  manifest m;
  m.version = format::kFormatVersion;
  m.id = id;
  m.rows = totals.rows;
  m.row_floats = row_floats_;
  m.hash = totals.hash;
  SS_RETURN_IF_ERROR(io::write_file_synced(tmp / kManifestName, render_manifest(m)));
  SS_RETURN_IF_ERROR(io::sync_directory(tmp));
  fs::rename(tmp, final_dir, ec);
  if (ec) return {errc::io_error, "rename " + tmp.string() + ": " + ec.message()};
  SS_RETURN_IF_ERROR(io::sync_directory(final_dir.parent_path()));
  embedding::checkpoint_info info;
  info.id = id;
  info.path = final_dir.string();
  info.rows = totals.rows;
  info.bytes = dir_bytes(final_dir);
  info.checksum = totals.hash;
  return info;
}

result<embedding::checkpoint_info> rocksdb_rows::read_manifest(std::uint64_t id) const {
  const fs::path p = fs::path(checkpoint_path(id)) / kManifestName;
  auto text = io::read_file(p);
  if (!text.is_ok()) {
    if (text.error().code() == errc::not_found)
      return {errc::corrupt, "its manifest " + std::string(kManifestName) + " is missing"};
    return text.error();
  }
  auto m = parse_manifest(*text);
  if (!m) return m.error();
  if (m->id != id) return {errc::corrupt, "its manifest names checkpoint " + std::to_string(m->id)};
  if (m->row_floats != row_floats_) {
    return {errc::invalid_argument, "it holds rows of " + std::to_string(m->row_floats) + " floats, this store " +
                                        std::to_string(row_floats_)};
  }
  embedding::checkpoint_info info;
  info.id = id;
  info.path = checkpoint_path(id);
  info.rows = m->rows;
  info.checksum = m->hash;
  return info;
}

result<std::vector<embedding::checkpoint_info>> rocksdb_rows::checkpoints() const {
  std::vector<embedding::checkpoint_info> out;
  const fs::path root = fs::path(dir_) / "checkpoints";
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code dec;
    if (!all_digits(name) || !it->is_directory(dec)) continue;  // skips <id>.tmp
    errno = 0;
    const std::uint64_t id = std::strtoull(name.c_str(), nullptr, 10);
    if (errno != 0) continue;
    embedding::checkpoint_info info;
    auto m = read_manifest(id);
    if (m) info = *m;
    info.id = id;
    info.path = it->path().string();
    info.bytes = dir_bytes(it->path());
    out.push_back(info);
  }
  if (ec) return {errc::io_error, "listing " + root.string() + ": " + ec.message()};
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

status rocksdb_rows::verify(std::uint64_t id) const {
  const std::string name = "checkpoint " + std::to_string(id);
  const fs::path path = checkpoint_path(id);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {errc::not_found, name + " does not exist (" + path.string() + ")"};
  auto m = read_manifest(id);
  if (!m) {
    if (m.error().code() == errc::corrupt) return {errc::corrupt, name + " is corrupt: " + m.error().message()};
    return m.error().with_context(name);
  }
  auto db = open_read_only(path.string());
  if (!db) return {errc::corrupt, name + " is corrupt: " + db.error().message()};
  scan_totals totals;
  status s = scan_all_records(db->get(), row_floats_, &totals);
  if (!s) return {errc::corrupt, name + " is corrupt: " + s.message()};
  if (totals.rows != m->rows) {
    return {errc::corrupt, name + " is corrupt: its manifest promises " + std::to_string(m->rows) + " rows, found " +
                               std::to_string(totals.rows)};
  }
  if (totals.hash != m->checksum) {
    return {errc::corrupt, name + " is corrupt: its content hash " + io::hex(totals.hash, 16) +
                               " differs from its manifest's " + io::hex(m->checksum, 16)};
  }
  return status::ok();
}

status rocksdb_rows::restore(std::uint64_t id) {
  SS_RETURN_IF_ERROR(verify(id));  // the live rows stay untouched if this fails
  const fs::path root(dir_);
  const fs::path live = root / "live", staging = root / "live.restore", old = root / "live.old";
  std::error_code ec;
  fs::remove_all(staging, ec);
  SS_RETURN_IF_ERROR(copy_db_dir(checkpoint_path(id), staging).with_context("restoring checkpoint " + std::to_string(id)));

  std::unique_lock lock(db_mu_);
  close_live();
  fs::remove_all(old, ec);
  fs::rename(live, old, ec);
  if (ec) {
    status reopen = open_live();
    (void)reopen;
    return {errc::io_error, "rename " + live.string() + ": " + ec.message()};
  }
  fs::rename(staging, live, ec);
  if (ec) {
    std::error_code ec2;
    fs::rename(old, live, ec2);
    status reopen = open_live();
    (void)reopen;
    return {errc::io_error, "rename " + staging.string() + ": " + ec.message()};
  }
  SS_RETURN_IF_ERROR(io::sync_directory(root));
  status s = open_live();
  if (!s) {  // put the old live DB back
    std::error_code ec2;
    fs::remove_all(live, ec2);
    fs::rename(old, live, ec2);
    status reopen = open_live();
    (void)reopen;
    return s.with_context("restoring checkpoint " + std::to_string(id));
  }
  fs::remove_all(old, ec);
  return status::ok();
}

status rocksdb_rows::drop(std::uint64_t id) {
  const fs::path path = checkpoint_path(id);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return {errc::not_found, "checkpoint " + std::to_string(id) + " does not exist (" + path.string() + ")"};
  }
  fs::remove_all(path, ec);
  if (ec) return {errc::io_error, "removing " + path.string() + ": " + ec.message()};
  return status::ok();
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

result<embedding::checkpoint_info> rocksdb_rows::latest_valid_checkpoint(std::vector<std::string>* skipped) const {
  auto list = checkpoints();
  if (!list) return list.error();
  if (list->empty()) return {errc::not_found, "no checkpoint in " + (fs::path(dir_) / "checkpoints").string()};
  std::vector<std::string> reasons;
  for (auto it = list->rbegin(); it != list->rend(); ++it) {
    status s = verify(it->id);
    if (s) {
      if (skipped != nullptr) {
        for (auto& r : reasons) skipped->push_back(r + "; using checkpoint " + std::to_string(it->id));
      }
      return *it;
    }
    reasons.push_back(s.message());
  }
  if (skipped != nullptr) {
    for (auto& r : reasons) skipped->push_back(r + "; no valid checkpoint remains");
  }
  return {errc::corrupt, "no valid checkpoint in " + (fs::path(dir_) / "checkpoints").string() + ": " + reasons.front()};
}

}  // namespace ss::storage
