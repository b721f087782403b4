// Reading a database by ranges of keys on several threads (services/storage/src/key_ranges.hpp):
// the cuts follow the files of the fullest level, and the ranges cover every key once.
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include <catch2/catch.hpp>
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "../../services/storage/src/key_ranges.hpp"
#include "storage_fixture.hpp"

using namespace ss_storage_test;

namespace {

std::string key_of(int i) {
  char k[16];
  std::snprintf(k, sizeof k, "k%08d", i);
  return k;
}

}  // namespace

TEST_CASE("key ranges cut a compacted database into ranges that cover every key once", "[storage]") {
  temp_dir dir;
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = 64 << 10;  // many files in level 1
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(o, dir.path.string(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  constexpr int kKeys = 20000;
  const std::string value(100, 'v');
  for (int i = 0; i < kKeys; ++i) REQUIRE(db->Put(rocksdb::WriteOptions(), key_of(i), value).ok());
  REQUIRE(db->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());

  const auto splits = ss::storage::split_keys(db.get(), 2);  // two readers, four ranges each
  REQUIRE(splits.size() == 7);
  CHECK(std::is_sorted(splits.begin(), splits.end()));
  CHECK(ss::storage::split_keys(db.get(), 1).empty());

  // Four threads over the eight ranges: each key once, in its own range's bounds.
  std::mutex mu;
  std::multiset<std::string> seen;
  std::vector<int> per_range(splits.size() + 1, 0);
  std::atomic<int> out_of_bounds{0};
  const ss::status s = ss::storage::read_ranges(
      splits, 4, [&](std::size_t range, const rocksdb::Slice* lower, const rocksdb::Slice* upper) -> ss::status {
        rocksdb::ReadOptions ro;
        ro.iterate_upper_bound = upper;
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
        std::vector<std::string> keys;
        for (lower != nullptr ? it->Seek(*lower) : it->SeekToFirst(); it->Valid(); it->Next()) {
          if (lower != nullptr && it->key().compare(*lower) < 0) ++out_of_bounds;
          keys.push_back(it->key().ToString());
        }
        std::lock_guard<std::mutex> lock(mu);
        per_range[range] = static_cast<int>(keys.size());
        seen.insert(keys.begin(), keys.end());
        return ss::status::ok();
      });
  REQUIRE(s.is_ok());
  CHECK(out_of_bounds == 0);
  CHECK(seen.size() == kKeys);
  CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == kKeys);
  // About equal: no range holds more than twice its share.
  for (int n : per_range) CHECK(n <= 2 * kKeys / 8);
}

TEST_CASE("key ranges: the first range's error in key order is the one returned, after every range ran",
          "[storage]") {
  const std::vector<std::string> splits{"b", "c", "d"};
  std::atomic<int> ran{0};
  const ss::status s = ss::storage::read_ranges(splits, 2, [&](std::size_t range, const rocksdb::Slice*,
                                                               const rocksdb::Slice*) -> ss::status {
    ++ran;
    if (range == 1 || range == 3) return {ss::errc::corrupt, "range " + std::to_string(range)};
    return ss::status::ok();
  });
  CHECK(ran == 4);
  CHECK(s.message() == "range 1");
}
