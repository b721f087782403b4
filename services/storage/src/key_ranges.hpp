// A database read by several threads at once: its key space cut into ranges of about equal size
// on disk, each read by a thread of its own (one core reads a checkpoint far below what the disk
// gives).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <rocksdb/slice.h>

#include "ss/core/status.hpp"

namespace rocksdb {
class DB;
}

namespace ss::storage {

// Keys, ascending, that cut db's key space for `readers` threads: about four ranges each (so that
// one done early takes another; none for one reader), of about equal bytes on disk, at the
// boundaries of the files of the level that holds the most (a database of few files gives fewer
// ranges). Memtables and the other levels' files are not weighed: their keys fall in whichever
// range holds them.
std::vector<std::string> split_keys(rocksdb::DB* db, std::size_t readers);

// Calls fn(i, lower, upper) for each range i between consecutive `splits` (the first from the start
// of the key space, lower null; the last to its end, upper null) on up to `threads` threads (one:
// the caller's), each taking the next range left. Returns the first range's error, in key order.
using range_reader = std::function<status(std::size_t range, const rocksdb::Slice* lower, const rocksdb::Slice* upper)>;
status read_ranges(const std::vector<std::string>& splits, std::size_t threads, const range_reader& fn);

}  // namespace ss::storage
