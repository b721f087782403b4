// rocksdb_rows, its checkpoints: made from the live database (flushed, scanned, counted and
// hashed), described by a keyed-text manifest, verified record by record, restored into place
// through renames that a crash cannot leave half done, listed and dropped.
#include "ss/storage/rocksdb_rows.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "rocks_status.hpp"
#include "row_scan.hpp"
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

// Reads every record of `db`, checking each one's CRC and shape; counts rows and sums hashes (a
// sum, so the ranges of keys between `splits` are read on threads of their own and added up).
// With `each_row`, hands it every row as it is checked, from those threads at once; `handed` then
// gets how many rows each range handed out (all of them, or those before its error).
status scan_all_records(rocksdb::DB* db, std::uint32_t row_floats, const std::vector<std::string>& splits,
                        std::size_t threads, scan_totals* totals, const embedding::row_visitor* each_row = nullptr,
                        std::vector<std::uint64_t>* handed = nullptr) {
  std::vector<scan_totals> parts(splits.size() + 1);
  status read = read_ranges(splits, threads, [&](std::size_t range, const rocksdb::Slice* lower,
                                                 const rocksdb::Slice* upper) -> status {
    scan_totals& part = parts[range];
    rocksdb::ReadOptions ro;
    ro.verify_checksums = true;
    ro.fill_cache = false;
    ro.readahead_size = std::size_t{2} << 20;
    ro.iterate_upper_bound = upper;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
    std::vector<float> row(each_row != nullptr ? row_floats : 0);
    std::uint32_t table = 0;
    std::uint64_t id = 0;
    for (lower != nullptr ? it->Seek(*lower) : it->SeekToFirst(); it->Valid(); it->Next()) {
      const rocksdb::Slice k = it->key();
      const rocksdb::Slice v = it->value();
      const char kind = k.size() > 0 ? k[0] : '\0';
      if (kind == format::kRowPrefix) {
        SS_RETURN_IF_ERROR(format::check_row(k.data(), k.size(), v.data(), v.size(), row_floats, &table, &id,
                                             each_row != nullptr ? row.data() : nullptr));
        if (each_row != nullptr) (*each_row)(table, id, row.data());
        ++part.rows;
      } else if (kind == format::kMetaPrefix || kind == format::kFormatPrefix) {
        const std::string key = k.ToString();
        auto d = format::decode_small_value(key, v.data(), v.size(), format::describe_key(k.data(), k.size()));
        if (!d) return d.error();
      } else {
        return {errc::corrupt, format::describe_key(k.data(), k.size())};
      }
      part.hash += format::record_hash(k.data(), k.size(), v.data(), v.size());
    }
    return from_rocks(it->status(), "reading its database");
  });
  for (const auto& part : parts) {
    totals->rows += part.rows;
    totals->hash += part.hash;
  }
  if (handed != nullptr) {
    handed->clear();
    for (const auto& part : parts) handed->push_back(part.rows);
  }
  return read;
}

// Hands `unload` the rows scan_all_records handed out: the first handed[i] rows of each range i
// between `splits` (they passed their checks then, and read the same now).
void unload_rows(rocksdb::DB* db, std::uint32_t row_floats, const std::vector<std::string>& splits,
                 const std::vector<std::uint64_t>& handed, std::size_t threads, const embedding::row_visitor& unload) {
  (void)for_each_row_range(db, splits, threads, [&](std::size_t range, row_scan& rows) -> status {
    auto visited = rows.visit(handed[range], row_floats, "a checkpoint", unload);
    return visited.is_ok() ? status::ok() : visited.error();
  });
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
    status s = db ? scan_all_records(db->get(), row_floats_, split_keys(db->get(), read_threads()), read_threads(), &totals)
                   : db.error();
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

result<embedding::checkpoint_info> rocksdb_rows::read_manifest(std::uint64_t id, std::uint32_t row_floats) const {
  if (row_floats == 0) row_floats = row_floats_;
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
  if (m->row_floats != row_floats) {
    return {errc::invalid_argument, "it holds rows of " + std::to_string(m->row_floats) + " floats, " +
                                        (row_floats == row_floats_ ? "this store " : "expected ") +
                                        std::to_string(row_floats)};
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

status rocksdb_rows::verify(std::uint64_t id) const { return check(id, nullptr, nullptr); }

status rocksdb_rows::check(std::uint64_t id, const embedding::row_visitor* load, const embedding::row_visitor* unload,
                           std::uint32_t row_floats, std::uint64_t* rows) const {
  if (row_floats == 0) row_floats = row_floats_;
  const std::string name = "checkpoint " + std::to_string(id);
  const fs::path path = checkpoint_path(id);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {errc::not_found, name + " does not exist (" + path.string() + ")"};
  auto m = read_manifest(id, row_floats);
  if (!m) {
    if (m.error().code() == errc::corrupt) return {errc::corrupt, name + " is corrupt: " + m.error().message()};
    return m.error().with_context(name);
  }
  auto db = open_read_only(path.string());
  if (!db) return {errc::corrupt, name + " is corrupt: " + db.error().message()};
  scan_totals totals;
  const std::vector<std::string> splits = split_keys(db->get(), read_threads());
  std::vector<std::uint64_t> handed;
  status s = scan_all_records(db->get(), row_floats, splits, read_threads(), &totals, load, &handed);
  if (s && totals.rows != m->rows) {
    s = {errc::corrupt, "its manifest promises " + std::to_string(m->rows) + " rows, found " + std::to_string(totals.rows)};
  } else if (s && totals.hash != m->checksum) {
    s = {errc::corrupt, "its content hash " + io::hex(totals.hash, 16) + " differs from its manifest's " +
                            io::hex(m->checksum, 16)};
  }
  if (s) {
    if (rows != nullptr) *rows = totals.rows;
    return status::ok();
  }
  // The rows handed out are not the checkpoint's: taken back.
  if (unload != nullptr) unload_rows(db->get(), row_floats, splits, handed, read_threads(), *unload);
  return {errc::corrupt, name + " is corrupt: " + s.message()};
}

status rocksdb_rows::restore(std::uint64_t id) { return restore_with(id, nullptr, nullptr); }

status rocksdb_rows::restore_loading(std::uint64_t id, const embedding::row_visitor& load, const embedding::row_visitor& unload) {
  return restore_with(id, &load, &unload);
}

status rocksdb_rows::restore_with(std::uint64_t id, const embedding::row_visitor* load, const embedding::row_visitor* unload) {
  SS_RETURN_IF_ERROR(check(id, load, unload));  // the live rows stay untouched if this fails
  status s = swap_in(id);
  if (!s && unload != nullptr) {
    // Verified and loaded, but not made the live rows: the rows handed out are taken back.
    auto db = open_read_only(checkpoint_path(id));
    if (db) {
      unload_rows(db->get(), row_floats_, {}, {~std::uint64_t{0}}, 1, *unload);  // one range: every row
    }
  }
  return s;
}

status rocksdb_rows::swap_in(std::uint64_t id) {
  // Verified: its manifest's row count is the rows it holds, so opening it need not count them.
  auto verified = read_manifest(id);
  if (!verified) return verified.error().with_context("checkpoint " + std::to_string(id));
  const fs::path staging = fs::path(dir_) / "live.restore";
  std::error_code ec;
  fs::remove_all(staging, ec);
  SS_RETURN_IF_ERROR(copy_db_dir(checkpoint_path(id), staging).with_context("restoring checkpoint " + std::to_string(id)));
  return install_staging(verified->rows, "restoring checkpoint " + std::to_string(id));
}

status rocksdb_rows::install_staging(std::uint64_t rows, const std::string& what) {
  const fs::path root(dir_);
  const fs::path live = root / "live", staging = root / "live.restore", old = root / "live.old";
  std::error_code ec;
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
  status s = open_live(rows);
  if (!s) {  // put the old live DB back
    std::error_code ec2;
    fs::remove_all(live, ec2);
    fs::rename(old, live, ec2);
    status reopen = open_live();
    (void)reopen;
    return s.with_context(what);
  }
  fs::remove_all(old, ec);
  return status::ok();
}

namespace {

// Checkpoint database `db`'s row layout ("" when it predates kept layouts).
result<std::string> row_layout_of(rocksdb::DB* db) {
  auto layout = read_format_setting(db, "row_layout", "its database");
  if (!layout) return layout.error();
  return layout->value_or(std::string());
}

// Hands `unload` every row of `db` (at `row_floats` slots), on one thread.
void unload_all(rocksdb::DB* db, std::uint32_t row_floats, const embedding::row_visitor& unload) {
  unload_rows(db, row_floats, {}, {~std::uint64_t{0}}, 1, unload);
}

}  // namespace

result<std::string> rocksdb_rows::checkpoint_row_layout(std::uint64_t id) const {
  const std::string name = "checkpoint " + std::to_string(id);
  auto db = open_read_only(checkpoint_path(id));
  if (!db) return {errc::corrupt, name + " is corrupt: " + db.error().message()};
  auto layout = row_layout_of(db->get());
  if (!layout) return {errc::corrupt, name + " is corrupt: " + layout.error().message()};
  return layout;
}

status rocksdb_rows::restore_converting(std::uint64_t id, const embedding::row_conversion& conversion,
                                        const embedding::row_visitor& load, const embedding::row_visitor& unload) {
  const std::string name = "checkpoint " + std::to_string(id);
  const fs::path path = checkpoint_path(id);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {errc::not_found, name + " does not exist (" + path.string() + ")"};
  // The checkpoint read for its layout and metadata; check() reads its rows.
  auto src = open_read_only(path.string());
  if (!src) return {errc::corrupt, name + " is corrupt: " + src.error().message()};
  auto layout = row_layout_of(src->get());
  if (!layout) return {errc::corrupt, name + " is corrupt: " + layout.error().message()};
  if (*layout != conversion.from_layout)
    return {errc::invalid_argument, name + " holds rows of " + (layout->empty() ? "a layout it does not name" : *layout) +
                                        ", not of " + conversion.from_layout};

  // The converted rows go into a new database, which replaces the live one once complete.
  const fs::path staging_path = fs::path(dir_) / "live.restore";
  fs::remove_all(staging_path, ec);
  rocksdb::Options staging_options = state_->options;
  staging_options.error_if_exists = true;
  rocksdb::DB* raw = nullptr;
  SS_RETURN_IF_ERROR(from_rocks(rocksdb::DB::Open(staging_options, staging_path.string(), &raw),
                                "converting " + name + ": opening " + staging_path.string()));
  std::unique_ptr<rocksdb::DB> staging(raw);
  rocksdb::WriteOptions unlogged;
  unlogged.disableWAL = true;  // flushed and synced before it is swapped in
  std::mutex failure_mu;
  status failure = status::ok();
  std::atomic<bool> failed{false};
  auto fail = [&](status s) {
    std::lock_guard<std::mutex> lock(failure_mu);
    if (!failed.exchange(true)) failure = std::move(s);
  };
  // A row is written, then loaded: the staging database holds exactly the rows `load` was given.
  const embedding::row_visitor convert = [&](std::uint32_t table, std::uint64_t row_id, const float* from) {
    if (failed.load(std::memory_order_relaxed)) return;
    std::vector<float> to(row_floats_);
    if (!conversion.convert(from, to.data())) {
      fail({errc::out_of_range, "row (" + std::to_string(table) + ", " + std::to_string(row_id) + ") " +
                                    conversion.refusal});
      return;
    }
    char key[format::kRowKeySize];
    format::encode_row_key(table, row_id, key);
    std::string value(format::row_value_size(row_floats_), '\0');
    format::encode_row_value(key, sizeof key, to.data(), row_floats_, value.data());
    const rocksdb::Status put = staging->Put(unlogged, rocksdb::Slice(key, sizeof key), value);
    if (!put.ok()) {
      fail(from_rocks(put, "writing " + staging_path.string()));
      return;
    }
    load(table, row_id, to.data());
  };
  std::uint64_t rows = 0;
  status s = check(id, &convert, nullptr, conversion.from_row_floats, &rows);
  if (s && failed.load()) s = failure.with_context("converting " + name);
  if (s) {
    // The checkpoint's metadata (its job, its shard) and this store's format settings.
    rocksdb::WriteBatch rest;
    std::unique_ptr<rocksdb::Iterator> it(src->get()->NewIterator(rocksdb::ReadOptions()));
    const std::string meta(1, format::kMetaPrefix);
    for (it->Seek(meta); it->Valid() && it->key().starts_with(meta); it->Next()) rest.Put(it->key(), it->value());
    s = from_rocks(it->status(), "reading the metadata of " + name);
    put_store_settings(rest);
    rocksdb::WriteOptions synced;
    synced.sync = true;
    if (s) s = from_rocks(staging->Write(synced, &rest), "writing " + staging_path.string());
    rocksdb::FlushOptions wait;
    wait.wait = true;
    if (s) s = from_rocks(staging->Flush(wait), "flushing " + staging_path.string());
  }
  if (!s) {
    // Taken back: the rows the staging database holds are the ones loaded.
    unload_all(staging.get(), row_floats_, unload);
    staging.reset();
    fs::remove_all(staging_path, ec);
    return s;
  }
  SS_RETURN_IF_ERROR(from_rocks(staging->Close(), "closing " + staging_path.string()));
  staging.reset();
  s = install_staging(rows, "converting " + name);
  if (!s) {
    // Every row was loaded: each is taken back converted again.
    unload_all(src->get(), conversion.from_row_floats, [&](std::uint32_t table, std::uint64_t row_id, const float* from) {
      std::vector<float> to(row_floats_);
      if (conversion.convert(from, to.data())) unload(table, row_id, to.data());
    });
    fs::remove_all(staging_path, ec);
  }
  return s;
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
