// What both halves of rocksdb_rows (the live database, its checkpoints) share. Private to ss_storage.
#pragma once

#include <string>

#include <rocksdb/status.h>

#include "ss/core/status.hpp"

namespace ss::storage {

// A RocksDB status as ours, with `context` in front of RocksDB's text.
inline status from_rocks(const rocksdb::Status& s, const std::string& context) {
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

}  // namespace ss::storage
