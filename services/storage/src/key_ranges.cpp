#include "key_ranges.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>

namespace ss::storage {

std::vector<std::string> split_keys(rocksdb::DB* db, std::size_t readers) {
  std::vector<std::string> splits;
  if (readers < 2) return splits;
  const std::size_t parts = 4 * readers;
  std::vector<rocksdb::LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  // The files of one level past the first do not overlap: the level that holds the most bytes
  // gives the cuts (level 0's files each span anything, and only a database never compacted has
  // nothing else).
  std::map<int, std::uint64_t> level_bytes;
  for (const auto& f : files) level_bytes[f.level] += f.size;
  int level = 0;
  std::uint64_t most = 0;
  for (const auto& [l, bytes] : level_bytes)
    if (l > 0 && bytes > most) level = l, most = bytes;
  files.erase(std::remove_if(files.begin(), files.end(), [level](const auto& f) { return f.level != level; }),
              files.end());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.smallestkey < b.smallestkey; });
  std::uint64_t total = 0;
  for (const auto& f : files) total += f.size;
  // A file that starts past the next k/parts of the bytes starts the next range.
  std::uint64_t before = 0;
  for (const auto& f : files) {
    if (splits.size() + 1 == parts) break;
    if (before > 0 && before >= total * (splits.size() + 1) / parts && (splits.empty() || f.smallestkey > splits.back()))
      splits.push_back(f.smallestkey);
    before += f.size;
  }
  return splits;
}

status read_ranges(const std::vector<std::string>& splits, std::size_t threads, const range_reader& fn) {
  const std::size_t n = splits.size() + 1;
  std::vector<rocksdb::Slice> keys(splits.begin(), splits.end());
  std::vector<status> results(n, status::ok());
  std::atomic<std::size_t> next{0};
  // Each thread takes the next range until none is left; ranges past an error are still read (a
  // range's error is the first in key order only once every range before it was read).
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;)
      results[i] = fn(i, i == 0 ? nullptr : &keys[i - 1], i + 1 == n ? nullptr : &keys[i]);
  };
  std::vector<std::thread> helpers;
  const std::size_t workers = std::clamp<std::size_t>(threads, 1, n);
  helpers.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w) helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
  for (auto& r : results)
    if (!r.is_ok()) return r;
  return status::ok();
}

}  // namespace ss::storage
