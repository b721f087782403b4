// Shared helpers of the storage tests: unique temp dirs, deterministic rows, the two durable_rows
// implementations behind one interface (so the behavioural tests are written once), and a way to
// corrupt one row of a checkpoint in each implementation.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <rocksdb/db.h>

#include "ss/core/embedding/durable_rows.hpp"
#include "ss/core/embedding/memory_rows.hpp"
#include "ss/storage/record_format.hpp"
#include "ss/storage/rocksdb_rows.hpp"

namespace ss_storage_test {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed with everything in it afterwards.
struct temp_dir {
  fs::path path;
  temp_dir() {
    static std::atomic<int> counter{0};
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    path = fs::temp_directory_path() / ("ss-storage-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++) + "-" + std::to_string(now));
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

using row_map = std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<float>>;

// Row `version` of (table, id): exact small floats, different per table, id, version and column.
inline std::vector<float> make_row(std::uint32_t table, std::uint64_t id, int version, std::uint32_t row_floats) {
  std::vector<float> r(row_floats);
  for (std::uint32_t j = 0; j < row_floats; ++j) {
    r[j] = static_cast<float>((id * 31 + table * 7 + j) % 4096) + 0.25f * static_cast<float>(version);
  }
  return r;
}

// Writes rows (tables[i], ids[i]) at `version` in one call, remembering them in *expect.
inline void write_rows(ss::embedding::durable_rows& store, const std::vector<std::uint32_t>& tables,
                       const std::vector<std::uint64_t>& ids, int version, row_map* expect) {
  const std::uint32_t rf = store.row_floats();
  std::vector<float> flat;
  flat.reserve(tables.size() * rf);
  for (std::size_t i = 0; i < tables.size(); ++i) {
    auto r = make_row(tables[i], ids[i], version, rf);
    flat.insert(flat.end(), r.begin(), r.end());
    if (expect != nullptr) (*expect)[{tables[i], ids[i]}] = r;
  }
  const ss::status s = store.write(tables.data(), ids.data(), flat.data(), tables.size());
  REQUIRE(s.is_ok());
}

inline row_map scan_all(ss::embedding::durable_rows& store) {
  row_map out;
  const std::uint32_t rf = store.row_floats();
  std::size_t calls = 0;
  const ss::status s = store.scan([&](std::uint32_t t, std::uint64_t id, const float* row) {
    ++calls;
    out[{t, id}] = std::vector<float>(row, row + rf);
  });
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  REQUIRE(calls == out.size());  // every row once
  return out;
}

// Overwrites one row inside checkpoint `id` of a RocksDB store with a record whose value has one
// byte flipped (written with RocksDB's own API, so RocksDB's block checksums are fine: only the
// record's CRC32C can tell).
inline void flip_byte_in_checkpoint_row(const std::string& checkpoint_dir, std::uint32_t table, std::uint64_t id) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Options o;
  REQUIRE(rocksdb::DB::Open(o, checkpoint_dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  char key[ss::storage::format::kRowKeySize];
  ss::storage::format::encode_row_key(table, id, key);
  std::string v;
  REQUIRE(db->Get(rocksdb::ReadOptions(), rocksdb::Slice(key, sizeof key), &v).ok());
  v[5] = static_cast<char>(v[5] ^ 0x10);
  REQUIRE(db->Put(rocksdb::WriteOptions(), rocksdb::Slice(key, sizeof key), v).ok());
  REQUIRE(db->Close().ok());
}

// Deletes one row from checkpoint `checkpoint_dir` of a RocksDB store (RocksDB's own API: every
// record that is left passes its checks; only the count and the content hash can tell).
inline void delete_checkpoint_row(const std::string& checkpoint_dir, std::uint32_t table, std::uint64_t id) {
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(rocksdb::Options(), checkpoint_dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  char key[ss::storage::format::kRowKeySize];
  ss::storage::format::encode_row_key(table, id, key);
  REQUIRE(db->Delete(rocksdb::WriteOptions(), rocksdb::Slice(key, sizeof key)).ok());
  REQUIRE(db->Close().ok());
}

// The two implementations, as Catch2 template parameters.
struct memory_impl {
  temp_dir dir;  // unused; keeps the two fixtures alike
  std::unique_ptr<ss::embedding::durable_rows> open(std::uint32_t row_floats) {
    return std::make_unique<ss::embedding::memory_rows>(row_floats);
  }
  void corrupt_row(ss::embedding::durable_rows& store, std::uint64_t checkpoint, std::uint32_t table, std::uint64_t id) {
    auto& m = dynamic_cast<ss::embedding::memory_rows&>(store);
    REQUIRE(m.corrupt_checkpoint_row(checkpoint, table, id).is_ok());
  }
};

struct rocks_impl {
  temp_dir dir;
  std::unique_ptr<ss::embedding::durable_rows> open(std::uint32_t row_floats) {
    auto r = ss::storage::rocksdb_rows::open(dir.path.string(), row_floats, ss::storage::rocksdb_rows_options{});
    INFO(r.error().to_string());
    REQUIRE(r.is_ok());
    return std::move(r).value();
  }
  void corrupt_row(ss::embedding::durable_rows& store, std::uint64_t checkpoint, std::uint32_t table, std::uint64_t id) {
    auto& r = dynamic_cast<ss::storage::rocksdb_rows&>(store);
    flip_byte_in_checkpoint_row(r.checkpoint_path(checkpoint), table, id);
  }
};

}  // namespace ss_storage_test
