// Reading the row records of a RocksDB database: one range of keys (row_scan), or all of them by
// ranges on several threads (for_each_row_range); reading and writing its format settings. What
// both halves of rocksdb_rows (the live database, its checkpoints) share. Private to ss_storage.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "key_ranges.hpp"
#include "rocks_status.hpp"
#include "ss/core/embedding/durable_rows.hpp"
#include "ss/storage/record_format.hpp"

namespace ss::storage {

// The row records only (keys from kRowPrefix, or from `from`), checksums verified, read ahead and
// not cached: a full scan or a page of one. Not movable: the iterator holds a pointer to `upper`.
struct row_scan {
  // The rows from key `from` up to key `to` (by default all of them).
  explicit row_scan(rocksdb::DB* db, const std::string& from = std::string(1, format::kRowPrefix),
                    std::string to = std::string(1, static_cast<char>(format::kRowPrefix + 1)))
      : hi(std::move(to)) {
    rocksdb::ReadOptions ro;
    ro.verify_checksums = true;
    ro.fill_cache = false;
    ro.readahead_size = std::size_t{2} << 20;
    ro.iterate_upper_bound = &upper;
    it.reset(db->NewIterator(ro));
    it->Seek(from);
  }
  row_scan(const row_scan&) = delete;
  row_scan& operator=(const row_scan&) = delete;

  // Hands fn each row from here on, at most max_rows: how many, or the first record that fails
  // its check (`where` names the database).
  result<std::uint64_t> visit(std::uint64_t max_rows, std::uint32_t row_floats, const std::string& where,
                              const embedding::row_visitor& fn) {
    std::vector<float> row(row_floats);
    std::uint64_t called = 0;
    for (; called < max_rows && it->Valid(); it->Next()) {
      const rocksdb::Slice k = it->key(), v = it->value();
      std::uint32_t t = 0;
      std::uint64_t i = 0;
      status s = format::check_row(k.data(), k.size(), v.data(), v.size(), row_floats, &t, &i, row.data());
      if (!s) return s.with_context(where);
      fn(t, i, row.data());
      ++called;
    }
    SS_RETURN_IF_ERROR(from_rocks(it->status(), "scanning " + where));
    return called;
  }

  const std::string hi;
  const rocksdb::Slice upper{hi};
  std::unique_ptr<rocksdb::Iterator> it;
};

// Reads db's rows by the ranges of keys between `splits` (split_keys) on `threads` threads:
// fn(range, rows) gets each range's rows, positioned at its first.
inline status for_each_row_range(rocksdb::DB* db, const std::vector<std::string>& splits, std::size_t threads,
                                 const std::function<status(std::size_t range, row_scan& rows)>& fn) {
  const std::string rows_lo(1, format::kRowPrefix), rows_hi(1, static_cast<char>(format::kRowPrefix + 1));
  return read_ranges(splits, threads,
                     [&](std::size_t range, const rocksdb::Slice* lower, const rocksdb::Slice* upper) -> status {
                       // The range's bounds within the rows' keys.
                       const std::string from =
                           lower != nullptr && lower->compare(rows_lo) > 0 ? lower->ToString() : rows_lo;
                       const std::string to = upper != nullptr && upper->compare(rows_hi) < 0 ? upper->ToString() : rows_hi;
                       if (from >= to) return status::ok();
                       row_scan rows(db, from, to);
                       return fn(range, rows);
                     });
}

// The key of format setting `name` ("format", "row_floats", "row_layout").
inline std::string format_key(const std::string& name) { return std::string(1, format::kFormatPrefix) + name; }

// Format setting `name` of `db`, its checksum verified; nullopt when the database has none.
// `where` names the database in errors.
inline result<std::optional<std::string>> read_format_setting(rocksdb::DB* db, const std::string& name,
                                                              const std::string& where) {
  const std::string key = format_key(name);
  std::string v;
  const rocksdb::Status s = db->Get(rocksdb::ReadOptions(), key, &v);
  if (s.IsNotFound()) return std::optional<std::string>();
  SS_RETURN_IF_ERROR(from_rocks(s, "reading " + where));
  auto d = format::decode_small_value(key, v.data(), v.size(), where + ": format setting \"" + name + "\"");
  if (!d) return d.error();
  return std::optional<std::string>(std::move(*d));
}

// Format setting `name` = `value`, into `batch`.
inline void put_format_setting(rocksdb::WriteBatch& batch, const std::string& name, const std::string& value) {
  const std::string key = format_key(name);
  batch.Put(key, format::encode_small_value(key, value));
}

}  // namespace ss::storage
