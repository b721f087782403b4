// The byte layout of the records rocksdb_rows stores (see rocksdb_rows.hpp for the whole on-disk
// format). Pure functions, no RocksDB: the store, its checkpoint verifier and the tests share them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ss/core/status.hpp"

namespace ss::storage::format {

// The first byte of every key says what the record is, so the kinds never collide.
constexpr char kRowPrefix = 'r';     // 'r' + table (4 bytes BE) + id (8 bytes BE)
constexpr char kMetaPrefix = 'm';    // 'm' + user metadata key (set_meta / get_meta)
constexpr char kFormatPrefix = 'f';  // 'f' + name: the store's own settings ("f" "row_floats", ...)

constexpr std::size_t kRowKeySize = 13;  // 1 + 4 + 8
constexpr std::size_t kCrcSize = 4;
// Version of the record layout and of the checkpoint manifest; stored as 'f' "format".
constexpr std::uint32_t kFormatVersion = 1;

// Writes the 13-byte row key of (table, id) to out.
void encode_row_key(std::uint32_t table, std::uint64_t id, char* out);
// Decodes a row key; false if `key` is not kRowKeySize bytes starting with kRowPrefix.
bool decode_row_key(const char* key, std::size_t n, std::uint32_t* table, std::uint64_t* id);

// Size of a row value: row_floats little-endian floats + the CRC32C.
inline std::size_t row_value_size(std::uint32_t row_floats) { return std::size_t{row_floats} * 4 + kCrcSize; }

// Writes row_value_size(row_floats) bytes to out: the floats little endian, then
// crc32c(key ++ floats) little endian. `key` is the record's full key.
void encode_row_value(const char* key, std::size_t key_size, const float* row, std::uint32_t row_floats,
                      char* out);

// Checks a row record: key shape, value size and CRC. On success decodes the floats into `row`
// (row_floats of them) and the key into table / id. errc::corrupt with a precise reason otherwise
// ("row (3, 12345) fails its checksum", "row (3, 12345) has 60 bytes, expected 72").
status check_row(const char* key, std::size_t key_size, const char* value, std::size_t value_size,
                 std::uint32_t row_floats, std::uint32_t* table, std::uint64_t* id, float* row);

// A non-row record (metadata, format settings): value ++ crc32c(key ++ value), little endian.
std::string encode_small_value(const std::string& key, const std::string& value);
// Checks and strips the CRC; errc::corrupt naming `what` when it fails.
result<std::string> decode_small_value(const std::string& key, const char* value, std::size_t n,
                                       const std::string& what);

// The per-record term of a checkpoint's content hash: hash64(key ++ value) (seeded). A checkpoint's
// hash is the sum (mod 2^64) of this over every record (rows, metadata, format settings), so it
// does not depend on iteration order.
std::uint64_t record_hash(const char* key, std::size_t key_size, const char* value, std::size_t value_size);

// Renders a key for messages: "row (3, 12345)", "metadata \"job\"", "format \"row_floats\"".
std::string describe_key(const char* key, std::size_t n);

}  // namespace ss::storage::format
